/* Shared by tests/test_reader.c and tests/test_reader_config.c: a scratch directory per
 * test (each test sets dir with enter_tmpdir) and readers over files written there. */
#ifndef PT_TESTS_TEST_READER_H
#define PT_TESTS_TEST_READER_H

#include "core/log.h"
#include "reader/reader.h"
#include "testutil.h"

static const char *dir;

/* A reader config over file `name` in dir with inputs x (dense, dim 2) and y (dense 1). */
static inline struct reader_config conf(const char *name)
{
    struct reader_config rc;
    memset(&rc, 0, sizeof rc);
    snprintf(rc.file, sizeof rc.file, "%s/%s", dir, name);
    rc.file_origin = (struct cfg_origin){.file = "r.cfg", .line = 3, .col = 5};
    rc.ninputs = 2;
    snprintf(rc.inputs[0].name, 64, "x");
    snprintf(rc.inputs[0].alias, 64, "x");
    rc.inputs[0].dim = 2;
    snprintf(rc.inputs[1].name, 64, "y");
    snprintf(rc.inputs[1].alias, 64, "y");
    rc.inputs[1].dim = 1;
    rc.window = 128;
    rc.chunk_bytes = 32u << 20;
    return rc;
}

/* n sequences; sequence i has 1 + i % lens rows "i |x i t |y i" (y on the first row). */
static inline void write_seqs(const char *name, int n, int lens, int ids)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < n; i++)
        for (int t = 0; t < 1 + (lens ? i % lens : 0); t++) {
            if (ids)
                fprintf(f, "%d ", i);
            fprintf(f, "|x %d %d", i, t);
            if (t == 0)
                fprintf(f, " |y %d", i);
            fputc('\n', f);
        }
    fclose(f);
}

static inline struct reader *open_ok(const struct reader_config *rc)
{
    struct reader *r = NULL;
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_msg(reader_open(rc, NULL, &r, &e) == 0, "%s", e.msg);
    return r;
}

/* test_reader_config.c and test_reader_lm.c: their tests into t. */
void reader_config_tests(TCase *t);
void reader_lm_tests(TCase *t);

#endif
