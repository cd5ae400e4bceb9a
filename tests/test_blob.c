/* Checkpoint container (src/core/blob.c): round trip, atomic replacement, damaged files;
 * the safe writes under it (src/core/fs.c): no symlink followed, unique temporaries, stale
 * temporaries of dead processes removed. */
#include <dirent.h>
#include <sys/wait.h>

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

/* Entries of dir besides . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* This host's name as a temporary's name carries it. */
static void host_tag(char *buf, size_t size)
{
    char h[256] = "";
    gethostname(h, sizeof h - 1);
    size_t i = 0;
    for (; h[i] && i + 1 < size && i < 64; i++)
        buf[i] = (h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' && h[i] <= 'Z') ||
                         (h[i] >= '0' && h[i] <= '9') || h[i] == '-' || h[i] == '_'
                     ? h[i]
                     : '_';
    buf[i] = '\0';
}

static void touch(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int same_text(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
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
    char sub[600];
    snprintf(sub, sizeof sub, "%s/sub/dir", dir);
    ck_assert_int_eq(entries(sub), 1);
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

/* A symlink at the target: refused, the file it points to unchanged, nothing left. */
START_TEST(symlink_target_refused)
{
    const char *dir = enter_tmpdir();
    ck_assert_int_eq(mkdir("d", 0755), 0);
    touch("victim", "precious");
    ck_assert_int_eq(symlink("../victim", "d/m.ckp"), 0);
    struct blob_writer w;
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(blob_write_begin(&w, "d/m.ckp", magic, 3, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "d/m.ckp: error: cannot write checkpoint: it is a symbolic link"),
                  "%s", e.msg);
    ck_assert(same_text("victim", "precious"));
    ck_assert_int_eq(entries("d"), 1);
    /* nor a directory */
    ck_assert_int_eq(mkdir("d/x.ckp", 0755), 0);
    pt_err_clear(&e);
    ck_assert_int_eq(blob_write_begin(&w, "d/x.ckp", magic, 3, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "it exists and is not a regular file"), "%s", e.msg);
    (void)dir;
}
END_TEST

/* The temporary: .<base>.tmp.<host>.<pid>.<6 chars>, a new file, mode 0644 less umask. */
START_TEST(temporary_name)
{
    const char *dir = enter_tmpdir();
    char host[80], want[200];
    host_tag(host, sizeof host);
    snprintf(want, sizeof want, ".m.ckp.tmp.%s.%ld.", host, (long)getpid());
    struct blob_writer w;
    struct pt_err e;
    pt_err_clear(&e);
    mode_t old = umask(022);
    ck_assert_int_eq(blob_write_begin(&w, "m.ckp", magic, 3, &e), 0);
    umask(old);
    ck_assert_int_eq(strncmp(strrchr(w.out.tmp, '/') ? strrchr(w.out.tmp, '/') + 1 : w.out.tmp,
                             want, strlen(want)),
                     0);
    ck_assert_uint_eq(strlen(w.out.tmp), strlen(want) + 6);
    struct stat st;
    ck_assert_int_eq(lstat(w.out.tmp, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_int_eq(st.st_mode & 0777, 0644);
    blob_write_abort(&w);
    ck_assert_int_eq(entries(dir), 0);
}
END_TEST

static void count_removed(void *arg, const char *name)
{
    (void)name;
    ++*(int *)arg;
}

/* Only temporaries of this host whose process is gone are removed. */
START_TEST(stale_temporaries)
{
    enter_tmpdir();
    char host[80], name[300];
    host_tag(host, sizeof host);
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
    snprintf(name, sizeof name, ".m.dnn.3.ckp.tmp.%s.%ld.abcdef", host, (long)child);
    touch(name, "dead");
    snprintf(name, sizeof name, ".m.dnn.tmp.%s.%ld.abcdef", host, (long)child);
    touch(name, "dead");
    snprintf(name, sizeof name, ".m.dnn.2.tmp.%s.%ld.abcdef", host, (long)getpid());
    touch(name, "alive");
    touch(".m.dnn.2.tmp.otherhost.1.abcdef", "other host");
    snprintf(name, sizeof name, ".m.dnnx.tmp.%s.%ld.abcdef", host, (long)child);
    touch(name, "another target");
    touch("m.dnn", "the model");
    int removed = 0;
    ck_assert_int_eq(pt_fs_remove_stale("m.dnn", count_removed, &removed), 2);
    ck_assert_int_eq(removed, 2);
    ck_assert_int_eq(entries("."), 4);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("blob");
    TCase *t = tcase_create("blob");
    tcase_add_test(t, round_trip);
    tcase_add_test(t, damaged_files);
    tcase_add_test(t, abort_keeps_old_file);
    tcase_add_test(t, symlink_target_refused);
    tcase_add_test(t, temporary_name);
    tcase_add_test(t, stale_temporaries);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
