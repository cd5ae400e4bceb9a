/* The command line (src/train/cmdline.c): order, configFile=, currentDirectory=, flags. */
#include <stdarg.h>
#include "testutil.h"
#include "train/train.h"

static int apply(struct cfg *c, struct cmdline *cl, struct pt_err *e, int argc, ...)
{
    char *argv[32];
    va_list ap;
    va_start(ap, argc);
    argv[0] = "trainer";
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    pt_err_clear(e);
    return cmdline_apply(argc, argv, c, cl, e);
}

START_TEST(order_and_files)
{
    const char *dir = enter_tmpdir();
    write_file(dir, "a.cfg", "x=1\ny=1\nblk=[k=a]\n");
    write_file(dir, "b.cfg", "y=2\nblk=[j=b]\n");
    write_file(dir, "c.cfg", "z=3\n");
    struct cfg *c = cfg_new();
    struct cmdline cl;
    struct pt_err e;
    ck_assert_int_eq(apply(c, &cl, &e, 6, "x=0", "configFile=a.cfg+b.cfg", "blk.k=cmd",
                           "configFile=c.cfg", "--print-config"),
                     0);
    ck_assert_str_eq(val(c, "x"), "1"); /* the file came after x=0 */
    ck_assert_str_eq(val(c, "y"), "2");
    ck_assert_str_eq(val(c, "z"), "3");
    ck_assert_str_eq(val(c, "blk.k"), "cmd");
    ck_assert_str_eq(val(c, "blk.j"), "b");
    ck_assert_int_eq(cl.print_config, 1);
    ck_assert_int_eq(cl.config_files, 3);
    cfg_free(c);
}
END_TEST

START_TEST(config_file_errors)
{
    const char *dir = enter_tmpdir();
    write_file(dir, "a.cfg", "x=1\n");
    struct cfg *c = cfg_new();
    struct cmdline cl;
    struct pt_err e;
    ck_assert_int_eq(apply(c, &cl, &e, 3, "configFile=a.cfg", "configFile=./a.cfg"), PT_EUSER);
    ck_assert_str_eq(e.msg,
                     "<command line>:arg2: error: config file './a.cfg' is given more than once");
    cfg_free(c);
    c = cfg_new();
    ck_assert_int_eq(apply(c, &cl, &e, 2, "configFile=a.cfg+a.cfg"), PT_EUSER);
    ck_assert_str_eq(e.msg,
                     "<command line>:arg1: error: config file 'a.cfg' is given more than once");
    cfg_free(c);
    c = cfg_new();
    ck_assert_int_eq(apply(c, &cl, &e, 2, "configFile=nope.cfg"), PT_EUSER);
    ck_assert_str_eq(e.msg, "<command line>:arg1: error: cannot open config file 'nope.cfg': No "
                            "such file or directory");
    cfg_free(c);
    c = cfg_new();
    ck_assert_int_eq(apply(c, &cl, &e, 2, "configFile=a.cfg+"), PT_EUSER);
    ck_assert_str_eq(e.msg,
                     "<command line>:arg1: error: configFile=: empty file name in the '+' list");
    cfg_free(c);
    c = cfg_new();
    ck_assert_int_eq(apply(c, &cl, &e, 3, "x=1", "--frobnicate"), PT_EUSER);
    ck_assert_str_eq(
        e.msg, "<command line>:arg2: error: unknown option '--frobnicate' (see trainer --help)");
    cfg_free(c);
    c = cfg_new();
    ck_assert_int_eq(apply(c, &cl, &e, 2, "a=[b=1"), PT_EUSER);
    ck_assert_str_eq(
        e.msg, "<command line>:arg1: error: unterminated '[' (no matching ']' before the end)");
    cfg_free(c);
}
END_TEST

START_TEST(current_directory)
{
    const char *dir = enter_tmpdir();
    char sub[512];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    write_file(sub, "s.cfg", "where=sub\ninclude=inc.cfg\n");
    write_file(sub, "inc.cfg", "included=yes\n");
    struct cfg *c = cfg_new();
    struct cmdline cl;
    struct pt_err e;
    ck_assert_int_eq(apply(c, &cl, &e, 3, "currentDirectory=sub", "configFile=s.cfg"), 0);
    ck_assert_str_eq(val(c, "where"), "sub");
    ck_assert_str_eq(val(c, "included"), "yes");
    char cwd[512];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_str_eq(cwd, sub);
    ck_assert_int_eq(apply(c, &cl, &e, 2, "currentDirectory=/no/such/dir"), PT_EUSER);
    ck_assert_str_eq(
        e.msg,
        "<command line>:arg1: error: currentDirectory=/no/such/dir: No such file or directory");
    cfg_free(c);
}
END_TEST

START_TEST(flags_only)
{
    struct cmdline cl;
    char *argv[] = {"trainer", "x=1", "--help", "SGD", "--version", NULL};
    cmdline_flags(5, argv, &cl);
    ck_assert_int_eq(cl.help, 1);
    ck_assert_str_eq(cl.help_topic, "SGD");
    ck_assert_int_eq(cl.version, 1);
    char *argv2[] = {"trainer", "--help=reader", "--man-keys", NULL};
    cmdline_flags(3, argv2, &cl);
    ck_assert_str_eq(cl.help_topic, "reader");
    ck_assert_int_eq(cl.man_keys, 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cmdline");
    TCase *t = tcase_create("cmdline");
    tcase_add_test(t, order_and_files);
    tcase_add_test(t, config_file_errors);
    tcase_add_test(t, current_directory);
    tcase_add_test(t, flags_only);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
