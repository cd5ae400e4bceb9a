/* The CTF line parser (parsers/ctf.c). */
#include <math.h>

#include "parsers/ctf.h"
#include "testutil.h"

static const struct ctf_input in3[] = {
    {.alias = "features", .dim = 4, .sparse = 0},
    {.alias = "labels", .dim = 3, .sparse = 0},
    {.alias = "words", .dim = 100, .sparse = 1},
};

struct fixture {
    struct ctf_column cols[3];
    struct ctf_line line;
    struct pt_err e;
};

static int parse(struct fixture *f, const char *text, int ids)
{
    struct ctf_where at = {.file = "d.ctf", .line = 7};
    pt_err_clear(&f->e);
    return ctf_parse_line(in3, 3, f->cols, text, strlen(text), ids, &at, &f->line, &f->e);
}

static void release(struct fixture *f)
{
    for (int i = 0; i < 3; i++)
        ctf_column_free(&f->cols[i]);
}

START_TEST(floats_match_strtod)
{
    const char *fixed[] = {"0",
                           "1",
                           "-1",
                           "0.5",
                           ".5",
                           "-.25",
                           "1e3",
                           "1E-3",
                           "+2.5e+2",
                           "0.003922",
                           "123456789",
                           "3.4028234e38",
                           "1e-45",
                           "1.17549435e-38",
                           "0.1",
                           "0.2",
                           "0.30000001",
                           "12345678901234567890123",
                           "0.000000000000000000000000000001",
                           "9.999999e-5",
                           "00012.50",
                           "5e22",
                           "5e23",
                           "7e-23"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        float got = -1;
        const char *s = fixed[i], *end = s + strlen(s);
        ck_assert_msg(ctf_parse_float(s, end, &got) == end, "%s not parsed", s);
        float want = (float)strtod(s, NULL);
        ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "%s: %.9g != %.9g", s, got, want);
    }
    /* random decimal strings of every shape */
    unsigned seed = 12345;
    char buf[64];
    for (int i = 0; i < 200000; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned m = (seed >> 4) % 100000000u;
        seed = seed * 1103515245u + 12345u;
        int frac = (int)((seed >> 8) % 9), ex = (int)((seed >> 12) % 61) - 30;
        int form = (int)((seed >> 20) % 3);
        if (form == 0)
            snprintf(buf, sizeof buf, "%u", m);
        else if (form == 1)
            snprintf(buf, sizeof buf, "%s%u.%0*u", (seed & 1) ? "-" : "", m / 1000, frac ? frac : 1,
                     m % 1000);
        else
            snprintf(buf, sizeof buf, "%u.%ue%d", m % 10, m, ex);
        float got, want = (float)strtod(buf, NULL);
        const char *end = buf + strlen(buf);
        ck_assert_msg(ctf_parse_float(buf, end, &got) == end, "%s not parsed", buf);
        ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "%s: %.9g != %.9g", buf, got, want);
    }
    const char *bad[] = {"", "-", ".", "e5", "1e", "1e+", "inf", "nan", "1e39", "-1e400"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        float v;
        const char *s = bad[i], *end = s + strlen(s);
        const char *r = ctf_parse_float(s, end, &v);
        ck_assert_msg(r == NULL || r != end, "'%s' accepted", s);
    }
}
END_TEST

START_TEST(dense_sparse_and_ids)
{
    struct fixture f = {0};
    ck_assert_int_eq(parse(&f, "12 |labels 0 1 0 |features 1 2.5 -3 4e1 |words 3:1 99:0.5\r", 1),
                     0);
    ck_assert_int_eq(f.line.has_id, 1);
    ck_assert_uint_eq(f.line.id, 12);
    ck_assert_uint_eq(f.line.rows, 7);
    ck_assert_uint_eq(f.cols[0].rows, 1);
    ck_assert(f.cols[0].val[1] == 2.5f && f.cols[0].val[3] == 40.0f);
    ck_assert(f.cols[1].val[1] == 1.0f);
    ck_assert_uint_eq(f.cols[2].nnz, 2);
    ck_assert_int_eq(f.cols[2].idx[1], 99);
    ck_assert(f.cols[2].val[1] == 0.5f);
    ck_assert_uint_eq(f.cols[2].row_end[0], 2);
    /* a second line: only features (a sequence's later row), an empty sparse row */
    ck_assert_int_eq(parse(&f, "12\t|features 5 6 7 8 |words", 1), 0);
    ck_assert_uint_eq(f.cols[0].rows, 2);
    ck_assert_uint_eq(f.cols[1].rows, 1);
    ck_assert_uint_eq(f.cols[2].rows, 2);
    ck_assert_uint_eq(f.cols[2].row_end[1], 2);
    ck_assert(f.cols[0].val[7] == 8.0f);
    release(&f);
}
END_TEST

START_TEST(comments_unknown_padding_blank)
{
    struct fixture f = {0};
    ck_assert_int_eq(parse(&f, "|# a comment, with a #hash |features 1 2 |other 9 9 9 |#x", 0), 0);
    ck_assert_uint_eq(f.line.rows, 1);
    ck_assert_uint_eq(f.line.padded, 1); /* 2 of 4 values: zero-padded */
    ck_assert(f.cols[0].val[2] == 0.0f && f.cols[0].val[3] == 0.0f);
    ck_assert_int_eq(parse(&f, "   \t ", 0), 0);
    ck_assert_int_eq(f.line.empty, 1);
    ck_assert_int_eq(parse(&f, "|#only a comment", 1), 0);
    ck_assert_int_eq(f.line.empty, 1);
    ck_assert_int_eq(parse(&f, "|unknown 1 2 3", 0), 0);
    ck_assert_int_eq(f.line.empty, 1);
    ck_assert_uint_eq(f.cols[0].rows, 1);
    release(&f);
}
END_TEST

START_TEST(errors_and_rollback)
{
    struct fixture f = {0};
    ck_assert_int_eq(parse(&f, "|features 1 2 3 4", 0), 0);
    const struct {
        const char *text;
        int ids;
        const char *msg;
    } cases[] = {
        {"|features 1 2 3 4 5", 0,
         "d.ctf:7:19: error: input 'features': more values than its dim, got \"5\""},
        {"|labels 1 0 0 |features 1 2x", 0,
         "d.ctf:7:27: error: input 'features': expected a number, got \"2x\""},
        {"|words 3:1 100:1", 0,
         "d.ctf:7:12: error: input 'words': sparse index not below its dim, got \"100:1\""},
        {"|words 3-1", 0, "d.ctf:7:8: error: input 'words': expected index:value, got \"3-1\""},
        {"|words 3:", 0, "d.ctf:7:10: error: input 'words': expected a number after ':', got \"\""},
        {"|features 1 |features 2", 0,
         "d.ctf:7:14: error: input 'features': input appears twice on one line, got \"features\""},
        {"features 1 2", 0, "d.ctf:7:1: error: expected '|' and an input name, got \"features\""},
        {"| 1 2", 0, "d.ctf:7:2: error: '|' must be followed by an input name, got \"\""},
        {"5 |features 1", 0,
         "d.ctf:7:1: error: unexpected sequence id (this file has none: its first line starts with "
         "'|'), got \"5\""},
        {"|features 1", 1,
         "d.ctf:7:1: error: expected a sequence id at the start of the line, got \"|features\""},
        {"5x |features 1", 1, "d.ctf:7:1: error: expected a sequence id (digits), got \"5x\""},
        {"|labels 1 \xff", 0,
         "d.ctf:7:11: error: input 'labels': expected a number, got \"\\xFF\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(parse(&f, cases[i].text, cases[i].ids), PT_EUSER);
        ck_assert_str_eq(f.e.msg, cases[i].msg);
        /* nothing of the bad line stays */
        ck_assert_uint_eq(f.cols[0].rows, 1);
        ck_assert_uint_eq(f.cols[1].rows, 0);
        ck_assert_uint_eq(f.cols[2].rows, 0);
        ck_assert_uint_eq(f.cols[2].nnz, 0);
    }
    release(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ctf");
    TCase *t = tcase_create("ctf");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, floats_match_strtod);
    tcase_add_test(t, dense_sparse_and_ids);
    tcase_add_test(t, comments_unknown_padding_blank);
    tcase_add_test(t, errors_and_rollback);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
