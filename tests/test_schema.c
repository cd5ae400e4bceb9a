/* Schemas (parsers/schema.c) and whole-config validation (src/train/actions.c; the
 * trainer's own tables in test_schema_trainer.c). */
#include "parsers/schema.h"
#include "testutil.h"
#include "train/train.h"

static int valid_even(const struct cfg_val *v, char *why, size_t size)
{
    if (v->i % 2 == 0)
        return 0;
    snprintf(why, size, "%lld is odd; an even number is needed", v->i);
    return 1;
}

static const struct cfg_key inner_keys[] = {
    {.name = "dim", .type = CFG_INT, .flags = CFG_REQUIRED | CFG_HAS_MIN, .min = 1, .help = "size"},
    {.name = NULL},
};
static const struct cfg_schema inner = {
    .name = "Inner", .where = "inside Demo", .help = "i", .keys = inner_keys};

static const struct cfg_key demo_keys[] = {
    {.name = "epochs",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | CFG_HAS_MIN,
     .min = 1,
     .help = "how many"},
    {.name = "rate",
     .type = CFG_REAL_SCHED,
     .def = "0.5*2:0.1",
     .flags = CFG_HAS_MIN | CFG_MIN_EXCL,
     .help = "rates"},
    {.name = "sizes", .type = CFG_INT_SCHED, .def = "256", .help = "sizes"},
    {.name = "flag", .type = CFG_BOOL, .def = "false", .help = "a flag"},
    {.name = "kind",
     .type = CFG_ENUM,
     .def = "alpha",
     .choices = "alpha|beta",
     .unsupported = "gamma",
     .help = "a kind"},
    {.name = "ratio",
     .type = CFG_REAL,
     .def = "0.5",
     .flags = CFG_HAS_MIN | CFG_HAS_MAX | CFG_MAX_EXCL,
     .min = 0,
     .max = 1,
     .help = "r"},
    {.name = "even", .type = CFG_INT, .def = "2", .valid = valid_even, .help = "even"},
    {.name = "perMB", .type = CFG_REAL, .group = 1, .help = "one way"},
    {.name = "perSample", .type = CFG_REAL, .group = 1, .help = "other way"},
    {.name = "period", .type = CFG_INT, .def = "10", .help = "period"},
    {.name = "mbFirst",
     .type = CFG_INT,
     .def = "64",
     .flags = CFG_HAS_MIN | CFG_FIRST,
     .min = 1,
     .help = "the first of an array"},
    {.name = "syncPeriod", .type = CFG_INT, .alias_of = "period", .help = "alias"},
    {.name = "oldPeriod",
     .type = CFG_INT,
     .alias_of = "period",
     .flags = CFG_DEPRECATED,
     .help = "old alias"},
    {.name = "words", .type = CFG_STRING_LIST, .def = "a", .choices = "a|b", .help = "w"},
    {.name = "Inner", .type = CFG_BLOCK, .sub = &inner, .help = "a block"},
    {.name = "streams", .type = CFG_BLOCK_MAP, .sub = &inner, .help = "named blocks"},
    {.name = "legacyThing", .type = CFG_UNSUPPORTED, .help = "legacy things are gone"},
    {.name = "script", .type = CFG_TEXT, .help = "kept as text"},
    {.name = "own", .type = CFG_STRING, .flags = CFG_LOCAL, .help = "this block's own"},
    {.name = NULL},
};
static const struct cfg_schema demo = {
    .name = "Demo", .where = "at top level", .help = "d", .keys = demo_keys};
static const struct cfg_schema *const all[] = {&demo, &inner, NULL};

/* Check block `path` of text against demo; returns the code, message in *e. */
static int check(const char *text, const char *path, int strict, struct cfg **out, struct pt_err *e)
{
    struct cfg *c = load("s.cfg", text, e);
    ck_assert_msg(e->code == 0, "%s", e->msg);
    struct cfg_check ck = {.cfg = c, .strict = strict, .all = all};
    int rc = cfg_schema_check(&ck, node_at(c, path), &demo, e);
    if (out)
        *out = c;
    else
        cfg_free(c);
    return rc;
}

#define CHECK_ERR(text, expected)                                                                  \
    do {                                                                                           \
        struct pt_err e_;                                                                          \
        ck_assert_int_eq(check(text, "d", 0, NULL, &e_), PT_EUSER);                                \
        ck_assert_str_eq(e_.msg, expected);                                                        \
    } while (0)

START_TEST(valid_block_passes)
{
    struct pt_err e;
    struct cfg *c;
    ck_assert_int_eq(check("d=[epochs=3; rate=0.1:0.2; flag=T; kind=BETA; Inner=[dim=4];"
                           "streams=[a=[dim=1]; b=[dim=2]]; script={ anything (goes) here }]",
                           "d", 0, &c, &e),
                     0);
    ck_assert_uint_eq(cfg_warning_count(c), 0);
    cfg_free(c);
}
END_TEST

START_TEST(type_and_range_errors)
{
    CHECK_ERR("d=[epochs=x]", "s.cfg:1:11: error: d.epochs: expected an integer, got \"x\"");
    CHECK_ERR("d=[epochs=0]", "s.cfg:1:11: error: epochs: 0 is out of range: must be >= 1");
    CHECK_ERR("d=[epochs=1; rate=0.1:0]",
              "s.cfg:1:19: error: rate: 0 is out of range: must be > 0");
    CHECK_ERR("d=[epochs=1; ratio=1]", "s.cfg:1:20: error: ratio: 1 is out of range: must be < 1");
    /* reals are finite, in a schedule as alone, however infinity is spelled */
    CHECK_ERR("d=[epochs=1; rate=0.1:1e400]",
              "s.cfg:1:19: error: d.rate: expected a finite number, got \"1e400\"");
    CHECK_ERR("d=[epochs=1; ratio=inf]",
              "s.cfg:1:20: error: d.ratio: expected a finite number, got \"inf\"");
    CHECK_ERR("d=[epochs=1; ratio=-1#INF]",
              "s.cfg:1:20: error: d.ratio: expected a finite number, got \"-1#INF\"");
    CHECK_ERR("d=[epochs=1; rate=1e39]",
              "s.cfg:1:19: error: d.rate: expected a finite number (at most 3.4e38 in magnitude: "
              "training uses 32-bit floats), got \"1e39\"");
    CHECK_ERR("d=[epochs=1; flag=maybe]",
              "s.cfg:1:19: error: d.flag: expected a boolean (true/false/t/f/1/0), got \"maybe\"");
    CHECK_ERR("d=[epochs=1; kind=delta]",
              "s.cfg:1:19: error: kind: expected one of alpha|beta, got \"delta\"");
    CHECK_ERR("d=[epochs=1; kind=gamma]",
              "s.cfg:1:19: error: kind=gamma is not supported by partrain (supported: alpha|beta)");
    CHECK_ERR("d=[epochs=1; even=3]",
              "s.cfg:1:19: error: even: 3 is odd; an even number is needed");
    CHECK_ERR("d=[epochs=1; words=a:c]",
              "s.cfg:1:20: error: words: expected one of a|b, got \"c\"");
    CHECK_ERR("d=[epochs=1; Inner=5]",
              "s.cfg:1:14: error: 'd.Inner' must be a block [ ... ], but it is a value");
    CHECK_ERR("d=[epochs=[x=1]]",
              "s.cfg:1:4: error: 'd.epochs' must be a value (integer), but it is a block");
    CHECK_ERR("d=[epochs=1; Inner=[dim=0]]",
              "s.cfg:1:25: error: dim: 0 is out of range: must be >= 1");
    CHECK_ERR("d=[epochs=1; Inner=[]]",
              "s.cfg:1:14: error: d.Inner: required key 'dim' is not set (size)");
    CHECK_ERR("d=[epochs=1; streams=[a=[dim=1]; b=2]]",
              "s.cfg:1:34: error: 'd.streams.b' must be a block [ ... ] describing one Inner, but "
              "it is a value");
    CHECK_ERR("d=[rate=1]", "s.cfg:1:1: error: d: required key 'epochs' is not set (how many)");
    CHECK_ERR(
        "d=[epochs=1; legacyThing=1]",
        "s.cfg:1:14: error: d.legacyThing: not supported by partrain: legacy things are gone");
}
END_TEST

START_TEST(exclusive_and_aliases)
{
    CHECK_ERR("d=[epochs=1; perMB=1\n perSample=2]",
              "s.cfg:2:2: error: Demo: 'perSample' and 'perMB' (set at s.cfg:1:14) exclude each "
              "other; give only one");
    CHECK_ERR("d=[epochs=1; period=1; syncPeriod=2]",
              "s.cfg:1:24: error: Demo: 'syncPeriod' and 'period' (set at s.cfg:1:14) are two "
              "names for the same setting; give only one");
    /* exclusion sees keys inherited from enclosing blocks too */
    struct pt_err e;
    struct cfg *c = load("s.cfg", "perMB=1\nd=[epochs=1; perSample=2]", &e);
    struct cfg_check ck = {.cfg = c, .all = all};
    ck_assert_int_eq(cfg_schema_check(&ck, node_at(c, "d"), &demo, &e), PT_EUSER);
    cfg_free(c);
    /* a deprecated alias warns and reads as its target */
    ck_assert_int_eq(check("d=[epochs=1; oldPeriod=7]", "d", 0, &c, &e), 0);
    ck_assert_uint_eq(cfg_warning_count(c), 1);
    ck_assert_str_eq(cfg_warning(c, 0),
                     "s.cfg:1:14: warning: 'oldPeriod' is deprecated; use 'period'");
    struct cfg_val v;
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "period", &v, &e), 0);
    ck_assert_int_eq(v.i, 7);
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "syncPeriod", &v, &e), 0);
    ck_assert_int_eq(v.i, 7);
    cfg_free(c);
}
END_TEST

START_TEST(unknown_keys)
{
    struct pt_err e;
    struct cfg *c;
    ck_assert_int_eq(check("d=[epochs=1; epoch=2; rates=1; dim=3; zzzzzz=1]", "d", 0, &c, &e), 0);
    ck_assert_uint_eq(cfg_warning_count(c), 4);
    ck_assert_str_eq(
        cfg_warning(c, 0),
        "s.cfg:1:14: warning: unknown key 'd.epoch' in Demo is ignored (did you mean 'epochs'?)");
    ck_assert_str_eq(
        cfg_warning(c, 1),
        "s.cfg:1:23: warning: unknown key 'd.rates' in Demo is ignored (did you mean 'rate'?)");
    ck_assert_str_eq(cfg_warning(c, 2), "s.cfg:1:32: warning: unknown key 'd.dim' in Demo is "
                                        "ignored ('dim' belongs in the Inner block)");
    ck_assert_str_eq(cfg_warning(c, 3),
                     "s.cfg:1:39: warning: unknown key 'd.zzzzzz' in Demo is ignored");
    cfg_free(c);
    ck_assert_int_eq(check("d=[epochs=1; epoch=2]", "d", 1, NULL, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "s.cfg:1:14: error: unknown key 'd.epoch' in Demo (did you mean "
                            "'epochs'?) (strictConfig=true)");
}
END_TEST

START_TEST(typed_reads_and_defaults)
{
    struct pt_err e;
    struct cfg *c =
        load("s.cfg", "sizes=128\nd=[epochs=4; rate=default; flag=1; kind=beta; words=a:b*2]", &e);
    struct cfg_node *d = node_at(c, "d");
    struct cfg_val v;
    ck_assert_int_eq(cfg_schema_get(d, &demo, "epochs", &v, &e), 0);
    ck_assert_int_eq(v.i, 4);
    ck_assert_ptr_nonnull(v.node);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "rate", &v, &e), 0);
    ck_assert_ptr_null(v.node); /* "default" */
    ck_assert(cfg_sched_real(&v, 0) == 0.5);
    ck_assert(cfg_sched_real(&v, 1) == 0.5);
    ck_assert(cfg_sched_real(&v, 2) == 0.1);
    ck_assert(cfg_sched_real(&v, 99) == 0.1);
    cfg_val_free(&v);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "sizes", &v, &e), 0); /* climbs to top level */
    ck_assert_int_eq(cfg_sched_int(&v, 5), 128);
    cfg_val_free(&v);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "flag", &v, &e), 0);
    ck_assert_int_eq(v.b, 1);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "kind", &v, &e), 0);
    ck_assert_int_eq(v.choice, 1);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "words", &v, &e), 0);
    ck_assert_uint_eq(v.n, 3);
    ck_assert_str_eq(v.slist.items[2], "b");
    cfg_val_free(&v);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "perMB", &v, &e), 0);
    ck_assert_ptr_null(v.node); /* optional, no default: absent */
    ck_assert_int_eq(cfg_schema_get(d, &demo, "ratio", &v, &e), 0);
    ck_assert(v.d == 0.5);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "mbFirst", &v, &e), 0);
    ck_assert_int_eq(v.i, 64); /* the default */
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "nonexistent", &v, &e), PT_EINTERNAL);
    cfg_free(c);
    /* CFG_LOCAL keys do not climb; ordinary ones do */
    c = load("s.cfg", "own=outer; flag=1\nd=[epochs=1; in=[own=inner]]", &e);
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "own", &v, &e), 0);
    ck_assert_ptr_null(v.node);
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d.in"), &demo, "own", &v, &e), 0);
    ck_assert_str_eq(v.s, "inner");
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "flag", &v, &e), 0);
    ck_assert_int_eq(v.b, 1);
    cfg_free(c);
}
END_TEST

/* cfg_schema_read: rows store into a struct (types, given flags, setters, nested blocks). */
struct demo_inner {
    int dim;
};
struct demo_out {
    long long epochs;
    struct cfg_val rate;
    int flag, kind, kind_given, twice;
    double ratio;
    char own[8];
    struct demo_inner inner;
    int inner_given;
};

static int set_twice(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    ((struct demo_out *)out)->twice = 2 * (int)v->i;
    return 0;
}

static const struct cfg_key read_inner_keys[] = {
    {.name = "dim", .type = CFG_INT, .def = "3", .help = "d", CFG_OUT(struct demo_inner, dim)},
    {.name = NULL},
};
static const struct cfg_schema read_inner = {.name = "Inner", .keys = read_inner_keys};
static const struct cfg_key read_keys[] = {
    {.name = "epochs", .type = CFG_INT, .flags = CFG_REQUIRED, CFG_OUT(struct demo_out, epochs)},
    {.name = "rate", .type = CFG_REAL_SCHED, .def = "0.5*2:0.1", CFG_OUT(struct demo_out, rate)},
    {.name = "flag", .type = CFG_BOOL, .def = "false", CFG_OUT(struct demo_out, flag)},
    {.name = "kind",
     .type = CFG_ENUM,
     .def = "alpha",
     .choices = "alpha|beta",
     CFG_OUT(struct demo_out, kind),
     CFG_GIVEN(struct demo_out, kind_given)},
    {.name = "period", .type = CFG_INT, .def = "10", .set = set_twice},
    {.name = "syncPeriod", .type = CFG_INT, .alias_of = "period"},
    {.name = "ratio",
     .type = CFG_REAL,
     .def = "0.5",
     .flags = CFG_HAS_MAX,
     .max = 1,
     CFG_OUT(struct demo_out, ratio)},
    {.name = "own", .type = CFG_STRING, .flags = CFG_LOCAL, CFG_OUT(struct demo_out, own)},
    {.name = "Inner",
     .type = CFG_BLOCK,
     .sub = &read_inner,
     CFG_OUT(struct demo_out, inner),
     CFG_GIVEN(struct demo_out, inner_given)},
    {.name = NULL},
};
static const struct cfg_schema read_demo = {.name = "Demo", .keys = read_keys};

/* CFG_FIRST: an integer array whose first element is the value (CNTK's intargvector read
 * by its test and write actions: minibatchSize = 256:1024 evaluates in minibatches of 256);
 * every element must be an integer in range */
START_TEST(first_of_an_array)
{
    static const char *const ok[][2] = {{"d=[epochs=1; mbFirst=256:1024]", "256"},
                                        {"d=[epochs=1; mbFirst=128*2:64]", "128"},
                                        {"d=[epochs=1; mbFirst=(32, 16)]", "32"},
                                        {"d=[epochs=1; mbFirst=512]", "512"}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct pt_err e;
        struct cfg *c = load("s.cfg", ok[i][0], &e);
        struct cfg_val v;
        ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "mbFirst", &v, &e), 0);
        ck_assert_int_eq(v.i, atoll(ok[i][1]));
        cfg_free(c);
    }
    CHECK_ERR("d=[epochs=1; mbFirst=256:x]",
              "s.cfg:1:22: error: d.mbFirst: expected an integer, got \"x\"");
    CHECK_ERR("d=[epochs=1; mbFirst=256:0]",
              "s.cfg:1:22: error: mbFirst: 0 is out of range: must be >= 1");
}
END_TEST

START_TEST(schema_read_fills_structs)
{
    struct pt_err e;
    struct cfg *c =
        load("s.cfg", "flag=1\nd=[epochs=4; kind=beta; syncPeriod=7; own=x; Inner=[dim=5]]", &e);
    struct demo_out o;
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(cfg_schema_read(node_at(c, "d"), &read_demo, &o, &e), 0);
    ck_assert_int_eq(o.epochs, 4);
    ck_assert(cfg_sched_real(&o.rate, 2) == 0.1);
    ck_assert_int_eq(o.flag, 1); /* climbs */
    ck_assert_int_eq(o.kind, 1);
    ck_assert_int_eq(o.kind_given, 1);
    ck_assert_int_eq(o.twice, 14); /* through the alias, into the setter */
    ck_assert(o.ratio == 0.5);
    ck_assert_str_eq(o.own, "x");
    ck_assert_int_eq(o.inner.dim, 5);
    ck_assert_int_eq(o.inner_given, 1);
    cfg_schema_free(&read_demo, &o);
    ck_assert_ptr_null(o.rate.dlist);
    /* errors as cfg_schema_get reports them; NULL block: the defaults only */
    cfg_free(c);
    c = load("s.cfg", "d=[epochs=1; ratio=2]", &e);
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(cfg_schema_read(node_at(c, "d"), &read_demo, &o, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "s.cfg:1:20: error: ratio: 2 is out of range: must be <= 1");
    cfg_schema_free(&read_demo, &o);
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(cfg_schema_read(NULL, &read_demo, &o, &e), 0);
    ck_assert_int_eq(o.epochs, 0);
    ck_assert_int_eq(o.kind_given, 0);
    ck_assert_int_eq(o.twice, 20);
    ck_assert_int_eq(o.inner.dim, 3);
    ck_assert_int_eq(o.inner_given, 0);
    cfg_schema_free(&read_demo, &o);
    cfg_free(c);
}
END_TEST

START_TEST(edit_distance)
{
    ck_assert_uint_eq(cfg_edit_distance("maxEpochs", "maxepochs"), 0);
    ck_assert_uint_eq(cfg_edit_distance("maxEpoch", "maxEpochs"), 1);
    ck_assert_uint_eq(cfg_edit_distance("kitten", "sitting"), 3);
    ck_assert_uint_eq(cfg_edit_distance("", "abc"), 3);
}
END_TEST

TCase *schema_trainer_tcase(void); /* test_schema_trainer.c */

static Suite *suite(void)
{
    Suite *s = suite_create("schema");
    TCase *t = tcase_create("schema");
    tcase_add_test(t, valid_block_passes);
    tcase_add_test(t, type_and_range_errors);
    tcase_add_test(t, exclusive_and_aliases);
    tcase_add_test(t, unknown_keys);
    tcase_add_test(t, typed_reads_and_defaults);
    tcase_add_test(t, first_of_an_array);
    tcase_add_test(t, schema_read_fills_structs);
    tcase_add_test(t, edit_distance);
    suite_add_tcase(s, t);
    suite_add_tcase(s, schema_trainer_tcase());
    return s;
}

int main(void)
{
    return run_suite(suite());
}
