/* Checkpoint container (src/core/blob.c): round trip, atomic replacement, damaged files. */
#include "core/blob.h"
#include "testutil.h"

static const char magic[8] = {'P', 'T', 'T', 'E', 'S', 'T', 0, 1};

static void write_two(const char *path, int version)
{
    struct blob_writer w;
    struct pt_err e;
    pt_err_clear(&e);
    float v[3] = {1.5f, -2, 3};
    ck_assert_int_eq(blob_write_begin(&w, path, magic, (uint32_t)version, &e), 0);
    ck_assert_int_eq(blob_write_section(&w, "params", v, sizeof v, &e), 0);
    ck_assert_int_eq(blob_write_section(&w, "empty", NULL, 0, &e), 0);
    ck_assert_msg(blob_write_commit(&w, &e) == 0, "%s", e.msg);
}

START_TEST(round_trip)
{
    const char *dir = enter_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/sub/dir/m.ckp", dir); /* directories are created */
    write_two(path, 3);
    struct blob b;
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(blob_read(path, magic, 3, "checkpoint", &b, &e), 0);
    ck_assert_uint_eq(b.nsec, 2);
    const struct blob_section *s = blob_find(&b, "params");
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->len, 12);
    ck_assert(((const float *)s->data)[1] == -2.0f);
    ck_assert_uint_eq(blob_find(&b, "empty")->len, 0);
    ck_assert_ptr_null(blob_find(&b, "nothere"));
    blob_free(&b);
    /* no temporary file is left behind */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    ck_assert_int_ne(access(tmp, F_OK), 0);
}
END_TEST

START_TEST(damaged_files)
{
    const char *dir = enter_tmpdir();
    char path[512], cut[512];
    snprintf(path, sizeof path, "%s/m.ckp", dir);
    snprintf(cut, sizeof cut, "%s/cut.ckp", dir);
    write_two(path, 3);
    FILE *f = fopen(path, "rb");
    unsigned char bytes[256];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    struct blob b;
    struct pt_err e;
    char want[700];
    /* every truncation is refused */
    for (size_t len = 0; len < n; len++) {
        f = fopen(cut, "wb");
        fwrite(bytes, 1, len, f);
        fclose(f);
        pt_err_clear(&e);
        ck_assert_int_eq(blob_read(cut, magic, 3, "checkpoint", &b, &e), PT_EUSER);
        ck_assert_ptr_nonnull(strstr(e.msg, cut));
    }
    /* every flipped byte is refused */
    for (size_t i = 0; i < n; i++) {
        bytes[i] ^= 0x40;
        f = fopen(cut, "wb");
        fwrite(bytes, 1, n, f);
        fclose(f);
        pt_err_clear(&e);
        ck_assert_int_eq(blob_read(cut, magic, 3, "checkpoint", &b, &e), PT_EUSER);
        bytes[i] ^= 0x40;
    }
    snprintf(want, sizeof want,
             "%s: error: checkpoint file format version 3; this trainer reads version 4", path);
    pt_err_clear(&e);
    ck_assert_int_eq(blob_read(path, magic, 4, "checkpoint", &b, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, want);
    write_file(dir, "foreign.ckp", "hello, this is not a checkpoint at all");
    snprintf(cut, sizeof cut, "%s/foreign.ckp", dir);
    pt_err_clear(&e);
    ck_assert_int_eq(blob_read(cut, magic, 3, "model", &b, &e), PT_EUSER);
    snprintf(want, sizeof want, "%s: error: not a partrain model file (wrong magic number)", cut);
    ck_assert_str_eq(e.msg, want);
    bytes[n - 1] ^= 1;
    f = fopen(cut, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    pt_err_clear(&e);
    ck_assert_int_eq(blob_read(cut, magic, 3, "model", &b, &e), PT_EUSER);
    snprintf(want, sizeof want,
             "%s: error: model file is corrupted or truncated (checksum mismatch)", cut);
    ck_assert_str_eq(e.msg, want);
}
END_TEST

START_TEST(abort_keeps_old_file)
{
    const char *dir = enter_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/m.ckp", dir);
    write_two(path, 3);
    struct blob_writer w;
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(blob_write_begin(&w, path, magic, 3, &e), 0);
    ck_assert_int_eq(blob_write_section(&w, "half", "x", 1, &e), 0);
    blob_write_abort(&w);
    struct blob b;
    ck_assert_int_eq(blob_read(path, magic, 3, "checkpoint", &b, &e), 0);
    ck_assert_ptr_nonnull(blob_find(&b, "params"));
    blob_free(&b);
    /* a directory where the file should go */
    snprintf(path, sizeof path, "%s", dir);
    pt_err_clear(&e);
    ck_assert_int_eq(blob_read(path, magic, 3, "checkpoint", &b, &e), PT_EUSER);
    ck_assert_ptr_nonnull(strstr(e.msg, "cannot read checkpoint file"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("blob");
    TCase *t = tcase_create("blob");
    tcase_add_test(t, round_trip);
    tcase_add_test(t, damaged_files);
    tcase_add_test(t, abort_keeps_old_file);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
