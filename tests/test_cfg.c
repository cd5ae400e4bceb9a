/* The config language (parsers/cfg*): every syntax rule, merge rule and error message. */
#include <math.h>

#include "testutil.h"

#define ERR_IS(text, expected)                                                                     \
    do {                                                                                           \
        struct pt_err e_;                                                                          \
        struct cfg *c_ = load("t.cfg", text, &e_);                                                 \
        ck_assert_int_eq(e_.code, PT_EUSER);                                                       \
        ck_assert_str_eq(e_.msg, expected);                                                        \
        cfg_free(c_);                                                                              \
    } while (0)

/* ------------------------------------------------------------------ syntax */

START_TEST(separators)
{
    LOAD_OK(c, "t.cfg", "a=1;b=2,c=3\nd = 4 \n\n;;,\ne=five six");
    ck_assert_str_eq(val(c, "a"), "1");
    ck_assert_str_eq(val(c, "b"), "2");
    ck_assert_str_eq(val(c, "c"), "3");
    ck_assert_str_eq(val(c, "d"), "4");
    ck_assert_str_eq(val(c, "e"), "five six");
    cfg_free(c);
}
END_TEST

START_TEST(bare_key_is_true)
{
    LOAD_OK(c, "t.cfg", "verbose\nx=[ flag ; y=2 ]");
    ck_assert_str_eq(val(c, "verbose"), "true");
    ck_assert_str_eq(val(c, "x.flag"), "true");
    cfg_free(c);
}
END_TEST

START_TEST(blocks_square_and_curly)
{
    LOAD_OK(c, "t.cfg", "a=[ b=1\n c={ d=2; e=[f=3] } ]\ng={h=4}");
    ck_assert_str_eq(val(c, "a.b"), "1");
    ck_assert_str_eq(val(c, "a.c.d"), "2");
    ck_assert_str_eq(val(c, "a.c.e.f"), "3");
    ck_assert_str_eq(val(c, "g.h"), "4");
    ck_assert_str_eq(val(c, "a"), "<block>");
    cfg_free(c);
}
END_TEST

START_TEST(comments)
{
    LOAD_OK(c, "t.cfg",
            "# whole line\n"
            "   # indented comment\n"
            "a=1 # trailing\n"
            "b=1#INF\n"
            "c=x#y\n"
            "d=2\t# after a tab\n"
            "e=http://host/p // a // comment\n"
            "// line comment\n"
            "f=[ # in a block [ with brackets ]\n g=3 ]\n"
            "h=\"#not a comment\"\n");
    ck_assert_str_eq(val(c, "a"), "1");
    ck_assert_str_eq(val(c, "b"), "1#INF");
    ck_assert_str_eq(val(c, "c"), "x#y");
    ck_assert_str_eq(val(c, "d"), "2");
    ck_assert_str_eq(val(c, "e"), "http://host/p");
    ck_assert_str_eq(val(c, "f.g"), "3");
    ck_assert_str_eq(val(c, "h"), "#not a comment");
    cfg_free(c);
}
END_TEST

START_TEST(quoted_strings)
{
    LOAD_OK(c, "t.cfg", "a=\"x; y, z # w\"\nb=\"\"\nc=\"[not a block]\"\nd=(1, 2; 3)\n");
    ck_assert_str_eq(val(c, "a"), "x; y, z # w");
    ck_assert_str_eq(val(c, "b"), "");
    ck_assert_str_eq(val(c, "c"), "[not a block]");
    ck_assert_str_eq(val(c, "d"), "(1, 2; 3)");
    cfg_free(c);
}
END_TEST

START_TEST(keys_case_insensitive)
{
    LOAD_OK(c, "t.cfg", "MaxEpochs=3\nparallelTrain=[dataParallelSGD=[gradientBits=1]]");
    ck_assert_str_eq(val(c, "maxepochs"), "3");
    ck_assert_str_eq(val(c, "MAXEPOCHS"), "3");
    ck_assert_str_eq(val(c, "ParallelTrain.DataParallelSGD.GRADIENTBITS"), "1");
    cfg_free(c);
}
END_TEST

START_TEST(lookup_climbs_blocks)
{
    LOAD_OK(c, "t.cfg", "maxEpochs=7\nlr=0.1\ntrain=[lr=0.2; SGD=[x=1]]");
    struct cfg_node *sgd = node_at(c, "train.SGD"), *n = NULL;
    ck_assert_int_eq(cfg_find(sgd, "maxEpochs", &n, &e), 0);
    ck_assert_ptr_nonnull(n);
    ck_assert_str_eq(cfg_raw(n), "7");
    ck_assert_int_eq(cfg_find(sgd, "lr", &n, &e), 0);
    ck_assert_str_eq(cfg_raw(n), "0.2"); /* nearest enclosing block wins */
    ck_assert_int_eq(cfg_find(sgd, "nothere", &n, &e), 0);
    ck_assert_ptr_null(n);
    ck_assert_int_eq(cfg_find_local(sgd, "lr", &n, &e), 0);
    ck_assert_ptr_null(n);
    cfg_free(c);
}
END_TEST

START_TEST(origins)
{
    LOAD_OK(c, "o.cfg", "a=1\n  b = [\n    ccc = 2 ]\n\xC3\xA9x=1; k=v\n");
    char buf[128];
    ck_assert_str_eq(cfg_origin_str(cfg_origin_of(node_at(c, "a")), buf, sizeof buf), "o.cfg:1:1");
    ck_assert_str_eq(cfg_origin_str(cfg_origin_of(node_at(c, "b")), buf, sizeof buf), "o.cfg:2:3");
    ck_assert_str_eq(cfg_origin_str(cfg_origin_of(node_at(c, "b.ccc")), buf, sizeof buf),
                     "o.cfg:3:5");
    ck_assert_str_eq(cfg_origin_str(cfg_value_origin(node_at(c, "b.ccc")), buf, sizeof buf),
                     "o.cfg:3:11");
    /* columns count characters: é is one */
    ck_assert_str_eq(cfg_origin_str(cfg_origin_of(node_at(c, "k")), buf, sizeof buf), "o.cfg:4:7");
    ck_assert_int_eq(cfg_apply_arg(c, "z=[y=2]", 3, &e), 0);
    ck_assert_str_eq(cfg_origin_str(cfg_origin_of(node_at(c, "z.y")), buf, sizeof buf),
                     "<command line>:arg3");
    cfg_free(c);
}
END_TEST

START_TEST(bom_and_crlf)
{
    LOAD_OK(c, "t.cfg",
            "\xEF\xBB\xBF"
            "a=1\r\nb=[c=2\r\n]\r\n");
    ck_assert_str_eq(val(c, "a"), "1");
    ck_assert_str_eq(val(c, "b.c"), "2");
    cfg_free(c);
}
END_TEST

/* ------------------------------------------------------------------ variables */

START_TEST(variables)
{
    LOAD_OK(c, "t.cfg",
            "RootDir=/data\n"
            "ConfigDir=\"$RootDir$/Config\"\n"
            "File=$ConfigDir$/x.txt\n"
            "cost=5$ and $$ and $ alone\n"
            "train=[ RootDir=/local; reader=[ file=$RootDir$/train.ctf ] ]\n");
    ck_assert_str_eq(val(c, "ConfigDir"), "/data/Config");
    ck_assert_str_eq(val(c, "File"), "/data/Config/x.txt");
    ck_assert_str_eq(val(c, "cost"), "5$ and $$ and $ alone");
    /* resolved from the scope holding the key: the nearest RootDir */
    ck_assert_str_eq(val(c, "train.reader.file"), "/local/train.ctf");
    cfg_free(c);
    /* a key never stands for itself: x = $x$ takes x from an enclosing block (CNTK idiom) */
    c = load("t.cfg",
             "method=DataParallelSGD\nbits=1\nT=[P=[method=$method$; bits=$bits$:32]]\n"
             "deviceId=$DeviceId$\n",
             &e);
    ck_assert_str_eq(val(c, "T.P.method"), "DataParallelSGD");
    ck_assert_str_eq(val(c, "T.P.bits"), "1:32");
    ck_assert_int_eq(cfg_apply_arg(c, "DeviceId=-1", 2, &e),
                     0); /* the same key, case-insensitively */
    ck_assert_str_eq(val(c, "deviceId"), "-1");
    cfg_free(c);
}
END_TEST

START_TEST(variable_errors)
{
    LOAD_OK(c, "v.cfg", "a=$nope$\nb=$c$\nc=$b$\nd=$d$\nblk=[x=1]\nf=pre$blk$post\n");
    ck_assert_str_eq(val(c, "a"),
                     "<error: v.cfg:1:3: error: unknown variable $nope$ in the value of 'a'>");
    ck_assert_str_eq(val(c, "b"),
                     "<error: v.cfg:3:3: error: variable cycle: $b$ (used by 'c') refers back to "
                     "itself; while expanding $c$ at v.cfg:2:3>");
    ck_assert_str_eq(
        val(c, "d"),
        "<error: v.cfg:4:3: error: unknown variable $d$ in the value of 'd' (a key cannot "
        "refer to itself, and keys are case-insensitive: set it in an enclosing block or "
        "on the command line)>");
    ck_assert_str_eq(val(c, "f"), "<error: v.cfg:6:3: error: variable $blk$ in the value of 'f' "
                                  "names a block, not a value>");
    cfg_free(c);
}
END_TEST

START_TEST(block_alias_variable)
{
    LOAD_OK(c, "t.cfg", "common=[readerType=CNTKTextFormatReader]\ntrain=[reader=$common$]\n");
    struct cfg_node *r = NULL;
    ck_assert_int_eq(cfg_find_block(node_at(c, "train"), "reader", &r, &e), 0);
    ck_assert_ptr_eq(r, node_at(c, "common"));
    cfg_free(c);
}
END_TEST

/* ------------------------------------------------------------------ values */

START_TEST(arrays_and_repeats)
{
    LOAD_OK(c, "t.cfg", "a=784:512*2:10\nb=0.01*3:0.001\nc=\"x:y\":z\nd=single\ne=1 * 2 : 3");
    struct cfg_list l;
    ck_assert_int_eq(cfg_to_list(node_at(c, "a"), val(c, "a"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 4);
    ck_assert_str_eq(l.items[0], "784");
    ck_assert_str_eq(l.items[1], "512");
    ck_assert_str_eq(l.items[2], "512");
    ck_assert_str_eq(l.items[3], "10");
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "b"), val(c, "b"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 4);
    ck_assert_str_eq(l.items[3], "0.001");
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "c"), val(c, "c"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.items[0], "x:y");
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "d"), val(c, "d"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 1);
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "e"), val(c, "e"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_str_eq(l.items[1], "1");
    cfg_list_free(&l);
    cfg_free(c);
}
END_TEST

/* CNTK's ConfigArray: ',' separates elements as ':' does, and the whole array may stand in
 * parentheses (RegrSimple_CIFAR10's outputNodeNames = (ol, regrLabels, rmse)); a quoted
 * ',' stays in its element. */
START_TEST(arrays_commas_parentheses)
{
    LOAD_OK(c, "t.cfg",
            "a=(ol, regrLabels, rmse)\nb=(x : y)\nc=\"q,r\":p\nd=(single)\ne=(0.1*2, 0.05)");
    struct cfg_list l;
    ck_assert_int_eq(cfg_to_list(node_at(c, "a"), val(c, "a"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_str_eq(l.items[0], "ol");
    ck_assert_str_eq(l.items[1], "regrLabels");
    ck_assert_str_eq(l.items[2], "rmse");
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "b"), val(c, "b"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.items[0], "x");
    ck_assert_str_eq(l.items[1], "y");
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "c"), val(c, "c"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.items[0], "q,r");
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "d"), val(c, "d"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.items[0], "single");
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "e"), val(c, "e"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_str_eq(l.items[2], "0.05");
    cfg_list_free(&l);
    cfg_free(c);
}
END_TEST

/* CNTK's array parsers skip empty elements (Basics.h's split and ConfigParser::Parse both
 * skip runs of separators): a trailing, leading or doubled ':' adds nothing. */
START_TEST(array_empty_elements)
{
    LOAD_OK(c, "t.cfg", "a=64:256:1024:\nb=:64::256\nc=0.8*2: :0.1\nd=\"\":x");
    struct cfg_list l;
    ck_assert_int_eq(cfg_to_list(node_at(c, "a"), val(c, "a"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_str_eq(l.items[2], "1024");
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "b"), val(c, "b"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.items[0], "64");
    ck_assert_str_eq(l.items[1], "256");
    cfg_list_free(&l);
    ck_assert_int_eq(cfg_to_list(node_at(c, "c"), val(c, "c"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_str_eq(l.items[2], "0.1");
    cfg_list_free(&l);
    /* a quoted empty string is an element */
    ck_assert_int_eq(cfg_to_list(node_at(c, "d"), val(c, "d"), &l, &e), 0);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.items[0], "");
    cfg_list_free(&l);
    cfg_free(c);
}
END_TEST

START_TEST(array_errors)
{
    LOAD_OK(c, "a.cfg", "a=1*0\nb=*3:2\nc=1*x\nd=1*\ne=1*100000000\nf=:\ng= : ");
    struct cfg_list l;
    const char *want[] = {
        "a.cfg:1:3: error: a: repeat count must be a positive integer, got \"0\"",
        "a.cfg:2:3: error: b: empty element in \"*3:2\"",
        "a.cfg:3:3: error: c: repeat count must be a positive integer, got \"x\"",
        "a.cfg:4:3: error: d: expected a repeat count after '*' in \"1*\"",
        "a.cfg:5:3: error: e: array longer than 65536 elements",
        "a.cfg:6:3: error: f: expected at least one element, got \":\"",
        "a.cfg:7:4: error: g: expected at least one element, got \":\"",
    };
    const char *keys[] = {"a", "b", "c", "d", "e", "f", "g"};
    for (int i = 0; i < 7; i++) {
        pt_err_clear(&e);
        ck_assert_int_eq(cfg_to_list(node_at(c, keys[i]), val(c, keys[i]), &l, &e), PT_EUSER);
        ck_assert_str_eq(e.msg, want[i]);
    }
    cfg_free(c);
}
END_TEST

START_TEST(booleans)
{
    const char *yes[] = {"true", "TRUE", "t", "T", "1", "True"};
    const char *no[] = {"false", "FALSE", "f", "F", "0"};
    int b;
    struct pt_err e;
    for (int i = 0; i < 6; i++) {
        pt_err_clear(&e);
        ck_assert_int_eq(cfg_to_bool(NULL, yes[i], &b, &e), 0);
        ck_assert_int_eq(b, 1);
    }
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(cfg_to_bool(NULL, no[i], &b, &e), 0);
        ck_assert_int_eq(b, 0);
    }
    struct cfg *c = load("b.cfg", "x=[flag=yes]", &e);
    ck_assert_int_eq(cfg_to_bool(node_at(c, "x.flag"), "yes", &b, &e), PT_EUSER);
    ck_assert_str_eq(
        e.msg, "b.cfg:1:9: error: x.flag: expected a boolean (true/false/t/f/1/0), got \"yes\"");
    cfg_free(c);
}
END_TEST

START_TEST(numbers)
{
    struct pt_err e;
    double d;
    long long i;
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_to_double(NULL, "1#INF", &d, &e), 0);
    ck_assert(isinf(d) && d > 0);
    ck_assert_int_eq(cfg_to_double(NULL, "-1#INF", &d, &e), 0);
    ck_assert(isinf(d) && d < 0);
    ck_assert_int_eq(cfg_to_double(NULL, "1#inf", &d, &e), 0);
    ck_assert_int_eq(cfg_to_double(NULL, "2.5e-3", &d, &e), 0);
    ck_assert(d == 2.5e-3);
    ck_assert_int_eq(cfg_to_int(NULL, "-42", &i, &e), 0);
    ck_assert_int_eq(i, -42);
    struct cfg *c =
        load("n.cfg",
             "SGD=[\n  minibatchSize=25x\n lr=nan; m=1#NAN; z=0#INF; w=99999999999999999999]", &e);
    ck_assert_int_eq(cfg_to_int(node_at(c, "SGD.minibatchSize"), "25x", &i, &e), PT_EUSER);
    ck_assert_str_eq(e.msg,
                     "n.cfg:2:17: error: SGD.minibatchSize: expected an integer, got \"25x\"");
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_to_double(node_at(c, "SGD.lr"), "nan", &d, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "n.cfg:3:5: error: SGD.lr: NaN is not a valid number here");
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_to_double(node_at(c, "SGD.m"), "1#NAN", &d, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "n.cfg:3:12: error: SGD.m: expected a number, got \"1#NAN\"");
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_to_double(node_at(c, "SGD.z"), "0#INF", &d, &e), PT_EUSER);
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_to_int(node_at(c, "SGD.w"), "99999999999999999999", &i, &e), PT_EUSER);
    ck_assert_str_eq(e.msg,
                     "n.cfg:3:30: error: SGD.w: integer out of range: \"99999999999999999999\"");
    cfg_free(c);
}
END_TEST

/* ------------------------------------------------------------------ merges */

START_TEST(merge_blocks)
{
    LOAD_OK(c, "t.cfg", "a=[x=1; y=1]\na=[y=2; z=2]\nb=[x=1]\nb=5\nd=5\nd=[k=1]\ne=1\ne=2\n");
    ck_assert_str_eq(val(c, "a.x"), "1");
    ck_assert_str_eq(val(c, "a.y"), "2");
    ck_assert_str_eq(val(c, "a.z"), "2");
    ck_assert_str_eq(val(c, "b"), "5");
    ck_assert_str_eq(val(c, "d.k"), "1");
    ck_assert_str_eq(val(c, "e"), "2");
    /* first-definition order is kept */
    struct cfg_node *n = cfg_first(cfg_root(c));
    ck_assert_str_eq(cfg_key(n), "a");
    ck_assert_str_eq(cfg_key(cfg_next(n)), "b");
    cfg_free(c);
}
END_TEST

START_TEST(merge_nested_and_command_line)
{
    LOAD_OK(c, "t.cfg", "train=[SGD=[maxEpochs=5; lr=0.1]; reader=[file=a]]\n");
    ck_assert_int_eq(cfg_apply_arg(c, "train=[SGD=[maxEpochs=3]]", 2, &e), 0);
    ck_assert_int_eq(cfg_apply_arg(c, "train.reader.file=b", 3, &e), 0);
    ck_assert_int_eq(cfg_apply_arg(c, "Train.Sgd.Momentum=0.9", 4, &e), 0);
    ck_assert_int_eq(cfg_apply_arg(c, "new.block.key=v", 5, &e), 0);
    ck_assert_int_eq(cfg_apply_arg(c, "flag", 6, &e), 0);
    ck_assert_str_eq(val(c, "train.SGD.maxEpochs"), "3");
    ck_assert_str_eq(val(c, "train.SGD.lr"), "0.1");
    ck_assert_str_eq(val(c, "train.SGD.momentum"), "0.9");
    ck_assert_str_eq(val(c, "train.reader.file"), "b");
    ck_assert_str_eq(val(c, "new.block.key"), "v");
    ck_assert_str_eq(val(c, "flag"), "true");
    cfg_free(c);
}
END_TEST

START_TEST(merge_order_dotted_then_block)
{
    struct pt_err e;
    struct cfg *c = cfg_new();
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_apply_arg(c, "a=[b=[c=1]]", 1, &e), 0);
    ck_assert_int_eq(cfg_apply_arg(c, "a.b.c=2", 2, &e), 0);
    ck_assert_int_eq(cfg_apply_arg(c, "a=[b=[c=3]]", 3, &e), 0);
    ck_assert_str_eq(val(c, "a.b.c"), "3");
    ck_assert_int_eq(cfg_apply_arg(c, "a.b.c=4", 4, &e), 0);
    ck_assert_str_eq(val(c, "a.b.c"), "4");
    ck_assert_int_eq(cfg_apply_arg(c, "a.b=scalar", 5, &e), 0);
    ck_assert_str_eq(val(c, "a.b"), "scalar");
    ck_assert_int_eq(cfg_apply_arg(c, "a.b.c=5", 6, &e), 0);
    ck_assert_str_eq(val(c, "a.b.c"), "5");
    cfg_free(c);
}
END_TEST

START_TEST(dotted_key_errors)
{
    struct pt_err e;
    struct cfg *c = cfg_new();
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_apply_arg(c, "a..b=1", 4, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "<command line>:arg4: error: empty name in dotted key \"a..b\"");
    cfg_free(c);
}
END_TEST

/* ------------------------------------------------------------------ foreign blocks */

static const char *brainscript =
    "command=train\n"
    "train = {\n"
    "    action = \"train\"\n"
    "    BrainScriptNetworkBuilder = {\n"
    "        // a comment with ] and ' and \"\n"
    "        Relu (x) = Max (x, 0)\n"
    "        model = Sequential (DenseLayer {512, activation=ReLU} : DenseLayer {10})\n"
    "        z = model (Input {784}) ; ce = CrossEntropyWithSoftmax (l, z)\n"
    "        featureNodes = (features) ; outputNodes = (z)\n"
    "    }\n"
    "    NDLNetworkBuilder = [\n"
    "        run = ndl\n"
    "        ndl = [ features = Input(784, tag=feature) ; W0 = Parameter(512, 784) ]\n"
    "    ]\n"
    "    SGD = { maxEpochs = 2 }\n"
    "}\n";

START_TEST(foreign_blocks_kept_as_text)
{
    LOAD_OK(c, "bs.cfg", brainscript);
    ck_assert_str_eq(val(c, "train.SGD.maxEpochs"), "2");
    ck_assert_str_eq(val(c, "train.action"), "train");
    /* the legacy syntax happens to cover the NDL block ... */
    ck_assert_str_eq(val(c, "train.NDLNetworkBuilder.ndl.features"), "Input(784, tag=feature)");
    /* ... but not BrainScript: looking inside is an error, not a crash */
    struct cfg_node *bs = node_at(c, "train.BrainScriptNetworkBuilder");
    ck_assert_ptr_nonnull(bs);
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_parse_block(bs, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "bs.cfg:6:14: error: expected '=' after key 'Relu'");
    /* printing shows the raw text */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int problems = -1;
    ck_assert_int_eq(cfg_print(c, f, &problems, &e), 0);
    fclose(f);
    ck_assert_int_eq(problems, 0);
    ck_assert_ptr_nonnull(
        strstr(buf, "model = Sequential (DenseLayer {512, activation=ReLU} : DenseLayer {10})"));
    ck_assert_ptr_nonnull(strstr(buf, "(kept as text: not config syntax)"));
    free(buf);
    cfg_free(c);
}
END_TEST

/* ------------------------------------------------------------------ errors */

START_TEST(syntax_errors)
{
    ERR_IS("a=[b=1\nc=2", "t.cfg:1:3: error: unterminated '[' (no matching ']' before the end)");
    ERR_IS("a=\"abc", "t.cfg:1:3: error: unterminated string (no closing '\"')");
    ERR_IS("x=1\na=[b={c=1]]",
           "t.cfg:2:10: error: ']' does not match the '{' opened at t.cfg:2:6 (expected '}')");
    ERR_IS("a=1\n]", "t.cfg:2:1: error: unexpected ']' (no block is open here)");
    ERR_IS("=5", "t.cfg:1:1: error: missing key before '='");
    ERR_IS("a=[x=1] y", "t.cfg:1:9: error: unexpected 'y' after the value of 'a' (separate entries "
                        "with a newline, ';' or ',')");
    ERR_IS("key value", "t.cfg:1:5: error: expected '=' after key 'key'");
    ERR_IS("[a=1]", "t.cfg:1:1: error: a block needs a name: expected 'name = [ ... ]'");
    ERR_IS("a=1)", "t.cfg:1:4: error: unexpected ')' in a value (no matching opening bracket)");
    ERR_IS("\"q\"=1", "t.cfg:1:1: error: a quoted string needs a key: expected 'key = \"...\"'");
    ERR_IS("a=(1,2", "t.cfg:1:3: error: unterminated '(' (no matching ')' before the end)");
}
END_TEST

START_TEST(errors_inside_lazy_blocks)
{
    /* a broken block loads; the error comes (with its true position) when it is read */
    LOAD_OK(c, "t.cfg", "ok=1\nbad=[\n  x=1\n  y z\n]\n");
    ck_assert_str_eq(val(c, "ok"), "1");
    struct cfg_node *bad = node_at(c, "bad"), *n = NULL;
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_find_local(bad, "x", &n, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "t.cfg:4:5: error: expected '=' after key 'y'");
    /* the error sticks */
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_find_local(bad, "x", &n, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "t.cfg:4:5: error: expected '=' after key 'y'");
    cfg_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cfg");
    TCase *t = tcase_create("syntax");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, separators);
    tcase_add_test(t, bare_key_is_true);
    tcase_add_test(t, blocks_square_and_curly);
    tcase_add_test(t, comments);
    tcase_add_test(t, quoted_strings);
    tcase_add_test(t, keys_case_insensitive);
    tcase_add_test(t, lookup_climbs_blocks);
    tcase_add_test(t, origins);
    tcase_add_test(t, bom_and_crlf);
    tcase_add_test(t, variables);
    tcase_add_test(t, variable_errors);
    tcase_add_test(t, block_alias_variable);
    tcase_add_test(t, arrays_and_repeats);
    tcase_add_test(t, arrays_commas_parentheses);
    tcase_add_test(t, array_empty_elements);
    tcase_add_test(t, array_errors);
    tcase_add_test(t, booleans);
    tcase_add_test(t, numbers);
    tcase_add_test(t, merge_blocks);
    tcase_add_test(t, merge_nested_and_command_line);
    tcase_add_test(t, merge_order_dotted_then_block);
    tcase_add_test(t, dotted_key_errors);
    tcase_add_test(t, foreign_blocks_kept_as_text);
    tcase_add_test(t, syntax_errors);
    tcase_add_test(t, errors_inside_lazy_blocks);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
