/* File-system helpers; see fs.h. */
#include "core/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int pt_make_parent_dirs(const char *file, struct pt_err *e)
{
    char path[4096];
    size_t n = strlen(file);
    if (n >= sizeof path)
        return pt_err_set(e, PT_EUSER, "error: path too long: %.80s...", file);
    memcpy(path, file, n + 1);
    char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    *slash = '\0';
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return pt_err_set(e, PT_EUSER, "error: cannot create directory '%s': %s", path,
                              strerror(errno));
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            return pt_err_set(e, PT_EUSER, "error: '%s' exists and is not a directory", path);
        *p = saved;
        if (saved == '\0')
            break;
    }
    return 0;
}

/* ------------------------------------------------------------------ names */

/* This host's name with every character but [A-Za-z0-9_-] made '_', so that the dots of a
 * temporary's name separate its fields. */
static void host_tag(char *buf, size_t size)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0])
        snprintf(h, sizeof h, "localhost");
    size_t i = 0;
    for (; h[i] && i + 1 < size && i < 64; i++) {
        char c = h[i];
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '-' || c == '_';
        buf[i] = keep ? c : '_';
    }
    buf[i] = '\0';
}

/* Split path into its directory (with the trailing '/', or "" for the current one) and
 * its base name. */
static void split_path(const char *path, char *dir, size_t dsize, const char **base)
{
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    if (dl >= dsize)
        dl = dsize - 1;
    memcpy(dir, path, dl);
    dir[dl] = '\0';
    *base = slash ? slash + 1 : path;
}

/* Six characters for a unique name; uniqueness itself comes from O_EXCL. */
static void random_tag(char out[7])
{
    static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char r[6];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned long x = (unsigned long)ts.tv_nsec ^ (unsigned long)getpid() << 16;
        for (int i = 0; i < 6; i++, x = x * 6364136223846793005ul + 1442695040888963407ul)
            r[i] = (unsigned char)(x >> 33);
    }
    for (int i = 0; i < 6; i++)
        out[i] = abc[r[i] % (sizeof abc - 1)];
    out[6] = '\0';
}

static void sync_dir_of(const char *path)
{
    char dir[4096];
    const char *base;
    split_path(path, dir, sizeof dir, &base);
    int fd = open(dir[0] ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) { /* best effort: some file systems refuse a directory fsync */
        fsync(fd);
        close(fd);
    }
}

/* ------------------------------------------------------------------ atomic replacement */

/* The target may be replaced: absent, or a regular file (not a link to one). */
static int check_target(const char *path, const char *what, struct pt_err *e)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0
                               : pt_err_set(e, PT_ESYS, "%s: error: cannot write %s: %s", path,
                                            what, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: cannot write %s: it is a symbolic link, and nothing is "
                          "written through a symlink (remove it, or name the real file)",
                          path, what);
    if (!S_ISREG(st.st_mode))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: cannot write %s: it exists and is not a regular file", path,
                          what);
    return 0;
}

int pt_file_begin(struct pt_file_out *o, const char *path, int make_dirs, const char *what,
                  struct pt_err *e)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (strlen(path) >= sizeof o->path)
        return pt_err_set(e, PT_EUSER, "error: path too long: %.80s...", path);
    snprintf(o->path, sizeof o->path, "%s", path);
    int rc = make_dirs ? pt_make_parent_dirs(path, e) : 0;
    if (rc == 0)
        rc = check_target(path, what, e);
    if (rc)
        return rc;
    char dir[4096], host[80], tag[7];
    const char *base;
    split_path(path, dir, sizeof dir, &base);
    host_tag(host, sizeof host);
    for (int tries = 0; tries < 100; tries++) {
        random_tag(tag);
        snprintf(o->tmp, sizeof o->tmp, "%s.%s.tmp.%s.%ld.%s", dir, base, host, (long)getpid(),
                 tag);
        o->fd = open(o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (o->fd >= 0 || errno != EEXIST)
            break;
    }
    if (o->fd < 0) {
        int err = errno;
        o->tmp[0] = '\0';
        return pt_err_set(e, PT_ESYS, "%s: error: cannot write %s: %s", path, what, strerror(err));
    }
    return 0;
}

int pt_file_commit(struct pt_file_out *o, const char *what, struct pt_err *e)
{
    int rc = 0;
    if (o->fd >= 0) {
        if (fsync(o->fd) != 0)
            rc = pt_err_set(e, PT_ESYS, "%s: error: cannot write %s: %s", o->path, what,
                            strerror(errno));
        if (close(o->fd) != 0 && rc == 0)
            rc = pt_err_set(e, PT_ESYS, "%s: error: cannot write %s: %s", o->path, what,
                            strerror(errno));
        o->fd = -1;
    }
    /* a link planted while we wrote is refused too (rename would replace it, not follow
     * it, but the user asked for a file there) */
    if (rc == 0)
        rc = check_target(o->path, what, e);
    if (rc == 0 && rename(o->tmp, o->path) != 0)
        rc = pt_err_set(e, PT_ESYS, "%s: error: cannot write %s: renaming '%s': %s", o->path, what,
                        o->tmp, strerror(errno));
    if (rc) {
        pt_file_abort(o);
        return rc;
    }
    o->tmp[0] = '\0';
    sync_dir_of(o->path);
    return 0;
}

void pt_file_abort(struct pt_file_out *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = '\0';
}

int pt_file_write_text(const char *path, int make_dirs, const char *what,
                       int (*fill)(FILE *f, void *arg, struct pt_err *e), void *arg,
                       struct pt_err *e)
{
    struct pt_file_out out;
    int rc = pt_file_begin(&out, path, make_dirs, what, e);
    FILE *f = rc ? NULL : fdopen(out.fd, "w");
    if (rc == 0 && !f)
        rc = pt_err_set(e, PT_ESYS, "error: cannot write '%s'", path);
    if (f)
        out.fd = -1; /* the stream owns it now */
    if (rc == 0)
        rc = fill(f, arg, e);
    int bad = f && (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0);
    if (f)
        fclose(f);
    if (rc == 0 && bad)
        rc = pt_err_set(e, PT_ESYS, "error: writing '%s' failed", path);
    if (rc == 0)
        return pt_file_commit(&out, what, e);
    pt_file_abort(&out);
    return rc;
}

/* ------------------------------------------------------------------ streams */

static int stream_kind_ok(const struct stat *st)
{
    return S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode);
}

int pt_fs_open_stream(const char *path, FILE **out, struct pt_err *e)
{
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO without a reader fails instead of hanging */
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    int via_link = fd < 0 && errno == ELOOP;
    if (via_link) /* a link: only to a device or a pipe (/dev/stderr), and nothing created */
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return pt_err_set(e, PT_ESYS, "%s", strerror(errno));
    struct stat st = {0};
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (S_ISREG(st.st_mode) && via_link)
        why = "it is a symbolic link to a file, and nothing is written through a symlink "
              "(remove it, or name the real file)";
    else if (!S_ISREG(st.st_mode) && !stream_kind_ok(&st))
        why = "it is neither a regular file nor a device or pipe";
    else if (S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0)
        why = strerror(errno);
    int fl = why ? 0 : fcntl(fd, F_GETFL);
    if (!why && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0))
        why = strerror(errno);
    FILE *f = why ? NULL : fdopen(fd, "w");
    if (!f) {
        if (!why)
            why = strerror(errno);
        close(fd);
        return pt_err_set(e, S_ISREG(st.st_mode) || via_link ? PT_EUSER : PT_ESYS, "%s", why);
    }
    *out = f;
    return 0;
}

/* ------------------------------------------------------------------ stale temporaries */

/* name is `.<base><more>.tmp.<host>.<pid>.<tag>` with more empty or starting with '.':
 * *pid and host (into hbuf) from it; 0 when it is not one of ours. */
static int parse_temp(const char *name, const char *base, char *hbuf, size_t hsize, long *pid)
{
    size_t bl = strlen(base), n = strlen(name);
    if (n < bl + 2 || name[0] != '.' || strncmp(name + 1, base, bl) != 0)
        return 0;
    const char *rest = name + 1 + bl;
    if (*rest != '.')
        return 0;
    const char *t = strrchr(rest, '.'); /* .<tag> */
    if (!t || strlen(t + 1) != 6 || t == rest)
        return 0;
    const char *p = t - 1;
    while (p > rest && *p != '.')
        p--;
    /* p: .<pid> */
    char *end;
    errno = 0;
    *pid = strtol(p + 1, &end, 10);
    if (end != t || *pid <= 0 || errno)
        return 0;
    const char *h = p - 1;
    while (h > rest && *h != '.')
        h--;
    /* h: .<host>, preceded by ".tmp" */
    size_t hl = (size_t)(p - h - 1);
    if (hl == 0 || hl >= hsize || h - rest < 4 || strncmp(h - 4, ".tmp", 4) != 0)
        return 0;
    memcpy(hbuf, h + 1, hl);
    hbuf[hl] = '\0';
    return 1;
}

int pt_fs_remove_stale(const char *path, void (*note)(void *arg, const char *name), void *arg)
{
    char dir[4096], host[80], theirs[80];
    const char *base;
    split_path(path, dir, sizeof dir, &base);
    host_tag(host, sizeof host);
    DIR *d = opendir(dir[0] ? dir : ".");
    if (!d)
        return 0;
    int removed = 0;
    for (struct dirent *de; (de = readdir(d));) {
        long pid;
        struct stat st;
        if (!parse_temp(de->d_name, base, theirs, sizeof theirs, &pid))
            continue;
        /* only this host's, and only when that process is gone; never a directory */
        if (strcmp(theirs, host) != 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
            errno != ESRCH)
            continue;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode))
            continue;
        if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
            removed++;
            if (note) {
                char full[8300];
                snprintf(full, sizeof full, "%s%s", dir, de->d_name);
                note(arg, full);
            }
        }
    }
    closedir(d);
    return removed;
}

/* ------------------------------------------------------------------ inputs */

char *pt_fs_canonical(const char *path)
{
    char dir[4096];
    const char *base;
    split_path(path, dir, sizeof dir, &base);
    char *real = realpath(dir[0] ? dir : ".", NULL);
    if (!real)
        return NULL;
    size_t n = strlen(real) + strlen(base) + 2;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base);
    free(real);
    return out;
}

int pt_inputs_add(struct pt_inputs *ins, const char *path, const char *what, struct pt_err *e)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    struct pt_input *v = pt_realloc(ins->v, (ins->n + 1) * sizeof *v, e);
    if (!v)
        return PT_ENOMEM;
    ins->v = v;
    struct pt_input *in = &v[ins->n];
    in->dev = st.st_dev;
    in->ino = st.st_ino;
    in->real = realpath(path, NULL);
    in->what = pt_strdup(what, e);
    if (!in->real || !in->what) {
        free(in->real);
        free(in->what);
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    }
    ins->n++;
    return 0;
}

const struct pt_input *pt_inputs_find(const struct pt_inputs *ins, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return NULL;
    for (size_t i = 0; i < ins->n; i++)
        if (ins->v[i].dev == st.st_dev && ins->v[i].ino == st.st_ino)
            return &ins->v[i];
    return NULL;
}

void pt_inputs_free(struct pt_inputs *ins)
{
    for (size_t i = 0; i < ins->n; i++) {
        free(ins->v[i].real);
        free(ins->v[i].what);
    }
    free(ins->v);
    ins->v = NULL;
    ins->n = 0;
}

int pt_file_read_all(const char *path, size_t max, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char *buf = malloc(max + 1);
    size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
    int bad = !buf || ferror(f) || n > max;
    fclose(f);
    if (bad) {
        free(buf);
        return -2;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}
