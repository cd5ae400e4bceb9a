/* idx2ctf: convert MNIST-format (IDX) image and label files, as shipped gzip'ed by Debian's
 * dataset-fashion-mnist package, to CNTK text format (CTF).
 *
 *   idx2ctf [--sequence] [--raw] IMAGES.gz LABELS.gz OUT.ctf
 *
 * Dense mode: one line per image, "|labels <one-hot> |features <pixels/255>".
 * --raw: the pixels as they are, 0..255, as CNTK's MNIST files (Train-28x28_cntk_text.txt)
 * hold them: its example configs scale them themselves (featScale = 1/256).
 * --sequence: one sequence per image, one row per image row (28 steps of 28 features),
 * the one-hot label on the first row only: "ID |labels ... |features ...", "ID |features ...".
 * Files are read through `gzip -dc` (no zlib needed) and the output is written to a
 * temporary name and renamed, so an existing OUT is never left half-written. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct idx {
    uint32_t magic, n, rows, cols;
    unsigned char *data; /* n * rows * cols bytes (labels: n bytes) */
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "idx2ctf: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* Read all of `gzip -dc path` into memory. */
static unsigned char *gunzip(const char *path, size_t *len)
{
    int fd[2];
    if (pipe(fd) != 0)
        die("%s: pipe: %s", path, strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        die("%s: fork: %s", path, strerror(errno));
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execlp("gzip", "gzip", "-dc", "--", path, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    for (ssize_t got; buf && (got = read(fd[0], buf + n, cap - n)) != 0;) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            die("%s: read: %s", path, strerror(errno));
        }
        n += (size_t)got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!buf)
        die("%s: %s", path, "out of memory");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(buf);
        die("%s: %s", path, "gzip -dc failed (missing file, or not gzip data)");
    }
    *len = n;
    return buf;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Load an IDX file of unsigned bytes with 1 (labels) or 3 (images) dimensions. */
static struct idx load(const char *path, int dims)
{
    size_t len = 0;
    struct idx x = {0};
    unsigned char *raw = gunzip(path, &len);
    size_t head = 4 + 4 * (size_t)dims;
    const char *bad = NULL;
    x.magic = len >= 4 ? be32(raw) : 0;
    if (x.magic != (uint32_t)(0x800 | dims))
        bad = dims == 3 ? "not an IDX image file (magic 0x00000803 expected)"
                        : "not an IDX label file (magic 0x00000801 expected)";
    else if (len < head)
        bad = "too short for an IDX header";
    if (!bad) {
        x.n = be32(raw + 4);
        x.rows = dims == 3 ? be32(raw + 8) : 1;
        x.cols = dims == 3 ? be32(raw + 12) : 1;
        if (x.rows == 0 || x.cols == 0 || x.rows > 4096 || x.cols > 4096)
            bad = "implausible image size in the IDX header";
        else if (len - head != (size_t)x.n * x.rows * x.cols)
            bad = "file size does not match the IDX header (truncated?)";
    }
    if (bad) {
        free(raw); /* exit() is not a reason to leak */
        die("%s: %s", path, bad);
    }
    size_t need = (size_t)x.n * x.rows * x.cols;
    x.data = malloc(need ? need : 1);
    if (!x.data)
        die("%s: %s", path, "out of memory");
    memcpy(x.data, raw + head, need);
    free(raw);
    return x;
}

int main(int argc, char **argv)
{
    int seq = 0, raw = 0, at = 1;
    for (; at < argc && argv[at][0] == '-' && argv[at][1] == '-'; at++) {
        if (!strcmp(argv[at], "--sequence"))
            seq = 1;
        else if (!strcmp(argv[at], "--raw"))
            raw = 1;
        else
            break;
    }
    if (argc - at != 3) {
        fprintf(stderr, "usage: idx2ctf [--sequence] [--raw] IMAGES.gz LABELS.gz OUT.ctf\n");
        return 2;
    }
    const char *ipath = argv[at], *lpath = argv[at + 1], *out = argv[at + 2];
    struct idx im = load(ipath, 3), lb = load(lpath, 1);
    const char *bad = im.n != lb.n ? "holds another number of items than the images" : NULL;
    for (uint32_t i = 0; !bad && i < lb.n; i++)
        if (lb.data[i] > 9)
            bad = "label outside 0..9";
    if (bad) {
        free(im.data);
        free(lb.data);
        die("%s: %s", lpath, bad);
    }

    /* pixels/255 with 4 significant digits (error < 5e-5, far below one grey level), or
     * the grey levels themselves */
    char pix[256][12];
    for (int v = 0; v < 256; v++)
        if (raw)
            snprintf(pix[v], sizeof pix[v], "%d", v);
        else
            snprintf(pix[v], sizeof pix[v], "%.4g", v / 255.0);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
    /* a new file: never an existing one, nor through a link planted at the name */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        free(im.data);
        free(lb.data);
        die("%s: %s", tmp, strerror(errno));
    }
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    size_t per = (size_t)im.rows * im.cols;
    for (uint32_t i = 0; i < im.n; i++) {
        const unsigned char *p = im.data + i * per;
        for (uint32_t r = 0; r < (seq ? im.rows : 1); r++) {
            if (seq)
                fprintf(f, "%u ", i);
            if (r == 0) {
                fputs("|labels", f);
                for (int k = 0; k < 10; k++)
                    fputs(k == lb.data[i] ? " 1" : " 0", f);
                fputc(' ', f);
            }
            fputs("|features", f);
            size_t count = seq ? im.cols : per;
            const unsigned char *q = seq ? p + (size_t)r * im.cols : p;
            for (size_t k = 0; k < count; k++) {
                fputc(' ', f);
                fputs(pix[q[k]], f);
            }
            fputc('\n', f);
        }
    }
    free(im.data);
    free(lb.data);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0) {
        unlink(tmp);
        die("%s: %s", tmp, strerror(errno));
    }
    if (rename(tmp, out) != 0) {
        unlink(tmp);
        die("%s: %s", out, strerror(errno));
    }
    fprintf(stderr, "idx2ctf: wrote %u %s to %s\n", im.n, seq ? "sequences" : "samples", out);
    return 0;
}
