/* The BrainScript parser (parsers/bs*): tree shapes of CNTK's own network descriptions,
 * precedence, lambdas and function definitions, the newline rule, positions, and the exact
 * text of every error message. */
#include <stdio.h>
#include <unistd.h>

#include "test_bs_parse.h"

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
                                 "i = if a then b else c : d\n"
                                 "j = [| x ; y + 1 ; z |]\nk = [| |]\nl = [| a : b |]\n");
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
    /* CNTK's array literal: as a : b : c, and also of one element or none */
    ck_assert_str_eq(shape(t, "j"), "(: x (+ y 1) z)");
    ck_assert_int_eq(member(bs_tree_root(t), "k")->a->kind, BS_ARRAY);
    ck_assert_int_eq((int)member(bs_tree_root(t), "k")->a->nitems, 0);
    ck_assert_str_eq(shape(t, "l"), "(: (: a b))");
    AT(member(bs_tree_root(t), "j")->a, 10, 5);
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

/* CNTK's array definition: NAME[i:first..last] = element; 1..n is 1 .. n, not 1. .n */
START_TEST(array_definitions)
{
    struct bs_tree *t = parse_ok("layers[k:1..L-1] = if k > 1\n"
                                 "    then SBFF (layers[k-1].Eh, 2, 3)\n"
                                 "    else SBFF (x, 2, 3)\n"
                                 "c[i : 0 .. 2] = i * 2 ; d[j:2..1.5e1]=j\n");
    const struct bs_node *root = bs_tree_root(t);
    ck_assert_str_eq(shape(t, "layers"),
                     "(for k 1 (- L 1) (if (> k 1) (call SBFF (. (index layers (- k 1)) Eh) 2 3) "
                     "(call SBFF x 2 3)))");
    AT(member(root, "layers")->a, 1, 8);
    ck_assert_str_eq(shape(t, "c"), "(for i 0 2 (* i 2))");
    ck_assert_str_eq(shape(t, "d"), "(for j 2 15 j)");
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
    /* a bracket on the next line continues the expression, as in CNTK's parser (its
     * Tests/EndToEndTests/Text/SequenceClassification writes model = Sequential NEWLINE (...)) */
    t = parse_ok("a = f\n(x)\nh = F\n{ k = 1 }.k\nm = Sequential\n(\n  A : B\n)\nj = x\n[2]\n");
    ck_assert_str_eq(shape(t, "a"), "(call f x)");
    ck_assert_str_eq(shape(t, "h"), "(. (call{} F k=1) k)");
    ck_assert_str_eq(shape(t, "m"), "(call Sequential (: A B))");
    ck_assert_str_eq(shape(t, "j"), "(index x 2)");
    bs_tree_free(t);
    err_is("a = 1\n(x) = 2\n", "t.bs:2:5: error: expected an operator, ';' or a new line after "
                               "the value of 'a', found '='");
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

/* CNTK's include "PATH": the file's text in its place, nested includes from the including
 * file's directory, "#@at" markers that keep every node's file and line; a model file's
 * description (not allowed) reads no file; errors name the included file. */
START_TEST(includes)
{
    char dir[] = "/tmp/pt-bsinc-XXXXXX", path[256], *out = NULL;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.bs", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("# macros\nH (x) = x\ninclude 'n.bs'\nk = 2", f); /* no newline at the end */
    fclose(f);
    snprintf(path, sizeof path, "%s/n.bs", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("j = 1 # one\n", f);
    fclose(f);
    char cfgpath[256], text[512];
    snprintf(cfgpath, sizeof cfgpath, "%s/net.cfg", dir);
    snprintf(text, sizeof text, "a = 1\n  include \"%s/m.bs\" b = H (a)\nc = b", dir);
    struct pt_err e;
    pt_err_clear(&e);
    pt_err_clear(&e);
    ck_assert_int_eq(bs_expand_includes(text, strlen(text), cfgpath, 4, 5, 1, 4096, &out, &e), 0);
    ck_assert_ptr_null(strstr(out, "include"));
    struct bs_tree *t = NULL;
    ck_assert_msg(bs_parse(out, strlen(out), cfgpath, 4, 5, &t, &e) == 0, "%s", e.msg);
    const struct bs_node *root = bs_tree_root(t);
    const char *names[] = {"a", "H", "j", "k", "b", "c"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        ck_assert_ptr_nonnull(member(root, names[i]));
    char want[1024];
    AT(member(root, "a"), 4, 5);
    ck_assert_str_eq(member(root, "a")->file, cfgpath);
    snprintf(want, sizeof want, "%s/m.bs", dir);
    AT(member(root, "H"), 2, 1);
    ck_assert_str_eq(member(root, "H")->file, want);
    AT(member(root, "k"), 4, 1);
    ck_assert_str_eq(member(root, "k")->file, want);
    snprintf(want, sizeof want, "%s/n.bs", dir); /* found beside m.bs, not in the cwd */
    AT(member(root, "j"), 1, 1);
    ck_assert_str_eq(member(root, "j")->file, want);
    AT(member(root, "b"), 5, 19 + (int)strlen(dir)); /* after the path, on its line */
    ck_assert_str_eq(member(root, "b")->file, cfgpath);
    AT(member(root, "c"), 6, 1);
    bs_tree_free(t);
    /* parsed again (a model file's copy), it reads no file and keeps the positions */
    char *again = NULL;
    pt_err_clear(&e);
    ck_assert_int_eq(bs_expand_includes(out, strlen(out), "model.dnn", 1, 1, 0, 4096, &again, &e),
                     0);
    ck_assert_str_eq(again, out);
    free(again);
    /* an error inside an included file names it */
    snprintf(path, sizeof path, "%s/n.bs", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("j = 1 + * 2\n", f);
    fclose(f);
    free(out);
    pt_err_clear(&e);
    ck_assert_int_eq(bs_expand_includes(text, strlen(text), cfgpath, 4, 5, 1, 4096, &out, &e), 0);
    pt_err_clear(&e);
    ck_assert_int_eq(bs_parse(out, strlen(out), cfgpath, 4, 5, &t, &e), PT_EUSER);
    snprintf(want, sizeof want, "%s/n.bs:1:9: error: expected an expression after '+', found '*'",
             dir);
    ck_assert_str_eq(e.msg, want);
    free(out);
    /* refused: a model's include, a missing file, too long, nested without end */
    pt_err_clear(&e);
    ck_assert_int_eq(bs_expand_includes(text, strlen(text), "model.dnn", 4, 5, 0, 4096, &out, &e),
                     PT_EUSER);
    snprintf(want, sizeof want,
             "model.dnn:5:3: error: include \"%s/m.bs\": a model file's network description "
             "reads no other file",
             dir);
    ck_assert_str_eq(e.msg, want);
    const char *missing = "include 'nope.bs'";
    pt_err_clear(&e);
    ck_assert_int_eq(bs_expand_includes(missing, strlen(missing), cfgpath, 1, 1, 1, 4096, &out, &e),
                     PT_EUSER);
    snprintf(want, sizeof want,
             "%s:1:1: error: include \"nope.bs\": no such file (looked for it as written and "
             "in %s)",
             cfgpath, dir);
    ck_assert_str_eq(e.msg, want);
    pt_err_clear(&e);
    ck_assert_int_eq(bs_expand_includes(text, strlen(text), cfgpath, 4, 5, 1, 40, &out, &e),
                     PT_EUSER);
    ck_assert_ptr_nonnull(strstr(e.msg, "is longer than the 39 bytes partrain keeps"));
    snprintf(path, sizeof path, "%s/n.bs", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("include 'n.bs'\n", f); /* itself */
    fclose(f);
    pt_err_clear(&e);
    ck_assert_int_eq(bs_expand_includes(text, strlen(text), cfgpath, 4, 5, 1, 1 << 20, &out, &e),
                     PT_EUSER);
    ck_assert_ptr_nonnull(strstr(e.msg, "includes nested deeper than 8 levels"));
    snprintf(path, sizeof path, "%s/n.bs", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/m.bs", dir);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* "#@at" markers as text may have them: odd ones are comments, lines past a file's range
 * and more files than are kept never reach past the tables. */
START_TEST(odd_markers)
{
    const char *texts[] = {"#@at 999999 1 a\n\n\nx = 1\n",
                           "#@at 0 0 a\nx = 1",
                           "#@at 1 1 \nx = 1",
                           "#@at 1 1 a",
                           "#@at 12 3 f.bs\r\nx = (1 +\n",
                           "#@at 5 5 b\nx = 1 #@at 7 7 c\ny = include 'q'"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        struct pt_err e;
        pt_err_clear(&e);
        struct bs_tree *t = NULL;
        int rc = bs_parse(texts[i], strlen(texts[i]), "m.cfg", 1, 1, &t, &e);
        ck_assert_msg(rc == 0 || rc == PT_EUSER, "%zu: %d", i, rc);
        bs_tree_free(t);
        char *out = NULL;
        pt_err_clear(&e);
        rc = bs_expand_includes(texts[i], strlen(texts[i]), "m.cfg", 1, 1, 0, 4096, &out, &e);
        ck_assert_msg(rc == 0 || rc == PT_EUSER, "%zu: %d", i, rc);
        free(out);
    }
    struct pt_err e;
    pt_err_clear(&e);
    struct bs_tree *t = NULL;
    const char *moved = "#@at 12 3 f.bs\r\nx = (1 +\n";
    ck_assert_int_eq(bs_parse(moved, strlen(moved), "m.cfg", 1, 1, &t, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "f.bs:12:11: error: expected an expression after '+', found end of "
                            "text");
    char many[100 * 24 + 16] = "";
    for (int k = 0; k < 100; k++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "#@at 1 1 f%d\nx%d = 1\n", k, k);
    pt_err_clear(&e);
    ck_assert_int_eq(bs_parse(many, strlen(many), "m.cfg", 1, 1, &t, &e), 0);
    ck_assert_str_eq(member(bs_tree_root(t), "x62")->file, "f62");
    bs_tree_free(t);
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
    tcase_add_test(t, array_definitions);
    tcase_add_test(t, newline_rule);
    tcase_add_test(t, literals_and_comments);
    tcase_add_test(t, positions_from_an_offset);
    tcase_add_test(t, empty_and_odd_input);
    tcase_add_test(t, includes);
    tcase_add_test(t, odd_markers);
    tcase_add_test(t, every_prefix);
    tcase_add_test(t, error_helper);
    suite_add_tcase(s, t);
    suite_add_tcase(s, bs_parse_error_tcase());
    return s;
}

int main(void)
{
    return run_suite(suite());
}
