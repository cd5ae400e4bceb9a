/* Helpers shared by the Check tests (header-only; each test program includes it once). */
#ifndef PT_TESTS_TESTUTIL_H
#define PT_TESTS_TESTUTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parsers/cfg.h"

/* Parse text as file `name`; the error (if any) lands in *e. Always returns a config. */
static inline struct cfg *load(const char *name, const char *text, struct pt_err *e)
{
    struct cfg *c = cfg_new();
    ck_assert_ptr_nonnull(c);
    pt_err_clear(e);
    cfg_load_string(c, name, text, strlen(text), e);
    return c;
}

/* Parse text into a new config `c`, failing the test on any error (declares e and c). */
#define LOAD_OK(c, name, text)                                                                     \
    struct pt_err e;                                                                               \
    struct cfg *c = load(name, text, &e);                                                          \
    ck_assert_msg(e.code == 0, "unexpected error: %s", e.msg)

/* Node at dotted path (exact blocks, no climbing), or NULL. Errors fail the test. */
static inline struct cfg_node *node_at(struct cfg *c, const char *path)
{
    char buf[512];
    struct pt_err e;
    pt_err_clear(&e);
    snprintf(buf, sizeof buf, "%s", path);
    struct cfg_node *cur = cfg_root(c), *n = NULL;
    for (char *tok = strtok(buf, "."); tok; tok = strtok(NULL, ".")) {
        if (!cfg_is_block(cur))
            return NULL;
        int rc = cfg_find_local(cur, tok, &n, &e);
        ck_assert_msg(rc == 0, "lookup of %s failed: %s", path, e.msg);
        if (!n)
            return NULL;
        cur = n;
    }
    return cur;
}

/* Resolved value at dotted path; "<missing>" or "<error: msg>" (static buffer). */
static inline const char *val(struct cfg *c, const char *path)
{
    static char out[4096];
    struct cfg_node *n = node_at(c, path);
    if (!n)
        return "<missing>";
    if (cfg_is_block(n))
        return "<block>";
    struct pt_err e;
    pt_err_clear(&e);
    const char *v = NULL;
    if (cfg_value(n, &v, &e)) {
        snprintf(out, sizeof out, "<error: %s>", e.msg);
        return out;
    }
    return v;
}

/* Write a file under dir. */
static inline void write_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(text, 1, strlen(text), f);
    fclose(f);
}

/* A fresh temporary directory, made the current directory. Returns its path (static). */
static inline const char *enter_tmpdir(void)
{
    static char dir[256];
    snprintf(dir, sizeof dir, "/tmp/pt-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(chdir(dir), 0);
    return dir;
}

static inline int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
