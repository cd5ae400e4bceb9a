/* The config language, part 2 (parsers/cfg*): files (include=, .ini through inih),
 * --print-config, and hostile input (NUL bytes, invalid UTF-8, 10 MB lines, deep nesting,
 * many keys). Syntax, values and merges are in test_cfg.c. */
#include "testutil.h"

START_TEST(nul_and_invalid_utf8)
{
    struct pt_err e;
    struct cfg *c = cfg_new();
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_load_string(c, "z.cfg", "a=1\nb=x\0y\n", 8, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "z.cfg:2:4: error: NUL byte in config text");
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_load_string(c, "u.cfg", "a=1\n\nbb=\xff\xfe", 9, &e), PT_EUSER);
    ck_assert_str_eq(e.msg,
                     "u.cfg:3:4: error: invalid UTF-8 (byte 0xFF); config files must be UTF-8");
    pt_err_clear(&e);
    /* overlong encoding and a lone continuation byte */
    ck_assert_int_eq(cfg_load_string(c, "u.cfg", "a=\xC0\xAF", 4, &e), PT_EUSER);
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_load_string(c, "u.cfg", "a=\x80", 3, &e), PT_EUSER);
    pt_err_clear(&e);
    /* surrogate half */
    ck_assert_int_eq(cfg_load_string(c, "u.cfg", "a=\xED\xA0\x80", 5, &e), PT_EUSER);
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_apply_arg(c, "a=\xff", 7, &e), PT_EUSER);
    ck_assert_str_eq(
        e.msg, "<command line>:arg7: error: invalid UTF-8 (byte 0xFF); config files must be UTF-8");
    cfg_free(c);
}
END_TEST

START_TEST(ten_megabyte_line)
{
    size_t n = 10u << 20;
    char *text = malloc(n + 16);
    memcpy(text, "big=", 4);
    memset(text + 4, 'x', n);
    memcpy(text + 4 + n, "\nz=1", 5);
    struct pt_err e;
    struct cfg *c = load("big.cfg", text, &e);
    ck_assert_int_eq(e.code, 0);
    ck_assert_uint_eq(strlen(val(c, "big")), n);
    ck_assert_str_eq(val(c, "z"), "1");
    /* an error about it stays short */
    long long i;
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_to_int(node_at(c, "big"), val(c, "big"), &i, &e), PT_EUSER);
    ck_assert_uint_lt(strlen(e.msg), 200);
    cfg_free(c);
    /* 10 MB without any newline, as a key */
    memset(text, 'k', n);
    text[n] = '\0';
    c = load("big.cfg", text, &e);
    ck_assert_int_eq(e.code, 0);
    ck_assert_str_eq(cfg_raw(cfg_first(cfg_root(c))), "true");
    cfg_free(c);
    free(text);
}
END_TEST

START_TEST(deep_nesting)
{
    size_t depth = 100000;
    char *text = malloc(depth * 4 + 16);
    size_t o = 0;
    for (size_t i = 0; i < depth; i++) {
        memcpy(text + o, "a=[", 3);
        o += 3;
    }
    for (size_t i = 0; i < depth; i++)
        text[o++] = ']';
    text[o] = '\0';
    struct pt_err e;
    struct cfg *c = load("deep.cfg", text, &e);
    ck_assert_int_eq(e.code, PT_EUSER);
    ck_assert_str_eq(e.msg, "deep.cfg:1:771: error: brackets nested deeper than 256 levels");
    cfg_free(c);
    /* 200 levels are fine, and printing them works */
    o = 0;
    for (size_t i = 0; i < 200; i++) {
        memcpy(text + o, "a=[", 3);
        o += 3;
    }
    memcpy(text + o, "x=1", 3);
    o += 3;
    for (size_t i = 0; i < 200; i++)
        text[o++] = ']';
    text[o] = '\0';
    c = load("deep.cfg", text, &e);
    ck_assert_int_eq(e.code, 0);
    FILE *f = fopen("/dev/null", "w");
    int problems = 0;
    ck_assert_int_eq(cfg_print(c, f, &problems, &e), 0);
    fclose(f);
    cfg_free(c);
    /* dotted paths are bounded too */
    c = cfg_new();
    o = 0;
    for (size_t i = 0; i < 300; i++) {
        memcpy(text + o, "a.", 2);
        o += 2;
    }
    memcpy(text + o, "b=1", 4);
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_apply_arg(c, text, 1, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "<command line>:arg1: error: dotted key has more than 256 parts");
    cfg_free(c);
    free(text);
}
END_TEST

START_TEST(many_keys)
{
    size_t n = 5000;
    char *text = malloc(n * 16);
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        o += (size_t)sprintf(text + o, "k%zu=%zu\n", i, i);
    struct pt_err e;
    struct cfg *c = load("many.cfg", text, &e);
    ck_assert_int_eq(e.code, 0);
    ck_assert_str_eq(val(c, "k4999"), "4999");
    cfg_free(c);
    free(text);
}
END_TEST

START_TEST(include_files)
{
    const char *dir = enter_tmpdir();
    write_file(dir, "main.cfg",
               "a=1\ninclude=inc1.cfg+inc2.cfg\nb=2\nblk=[\n  include=inc3.cfg\n]\n");
    write_file(dir, "inc1.cfg", "x=from1\na=overridden\n");
    write_file(dir, "inc2.cfg", "y=from2\ninclude=inc1.cfg\n");
    write_file(dir, "inc3.cfg", "z=in-block\n");
    struct cfg *c = cfg_new();
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_load_file(c, "main.cfg", NULL, &e), 0);
    ck_assert_str_eq(val(c, "a"), "overridden");
    ck_assert_str_eq(val(c, "x"), "from1");
    ck_assert_str_eq(val(c, "y"), "from2");
    ck_assert_str_eq(val(c, "blk.z"), "in-block");
    ck_assert_uint_eq(cfg_warning_count(c), 1);
    ck_assert_str_eq(
        cfg_warning(c, 0),
        "inc2.cfg:2:1: warning: config file 'inc1.cfg' was already read; not including it again");
    char buf[64];
    ck_assert_str_eq(cfg_origin_str(cfg_origin_of(node_at(c, "y")), buf, sizeof buf),
                     "inc2.cfg:1:1");
    cfg_free(c);
}
END_TEST

START_TEST(include_loop_and_errors)
{
    const char *dir = enter_tmpdir();
    write_file(dir, "a.cfg", "va=1\ninclude=b.cfg\n");
    write_file(dir, "b.cfg", "vb=2\ninclude=a.cfg\n");
    write_file(dir, "m.cfg", "include=missing.cfg\n");
    write_file(dir, "v.cfg", "d=x\ninclude=$d$.cfg\n");
    struct cfg *c = cfg_new();
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_load_file(c, "a.cfg", NULL, &e), 0);
    ck_assert_str_eq(val(c, "vb"), "2");
    ck_assert_uint_eq(cfg_warning_count(c), 1);
    cfg_free(c);
    c = cfg_new();
    ck_assert_int_eq(cfg_load_file(c, "m.cfg", NULL, &e), PT_EUSER);
    ck_assert_str_eq(
        e.msg,
        "m.cfg:1:1: error: cannot open config file 'missing.cfg': No such file or directory");
    cfg_free(c);
    c = cfg_new();
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_load_file(c, "v.cfg", NULL, &e), PT_EUSER);
    ck_assert_str_eq(
        e.msg,
        "v.cfg:2:1: error: variables ($name$) are not allowed in include=; give the path itself");
    cfg_free(c);
    c = cfg_new();
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_load_file(c, "a.cfg", NULL, &e), 0);
    ck_assert_int_eq(cfg_load_file(c, "a.cfg", NULL, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "error: config file 'a.cfg' is given more than once");
    cfg_free(c);
    c = cfg_new();
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_load_file(c, dir, NULL, &e), PT_EUSER);
    ck_assert_ptr_nonnull(strstr(e.msg, "is a directory"));
    cfg_free(c);
}
END_TEST

START_TEST(ini_files)
{
    const char *dir = enter_tmpdir();
    write_file(dir, "x.ini",
               "; comment\n"
               "command = train\n"
               "[train]\n"
               "action = train\n"
               "[train.SGD]\n"
               "maxEpochs = 3\n"
               "minibatchSize = 64*2:128\n"
               "[train.reader]\n"
               "file = \"a b.ctf\"\n"
               "input = [ features = [ dim = 784 ; format = dense ] ]\n"
               "[Train.sgd]\n"
               "lr = 0.1 # inline comment\n"
               "semi = a;b\n");
    struct cfg *c = cfg_new();
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(cfg_load_file(c, "x.ini", NULL, &e), 0);
    ck_assert_str_eq(val(c, "command"), "train");
    ck_assert_str_eq(val(c, "train.SGD.maxEpochs"), "3");
    ck_assert_str_eq(val(c, "train.SGD.minibatchSize"), "64*2:128");
    ck_assert_str_eq(val(c, "train.SGD.lr"), "0.1");
    ck_assert_str_eq(val(c, "train.SGD.semi"), "a;b");
    ck_assert_str_eq(val(c, "train.reader.file"), "a b.ctf");
    ck_assert_str_eq(val(c, "train.SGD.semi"), "a;b");
    ck_assert_str_eq(val(c, "train.reader.input.features.dim"), "784");
    char buf[64];
    ck_assert_str_eq(
        cfg_origin_str(cfg_origin_of(node_at(c, "train.SGD.maxEpochs")), buf, sizeof buf),
        "x.ini:6:1");
    ck_assert_str_eq(
        cfg_origin_str(cfg_value_origin(node_at(c, "train.SGD.maxEpochs")), buf, sizeof buf),
        "x.ini:6:13");
    cfg_free(c);

    /* a long line, and a syntax error with its line */
    char *longline = malloc(5000);
    strcpy(longline, "[s]\nk = ");
    memset(longline + 8, 'v', 3000);
    strcpy(longline + 3008, "\nafter = 1\n");
    write_file(dir, "long.ini", longline);
    free(longline);
    c = cfg_new();
    ck_assert_msg(cfg_load_file(c, "long.ini", NULL, &e) == 0, "%s", e.msg);
    ck_assert_uint_eq(strlen(val(c, "s.k")), 3000);
    ck_assert_str_eq(cfg_origin_str(cfg_origin_of(node_at(c, "s.after")), buf, sizeof buf),
                     "long.ini:3:1");
    cfg_free(c);
    write_file(dir, "bad.ini", "[s]\nok = 1\nthis line has no equals\n");
    c = cfg_new();
    ck_assert_int_eq(cfg_load_file(c, "bad.ini", NULL, &e), PT_EUSER);
    ck_assert_str_eq(e.msg,
                     "bad.ini:3:1: error: expected '[section]' or 'key = value' (.ini syntax)");
    cfg_free(c);
}
END_TEST

START_TEST(print_config)
{
    LOAD_OK(c, "p.cfg",
            "Root=/r\ntrain=[SGD=[maxEpochs=5]; file=$Root$/x; bad=$nope$; s=\"a;b\"]\n");
    ck_assert_int_eq(cfg_apply_arg(c, "train.SGD.maxEpochs=3", 2, &e), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int problems = 0;
    ck_assert_int_eq(cfg_print(c, f, &problems, &e), 0);
    fclose(f);
    ck_assert_int_eq(problems, 1);
    ck_assert_str_eq(buf, "Root = /r    # p.cfg:1:1\n"
                          "train = [    # p.cfg:2:1\n"
                          "    SGD = [    # p.cfg:2:8\n"
                          "        maxEpochs = 3    # <command line>:arg2\n"
                          "    ]\n"
                          "    file = /r/x    # p.cfg:2:27\n"
                          "    bad = $nope$    # p.cfg:2:46: error: unknown variable $nope$ in the "
                          "value of 'train.bad'\n"
                          "    s = \"a;b\"    # p.cfg:2:54\n"
                          "]\n");
    free(buf);
    cfg_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cfg_files");
    TCase *t = tcase_create("files");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, nul_and_invalid_utf8);
    tcase_add_test(t, ten_megabyte_line);
    tcase_add_test(t, deep_nesting);
    tcase_add_test(t, many_keys);
    tcase_add_test(t, include_files);
    tcase_add_test(t, include_loop_and_errors);
    tcase_add_test(t, ini_files);
    tcase_add_test(t, print_config);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
