/* The BrainScript parser (parsers/bs*): tree shapes of CNTK's own network descriptions,
 * precedence, lambdas and function definitions, the newline rule, positions, and the exact
 * text of every error message. */
#include <stdarg.h>

#include "parsers/bs.h"
#include "testutil.h"

/* ------------------------------------------------------------------ helpers */

struct sbuf {
    char s[8192];
    size_t n;
};

__attribute__((format(printf, 2, 3))) static void put(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->n = b->n + (size_t)k < sizeof b->s ? b->n + (size_t)k : sizeof b->s - 1;
}

static void dump_node(struct sbuf *b, const struct bs_node *n);

static void dump_items(struct sbuf *b, const struct bs_node *n, const char *sep)
{
    for (size_t k = 0; k < n->nitems; k++) {
        put(b, "%s", k ? sep : "");
        dump_node(b, n->items[k]);
    }
}

/* An s-expression: (op a b), (call f args), (call{} F args), (fn (params) body), (: items),
 * (index a b), (. a name), (if a b c), [members] or Name[members], $var$, "str". */
static void dump_node(struct sbuf *b, const struct bs_node *n)
{
    switch (n->kind) {
    case BS_NUM: put(b, "%g", n->num); break;
    case BS_STR: put(b, "\"%s\"", n->str); break;
    case BS_BOOL: put(b, "%s", n->num ? "true" : "false"); break;
    case BS_ID: put(b, "%s", n->str); break;
    case BS_VAR: put(b, "$%s$", n->str); break;
    case BS_RECORD:
        put(b, "%s[", n->str ? n->str : "");
        dump_items(b, n, " ");
        put(b, "]");
        break;
    case BS_DEF:
        put(b, "%s=", n->str);
        dump_node(b, n->a);
        break;
    case BS_LAMBDA:
        put(b, "(fn (");
        dump_items(b, n, " ");
        put(b, ") ");
        dump_node(b, n->a);
        put(b, ")");
        break;
    case BS_ARRAY:
        put(b, "(: ");
        dump_items(b, n, " ");
        put(b, ")");
        break;
    case BS_CALL:
        put(b, "(call%s ", n->num ? "{}" : "");
        dump_node(b, n->a);
        put(b, "%s", n->nitems ? " " : "");
        dump_items(b, n, " ");
        put(b, ")");
        break;
    case BS_INDEX:
        put(b, "(index ");
        dump_node(b, n->a);
        put(b, " ");
        dump_node(b, n->b);
        put(b, ")");
        break;
    case BS_DOT:
        put(b, "(. ");
        dump_node(b, n->a);
        put(b, " %s)", n->str);
        break;
    case BS_IF:
        put(b, "(if ");
        dump_node(b, n->a);
        put(b, " ");
        dump_node(b, n->b);
        put(b, " ");
        dump_node(b, n->c);
        put(b, ")");
        break;
    case BS_BINOP:
        put(b, "(%s ", n->op);
        dump_node(b, n->a);
        put(b, " ");
        dump_node(b, n->b);
        put(b, ")");
        break;
    case BS_UNOP:
        put(b, "(%s ", n->op);
        dump_node(b, n->a);
        put(b, ")");
        break;
    }
}

static const char *dump(const struct bs_node *n)
{
    static struct sbuf b;
    b.n = 0;
    b.s[0] = '\0';
    dump_node(&b, n);
    return b.s;
}

/* Parse text (copied into a buffer of exactly len bytes, so that reading past it is caught)
 * as file name at line:col. */
static int parse_at(const char *name, const char *text, size_t len, int line, int col,
                    struct bs_tree **t, struct pt_err *e)
{
    char *copy = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, text, len);
    pt_err_clear(e);
    int rc = bs_parse(copy, len, name, line, col, t, e);
    free(copy);
    return rc;
}

static struct bs_tree *parse_ok_at(const char *text, int line, int col)
{
    struct pt_err e;
    struct bs_tree *t = NULL;
    int rc = parse_at("t.bs", text, strlen(text), line, col, &t, &e);
    ck_assert_msg(rc == 0, "unexpected error: %s", e.msg);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(bs_tree_root(t)->kind, BS_RECORD);
    return t;
}

static struct bs_tree *parse_ok(const char *text)
{
    return parse_ok_at(text, 1, 1);
}

/* The member `name` (a BS_DEF) of a record; fails the test when there is none. */
static const struct bs_node *member(const struct bs_node *rec, const char *name)
{
    ck_assert_int_eq(rec->kind, BS_RECORD);
    for (size_t k = 0; k < rec->nitems; k++) {
        ck_assert_int_eq(rec->items[k]->kind, BS_DEF);
        if (strcmp(rec->items[k]->str, name) == 0)
            return rec->items[k];
    }
    ck_abort_msg("no member %s", name);
    return NULL;
}

/* The value of member `name` of the root, as an s-expression. */
static const char *shape(struct bs_tree *t, const char *name)
{
    return dump(member(bs_tree_root(t), name)->a);
}

#define AT(n, l, c)                                                                                \
    do {                                                                                           \
        ck_assert_int_eq((n)->line, l);                                                            \
        ck_assert_int_eq((n)->col, c);                                                             \
    } while (0)

static void err_is_n(const char *text, size_t len, const char *expected)
{
    struct pt_err e;
    struct bs_tree *t = (struct bs_tree *)1;
    int rc = parse_at("t.bs", text, len, 1, 1, &t, &e);
    ck_assert_int_eq(rc, PT_EUSER);
    ck_assert_int_eq(e.code, PT_EUSER);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(e.msg, expected);
}

static void err_is(const char *text, const char *expected)
{
    err_is_n(text, strlen(text), expected);
}

/* ------------------------------------------------------------------ CNTK's examples */

static const char logistic[] = "        SDim = $dimension$\n"
                               "        LDim = 1\n"
                               "        features = Input (SDim)\n"
                               "        labels   = Input (LDim)\n"
                               "        b = Parameter (LDim, 1)     # bias\n"
                               "        w = Parameter (LDim, SDim)  # weights\n"
                               "        p = Sigmoid (w * features + b)\n"
                               "        lr = Logistic (labels, p)\n"
                               "        err = SquareError (labels, p)\n"
                               "        featureNodes    = (features)\n"
                               "        labelNodes      = (labels)\n"
                               "        criterionNodes  = (lr)\n"
                               "        evaluationNodes = (err)\n"
                               "        outputNodes     = (p)\n";

static const char lstm[] =
    "        model = Sequential (\n"
    "            EmbeddingLayer {embDim} :                            # embedding\n"
    "            RecurrentLSTMLayer {hiddenDim, goBackwards=false} :  # LSTM\n"
    "            DenseLayer {labelDim}                                # output layer\n"
    "        )\n"
    "        query = Input {inputDim, isSparse=true}\n"
    "        z = model (query)\n"
    "        ce   = CrossEntropyWithSoftmax (slotLabels, z)\n"
    "        errs = ClassificationError     (slotLabels, z)\n"
    "        featureNodes    = (query)\n"
    "        criterionNodes  = (ce)\n"
    "        DNNSigmoidLayer (inDim, outDim, x, parmScale) = [\n"
    "            W = Parameter (outDim, inDim, init=\"uniform\", initValueScale=parmScale)\n"
    "            b = Parameter (outDim, 1, init=\"uniform\", initValueScale=parmScale)\n"
    "            y = Sigmoid (W * x + b)\n"
    "        ].y\n"
    "        h1 = DNNSigmoidLayer (featDim, hiddenDim, featNorm, 1)\n"
    "        f = x => if x > 0 then x else -x\n"
    "        g (x, y = 2) = x .* y - 1 / 2\n"
    "        arr = (1 : 2 : 3)\n"
    "        q = arr[1]\n"
    "        BiLSTM = { fwd = RecurrentLSTMLayer {100}; bwd = RecurrentLSTMLayer {100, "
    "goBackwards=true} }\n"
    "        z2 = !(a == b) || c >= d && e < 0.5e-1\n"
    "        s = 'single' + \"double\"\n";

START_TEST(logistic_regression)
{
    struct bs_tree *t = parse_ok_at(logistic, 10, 1);
    const struct bs_node *root = bs_tree_root(t);
    struct sbuf names = {.n = 0};
    for (size_t k = 0; k < root->nitems; k++)
        put(&names, "%s%s", k ? " " : "", root->items[k]->str);
    ck_assert_str_eq(names.s, "SDim LDim features labels b w p lr err featureNodes labelNodes "
                              "criterionNodes evaluationNodes outputNodes");
    ck_assert_str_eq(shape(t, "SDim"), "$dimension$");
    ck_assert_int_eq(member(root, "SDim")->a->kind, BS_VAR);
    ck_assert_str_eq(shape(t, "LDim"), "1");
    ck_assert_str_eq(shape(t, "features"), "(call Input SDim)");
    ck_assert_str_eq(shape(t, "b"), "(call Parameter LDim 1)");
    ck_assert_str_eq(shape(t, "w"), "(call Parameter LDim SDim)");
    ck_assert_str_eq(shape(t, "p"), "(call Sigmoid (+ (* w features) b))");
    ck_assert_str_eq(shape(t, "lr"), "(call Logistic labels p)");
    ck_assert_str_eq(shape(t, "err"), "(call SquareError labels p)");
    ck_assert_str_eq(shape(t, "featureNodes"), "features");
    ck_assert_str_eq(shape(t, "outputNodes"), "p");
    ck_assert_int_eq(member(root, "featureNodes")->a->kind, BS_ID); /* no node for parens */

    const struct bs_node *p = member(root, "p");
    ck_assert_str_eq(p->file, "t.bs");
    AT(root, 10, 1);
    AT(member(root, "SDim"), 10, 9);
    AT(member(root, "SDim")->a, 10, 16);
    AT(p, 16, 9);
    AT(p->a, 16, 13);           /* the call: its callee */
    AT(p->a->items[0], 16, 22); /* w * features + b starts at w */
    AT(p->a->items[0]->a, 16, 22);
    AT(p->a->items[0]->b, 16, 37);
    ck_assert_int_eq(p->a->num, 0);
    bs_tree_free(t);
}
END_TEST

START_TEST(lstm_and_functions)
{
    struct bs_tree *t = parse_ok(lstm);
    const struct bs_node *root = bs_tree_root(t);
    ck_assert_uint_eq(root->nitems, 16);
    ck_assert_str_eq(
        shape(t, "model"),
        "(call Sequential (: (call{} EmbeddingLayer embDim) (call{} RecurrentLSTMLayer "
        "hiddenDim goBackwards=false) (call{} DenseLayer labelDim)))");
    const struct bs_node *arr = member(root, "model")->a->items[0];
    ck_assert_int_eq(arr->kind, BS_ARRAY);
    ck_assert_uint_eq(arr->nitems, 3);
    AT(arr, 2, 13);
    ck_assert_int_eq(arr->items[1]->num, 1);
    ck_assert_int_eq(arr->items[1]->items[1]->kind, BS_DEF);
    ck_assert_int_eq(arr->items[1]->items[1]->a->kind, BS_BOOL);
    AT(arr->items[1]->items[1], 3, 44);

    ck_assert_str_eq(shape(t, "query"), "(call{} Input inputDim isSparse=true)");
    ck_assert_str_eq(shape(t, "z"), "(call model query)");
    ck_assert_str_eq(shape(t, "errs"), "(call ClassificationError slotLabels z)");
    ck_assert_str_eq(shape(t, "criterionNodes"), "ce");
    ck_assert_str_eq(shape(t, "DNNSigmoidLayer"),
                     "(fn (inDim outDim x parmScale) (. [W=(call Parameter outDim inDim "
                     "init=\"uniform\" initValueScale=parmScale) b=(call Parameter outDim 1 "
                     "init=\"uniform\" initValueScale=parmScale) y=(call Sigmoid (+ (* W x) b))] "
                     "y))");
    const struct bs_node *dnn = member(root, "DNNSigmoidLayer");
    AT(dnn, 12, 9);
    ck_assert_int_eq(dnn->a->kind, BS_LAMBDA);
    AT(dnn->a, 12, 25);
    ck_assert_int_eq(dnn->a->a->kind, BS_DOT);
    AT(dnn->a->a, 12, 57);
    ck_assert_ptr_null(dnn->a->a->a->str);
    AT(member(dnn->a->a->a, "y"), 15, 13);
    ck_assert_str_eq(shape(t, "h1"), "(call DNNSigmoidLayer featDim hiddenDim featNorm 1)");
    AT(member(root, "h1"), 17, 9);

    ck_assert_str_eq(shape(t, "f"), "(fn (x) (if (> x 0) x (- x)))");
    AT(member(root, "f")->a, 18, 13);
    AT(member(root, "f")->a->a, 18, 18);
    ck_assert_str_eq(shape(t, "g"), "(fn (x y=2) (- (.* x y) (/ 1 2)))");
    const struct bs_node *g = member(root, "g")->a;
    ck_assert_int_eq(g->items[0]->kind, BS_ID);
    ck_assert_int_eq(g->items[1]->kind, BS_DEF);
    ck_assert_str_eq(shape(t, "arr"), "(: 1 2 3)");
    ck_assert_str_eq(shape(t, "q"), "(index arr 1)");
    ck_assert_str_eq(shape(t, "BiLSTM"), "[fwd=(call{} RecurrentLSTMLayer 100) "
                                         "bwd=(call{} RecurrentLSTMLayer 100 goBackwards=true)]");
    ck_assert_int_eq(member(root, "BiLSTM")->a->kind, BS_RECORD);
    ck_assert_str_eq(shape(t, "z2"), "(|| (! (== a b)) (&& (>= c d) (< e 0.05)))");
    ck_assert_str_eq(shape(t, "s"), "(+ \"single\" \"double\")");
    AT(member(root, "s")->a, 24, 13);
    AT(member(root, "s")->a->b, 24, 24);
    bs_tree_free(t);
}
END_TEST

/* ------------------------------------------------------------------ grammar */

START_TEST(precedence)
{
    struct bs_tree *t = parse_ok("a = 1 + 2 * 3 - 4 / 5 .* 6\n"
                                 "b = x || y && z || w\n"
                                 "c = -x * -y\n"
                                 "d = !a == b\n"
                                 "e = p : q + 1 : r.s\n"
                                 "f = (1 + 2) * 3\n"
                                 "g = x != y && y <= z\n"
                                 "h = - - + x\n"
                                 "i = if a then b else c : d\n");
    ck_assert_str_eq(shape(t, "a"), "(- (+ 1 (* 2 3)) (.* (/ 4 5) 6))");
    ck_assert_str_eq(shape(t, "b"), "(|| (|| x (&& y z)) w)");
    ck_assert_str_eq(shape(t, "c"), "(* (- x) (- y))");
    ck_assert_str_eq(shape(t, "d"), "(== (! a) b)");
    ck_assert_str_eq(shape(t, "e"), "(: p (+ q 1) (. r s))");
    ck_assert_str_eq(shape(t, "f"), "(* (+ 1 2) 3)");
    AT(member(bs_tree_root(t), "f")->a, 6, 5); /* the '(' is its first token */
    AT(member(bs_tree_root(t), "f")->a->a, 6, 6);
    ck_assert_str_eq(shape(t, "g"), "(&& (!= x y) (<= y z))");
    ck_assert_str_eq(shape(t, "h"), "(- (- (+ x)))");
    ck_assert_str_eq(shape(t, "i"), "(if a b (: c d))");
    bs_tree_free(t);
}
END_TEST

START_TEST(lambdas)
{
    struct bs_tree *t = parse_ok("a = () => 1\n"
                                 "b = (x, y) => x + y\n"
                                 "c = x => y => x\n"
                                 "d = (x) => x\n"
                                 "e = (x)\n"
                                 "f = Map (x => x * 2, l)\n");
    ck_assert_str_eq(shape(t, "a"), "(fn () 1)");
    ck_assert_str_eq(shape(t, "b"), "(fn (x y) (+ x y))");
    ck_assert_str_eq(shape(t, "c"), "(fn (x) (fn (y) x))");
    ck_assert_str_eq(shape(t, "d"), "(fn (x) x)");
    ck_assert_str_eq(shape(t, "e"), "x");
    ck_assert_str_eq(shape(t, "f"), "(call Map (fn (x) (* x 2)) l)");
    AT(member(bs_tree_root(t), "b")->a, 2, 5);
    AT(member(bs_tree_root(t), "b")->a->items[1], 2, 9);
    bs_tree_free(t);
    err_is("g = (x, y)\n", "t.bs:1:7: error: expected ')' to close the '(' at 1:5, found ','");
}
END_TEST

START_TEST(definitions_and_records)
{
    struct bs_tree *t = parse_ok("F {a, b=1} = a + b\n"
                                 "G () = 0\n"
                                 "r = [ x = 1 ; y = [ z = 2 ] ].y.z\n"
                                 "n = new ComputationNode [ operation = 'Plus' ]\n"
                                 "e = []\n"
                                 "c = f(1)(2){3}[4]\n"
                                 "v = F {}\n"
                                 "a=1;b=2,c2=3 d=4;;\n");
    const struct bs_node *root = bs_tree_root(t);
    ck_assert_str_eq(shape(t, "F"), "(fn (a b=1) (+ a b))");
    AT(member(root, "F")->a, 1, 3);
    ck_assert_str_eq(shape(t, "G"), "(fn () 0)");
    ck_assert_str_eq(shape(t, "r"), "(. (. [x=1 y=[z=2]] y) z)");
    ck_assert_str_eq(shape(t, "n"), "ComputationNode[operation=\"Plus\"]");
    AT(member(root, "n")->a, 4, 5);
    ck_assert_str_eq(shape(t, "e"), "[]");
    ck_assert_str_eq(shape(t, "c"), "(index (call{} (call (call f 1) 2) 3) 4)");
    ck_assert_str_eq(shape(t, "v"), "(call{} F)");
    ck_assert_str_eq(shape(t, "d"), "4");
    ck_assert_str_eq(shape(t, "c2"), "3");
    ck_assert_uint_eq(root->nitems, 11);
    bs_tree_free(t);
}
END_TEST

START_TEST(newline_rule)
{
    struct bs_tree *t = parse_ok("a = f\n"
                                 "b = (1)\n"
                                 "c = [x = 1]\n"
                                 "  .x\n"
                                 "d = 1\n"
                                 "  + 2\n"
                                 "e = Sequential (\n"
                                 "  A :\n"
                                 "  B\n"
                                 ")\n"
                                 "g = x [1]\n"
                                 "i = F { k = 1 }\n");
    ck_assert_str_eq(shape(t, "a"), "f");
    ck_assert_str_eq(shape(t, "b"), "1");
    ck_assert_str_eq(shape(t, "c"), "(. [x=1] x)");
    ck_assert_str_eq(shape(t, "d"), "(+ 1 2)");
    ck_assert_str_eq(shape(t, "e"), "(call Sequential (: A B))");
    ck_assert_str_eq(shape(t, "g"), "(index x 1)");
    ck_assert_str_eq(shape(t, "i"), "(call{} F k=1)");
    bs_tree_free(t);
    err_is("a = f\n(x)\n", "t.bs:2:1: error: expected a member name, found '(' (a '(' that "
                           "starts a line does not continue the line before)");
    err_is("h = F\n{ k = 1 }.k\n", "t.bs:2:1: error: expected a member name, found '{' (a '{' "
                                   "that starts a line does not continue the line before)");
}
END_TEST

START_TEST(literals_and_comments)
{
    struct bs_tree *t = parse_ok("a = 1 # hash\n"
                                 "b = 2 // slashes\n"
                                 "c = /* two\n"
                                 "lines */ 3 /* x */ d = .5\n"
                                 "e = 1e-3\n"
                                 "f = 2.\n"
                                 "g = 1.5E+2\n"
                                 "h = ''\n"
                                 "i = \"it's\"\n"
                                 "j = 'say \"hi\"'\n"
                                 "k = true\n"
                                 "l = false\n"
                                 "m = 1.e2 + 7.0\n"
                                 "n = 2.*x\n"
                                 "o = 10/2/5\n"
                                 "p = '\xC3\xA9#//'\n");
    const struct bs_node *root = bs_tree_root(t);
    ck_assert_str_eq(shape(t, "a"), "1");
    ck_assert_str_eq(shape(t, "b"), "2");
    ck_assert_str_eq(shape(t, "c"), "3");
    AT(member(root, "c"), 3, 1);
    AT(member(root, "c")->a, 4, 10);
    AT(member(root, "d"), 4, 20);
    ck_assert_double_eq(member(root, "d")->a->num, 0.5);
    ck_assert_double_eq_tol(member(root, "e")->a->num, 1e-3, 1e-15);
    ck_assert_double_eq(member(root, "f")->a->num, 2.0);
    ck_assert_double_eq(member(root, "g")->a->num, 150.0);
    ck_assert_str_eq(shape(t, "h"), "\"\"");
    ck_assert_str_eq(shape(t, "i"), "\"it's\"");
    ck_assert_str_eq(shape(t, "j"), "\"say \"hi\"\"");
    ck_assert_int_eq(member(root, "k")->a->kind, BS_BOOL);
    ck_assert_str_eq(shape(t, "k"), "true");
    ck_assert_str_eq(shape(t, "l"), "false");
    ck_assert_str_eq(shape(t, "m"), "(+ 100 7)");
    ck_assert_str_eq(shape(t, "n"), "(.* 2 x)");
    ck_assert_str_eq(shape(t, "o"), "(/ (/ 10 2) 5)");
    ck_assert_str_eq(member(root, "p")->a->str, "\xC3\xA9#//");
    bs_tree_free(t);
}
END_TEST

START_TEST(positions_from_an_offset)
{
    struct bs_tree *t = parse_ok_at("a = 1\n  b = x.y\n\tc = (p) + q", 7, 30);
    const struct bs_node *root = bs_tree_root(t);
    AT(root, 7, 30);
    AT(member(root, "a"), 7, 30);
    AT(member(root, "a")->a, 7, 34);
    AT(member(root, "b"), 8, 3);
    AT(member(root, "b")->a, 8, 7);
    AT(member(root, "c"), 9, 2);
    AT(member(root, "c")->a, 9, 6);    /* (p) + q starts at its '(' */
    AT(member(root, "c")->a->a, 9, 7); /* p */
    bs_tree_free(t);

    struct pt_err e;
    struct bs_tree *bad = NULL;
    const char *text = "lr = Logistic (labels, p\nerr = 1";
    ck_assert_int_eq(parse_at("lr.cntk", text, strlen(text), 27, 1, &bad, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "lr.cntk:27:25: error: expected ',' or ')' to close the '(' at 27:15, "
                            "found end of line");
}
END_TEST

START_TEST(empty_and_odd_input)
{
    struct bs_tree *t = parse_ok("");
    ck_assert_uint_eq(bs_tree_root(t)->nitems, 0);
    bs_tree_free(t);
    t = parse_ok("  # only a comment\n\n ; ,\n");
    ck_assert_uint_eq(bs_tree_root(t)->nitems, 0);
    bs_tree_free(t);
    t = parse_ok("a = 1 /* no newline at the end */");
    ck_assert_str_eq(shape(t, "a"), "1");
    bs_tree_free(t);
    bs_tree_free(NULL);
    ck_assert_ptr_null(bs_tree_root(NULL));
}
END_TEST

/* Every prefix of the examples either parses or fails with a positioned message; the copy
 * of exactly len bytes lets the sanitizer catch any read past the end. */
START_TEST(every_prefix)
{
    const char *texts[] = {logistic, lstm};
    for (size_t k = 0; k < 2; k++) {
        size_t n = strlen(texts[k]);
        for (size_t len = 0; len <= n; len++) {
            struct pt_err e;
            struct bs_tree *t = NULL;
            int rc = parse_at("t.bs", texts[k], len, 1, 1, &t, &e);
            if (rc == 0) {
                ck_assert_ptr_nonnull(t);
                bs_tree_free(t);
            } else {
                ck_assert_int_eq(rc, PT_EUSER);
                ck_assert_msg(strncmp(e.msg, "t.bs:", 5) == 0, "%s", e.msg);
            }
        }
    }
}
END_TEST

START_TEST(error_helper)
{
    struct bs_tree *t = parse_ok("a = 1\nb = c");
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(bs_error(&e, member(bs_tree_root(t), "b")->a, "undefined '%s'", "c"),
                     PT_EUSER);
    ck_assert_str_eq(e.msg, "t.bs:2:5: error: undefined 'c'");
    bs_tree_free(t);
}
END_TEST

/* ------------------------------------------------------------------ errors */

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

static Suite *suite(void)
{
    Suite *s = suite_create("bs_parse");
    TCase *t = tcase_create("parse");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, logistic_regression);
    tcase_add_test(t, lstm_and_functions);
    tcase_add_test(t, precedence);
    tcase_add_test(t, lambdas);
    tcase_add_test(t, definitions_and_records);
    tcase_add_test(t, newline_rule);
    tcase_add_test(t, literals_and_comments);
    tcase_add_test(t, positions_from_an_offset);
    tcase_add_test(t, empty_and_odd_input);
    tcase_add_test(t, every_prefix);
    tcase_add_test(t, error_helper);
    suite_add_tcase(s, t);
    TCase *x = tcase_create("errors");
    tcase_set_timeout(x, 60);
    tcase_add_test(x, bracket_errors);
    tcase_add_test(x, member_errors);
    tcase_add_test(x, expression_errors);
    tcase_add_test(x, lexical_errors);
    tcase_add_test(x, depth_limits);
    suite_add_tcase(s, x);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
