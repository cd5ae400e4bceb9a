/* The BrainScript parser's errors: brackets, members, expressions, lexical errors and the
 * depth limits, each with its exact FILE:LINE:COL message; part of tests/test_bs_parse. */
#include "test_bs_parse.h"

START_TEST(bracket_errors)
{
    err_is("x = f (a, b\ny = 2",
           "t.bs:1:12: error: expected ',' or ')' to close the '(' at 1:7, found end of line");
    err_is("x = (1 + 2",
           "t.bs:1:11: error: expected ')' to close the '(' at 1:5, found end of text");
    err_is("x = F {a b}",
           "t.bs:1:10: error: expected ',' or '}' to close the '{' at 1:7, found 'b'");
    err_is("a = [ b = 1",
           "t.bs:1:12: error: expected ']' to close the '[' at 1:5, found end of text");
    err_is("a = [ b = 1 }", "t.bs:1:13: error: expected ']' to close the '[' at 1:5, found '}'");
    err_is("a = x[1", "t.bs:1:8: error: expected ']' to close the '[' at 1:6, found end of text");
    err_is("a = 1 ]", "t.bs:1:7: error: unexpected ']' (nothing to close)");
    err_is("a = [| x ; y", "t.bs:1:13: error: expected ';' or '|]' to close the '[|' at 1:5, found "
                           "end of text");
    err_is("a = [| x y |]",
           "t.bs:1:10: error: expected ';' or '|]' to close the '[|' at 1:5, found "
           "'y'");
    err_is("a = (1\nb = \"x", "t.bs:1:7: error: expected ')' to close the '(' at 1:5, found end of "
                              "line");
}
END_TEST

START_TEST(member_errors)
{
    err_is("a 1", "t.bs:1:3: error: expected '=' after 'a', found '1'");
    err_is("a\nb = 1", "t.bs:1:2: error: expected '=' after 'a', found end of line");
    err_is("a == 1", "t.bs:1:3: error: expected '=' after 'a', found '=='");
    err_is("a = 1 2",
           "t.bs:1:7: error: expected an operator, ';' or a new line after the value of 'a', "
           "found '2'");
    err_is("a =", "t.bs:1:4: error: expected an expression after '=', found end of text");
    err_is("a = \n\n", "t.bs:1:4: error: expected an expression after '=', found end of text");
    err_is("a = )", "t.bs:1:5: error: expected an expression after '=', found ')'");
    err_is("if = 1", "t.bs:1:1: error: expected a member name, found 'if'");
    err_is("a = 1\n2", "t.bs:2:1: error: expected a member name, found '2'");
    err_is("a = 1; \"s\"", "t.bs:1:8: error: expected a member name, found the string \"s\"");
    err_is("f (a, 1) = a", "t.bs:1:7: error: expected a parameter name, found '1'");
    err_is("f (a) a", "t.bs:1:7: error: expected '=' after the parameters of 'f', found 'a'");
    err_is("f {a,} = a", "t.bs:1:6: error: expected a parameter name, found '}'");
    err_is("a[1:2..3] = 0", "t.bs:1:3: error: expected the index's name in the array definition "
                            "'a[i:first..last]', found '1'");
    err_is("a[i 1..3] = 0",
           "t.bs:1:5: error: expected ':' after the index 'i' (NAME[i:first..last] = ...), found "
           "'1'");
    err_is("a[i:1:3] = 0", "t.bs:1:6: error: expected '..' between the first and the last index, "
                           "found ':'");
    err_is("a[i:1..3 = 0", "t.bs:1:10: error: expected ']' to close the '[' at 1:2, found '='");
    err_is("a[i:1..3] i", "t.bs:1:11: error: expected '=' after the array definition 'a[...]', "
                          "found 'i'");
}
END_TEST

START_TEST(expression_errors)
{
    err_is("x = f(a,)", "t.bs:1:9: error: expected an expression after ',', found ')'");
    err_is("x = f(a, b = )", "t.bs:1:14: error: expected an expression after '=', found ')'");
    err_is("x = if a > 0 1 else 2",
           "t.bs:1:14: error: expected 'then' after the condition of the 'if' at 1:5, found '1'");
    err_is("x = if a then b",
           "t.bs:1:16: error: expected 'else' to complete the 'if' at 1:5, found end of text");
    err_is("x = a < b < c", "t.bs:1:11: error: '<' cannot follow a comparison (comparisons do not "
                            "chain; use '&&')");
    err_is("x = a.", "t.bs:1:7: error: expected a member name after '.', found end of text");
    err_is("x = a.(b)", "t.bs:1:7: error: expected a member name after '.', found '('");
    err_is("x = a.1", "t.bs:1:6: error: expected an operator, ';' or a new line after the value "
                      "of 'x', found '.1'");
    err_is("x = new 3", "t.bs:1:9: error: expected a type name after 'new', found '3'");
    err_is("x = new X (a)", "t.bs:1:11: error: expected '[' after 'new X', found '('");
    err_is("x = 1 + * 2", "t.bs:1:9: error: expected an expression after '+', found '*'");
    err_is("x = y => ", "t.bs:1:9: error: expected an expression after '=>', found end of text");
}
END_TEST

START_TEST(lexical_errors)
{
    err_is("a = 1e", "t.bs:1:5: error: bad number '1e' (no digits after 'e')");
    err_is("a = 2E+", "t.bs:1:5: error: bad number '2E+' (no digits after 'E')");
    err_is("a = 12abc", "t.bs:1:5: error: bad number '12abc'");
    err_is("a = 1e999", "t.bs:1:5: error: number '1e999' is out of range");
    err_is("s = \"abc", "t.bs:1:5: error: unterminated string (no closing \" on its line)");
    err_is("s = 'abc\n'", "t.bs:1:5: error: unterminated string (no closing ' on its line)");
    err_is("a = 1 /* x\n y", "t.bs:1:7: error: unterminated comment (no closing '*/')");
    err_is("a = $x + 1", "t.bs:1:5: error: unterminated variable '$x' (no closing '$')");
    err_is("a = $ x$", "t.bs:1:5: error: expected a name after '$' (a variable is written $NAME$)");
    err_is("a = b @ c", "t.bs:1:7: error: unexpected character '@'");
    err_is("a = b & c", "t.bs:1:7: error: unexpected character '&' (did you mean '&&'?)");
    err_is("a = \xC3\xA9", "t.bs:1:5: error: unexpected character '\xC3\xA9'");
    err_is("a = \x01", "t.bs:1:5: error: unexpected character '\\x01'");
    err_is("a = \xFF", "t.bs:1:5: error: unexpected character '\\xFF'");
    err_is_n("a = 1\0", 6, "t.bs:1:6: error: unexpected NUL byte");
    err_is_n("s = 'a\0b'", 9, "t.bs:1:7: error: unexpected NUL byte");
    err_is_n("a = 1 # x\0\n", 11, "t.bs:1:10: error: unexpected NUL byte");
    err_is_n("a = 1 /* \0 */", 13, "t.bs:1:10: error: unexpected NUL byte");
    /* a lexical error after a syntax error is not reached */
    err_is("a = 1 2 @", "t.bs:1:7: error: expected an operator, ';' or a new line after the "
                        "value of 'a', found '2'");
}
END_TEST

static char *repeat(const char *head, const char *unit, int count, const char *tail)
{
    size_t n = strlen(head) + strlen(unit) * (size_t)count + strlen(tail) + 1;
    char *s = malloc(n);
    ck_assert_ptr_nonnull(s);
    strcpy(s, head);
    for (int k = 0; k < count; k++)
        strcat(s, unit);
    strcat(s, tail);
    return s;
}

START_TEST(depth_limits)
{
    char *ok = repeat("a = ", "(", 199, "1");
    char *ok2 = repeat(ok, ")", 199, "");
    struct bs_tree *t = parse_ok(ok2);
    ck_assert_str_eq(shape(t, "a"), "1");
    bs_tree_free(t);
    free(ok);
    free(ok2);

    char *parens = repeat("a = ", "(", 300, "1");
    err_is(parens, "t.bs:1:205: error: nesting deeper than 200 levels");
    char *minus = repeat("a = ", "-", 300, "1");
    err_is(minus, "t.bs:1:204: error: nesting deeper than 200 levels");
    char *records = repeat("a = ", "[b = ", 300, "1");
    err_is(records, "t.bs:1:1005: error: nesting deeper than 200 levels");
    char *calls = repeat("a = ", "f(", 300, "");
    err_is(calls, "t.bs:1:405: error: nesting deeper than 200 levels");
    char *sum = repeat("a = 1", " + 1", 1200, "");
    err_is(sum, "t.bs:1:5: error: expression too deep (more than 1000 levels)");
    free(parens);
    free(minus);
    free(records);
    free(calls);
    free(sum);
}
END_TEST

TCase *bs_parse_error_tcase(void)
{
    TCase *x = tcase_create("errors");
    tcase_set_timeout(x, 60);
    tcase_add_test(x, bracket_errors);
    tcase_add_test(x, member_errors);
    tcase_add_test(x, expression_errors);
    tcase_add_test(x, lexical_errors);
    tcase_add_test(x, depth_limits);
    return x;
}
