/* bench/ctf_parse: CTF parsing speed on one core.
 *
 *   bench/ctf_parse [FILE.ctf] [REPEATS]     (default data/fashion-mnist/train.ctf, 3)
 *
 * Parses every line of FILE with ctf_parse_line (inputs "labels" dim 10 and "features"
 * dim 784, dense) and, as the reference in the same run, with a plain strtof loop over the
 * same bytes. Prints MB/s of each (best of REPEATS), the ratio, and the BLAS kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "math/backend.h"
#include "parsers/ctf.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Reference: split at blanks, strtof every number, skip '|name' tokens. */
static double reference(const char *text, size_t len, size_t *values)
{
    double sum = 0;
    size_t n = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'))
            p++;
        if (p >= end)
            break;
        if (*p == '|') {
            while (p < end && *p != ' ' && *p != '\n')
                p++;
            continue;
        }
        char *q;
        sum += strtof(p, &q);
        n++;
        p = q > p ? q : p + 1;
    }
    *values = n;
    return sum;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "data/fashion-mnist/train.ctf";
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "ctf_parse: cannot read %s (run scripts/prepare-fashion-mnist.sh)\n", path);
        return 1;
    }
    char cpu[512];
    printf("ctf_parse: %s, %.1f MB; %s\n", path, (double)len / 1e6,
           backend_cpu_describe(cpu, sizeof cpu));
    struct ctf_input in[2] = {{.alias = "labels", .dim = 10}, {.alias = "features", .dim = 784}};
    struct ctf_column cols[2] = {{0}};
    struct pt_err e;
    pt_err_clear(&e);
    double best_ours = 1e30, best_ref = 1e30;
    size_t lines = 0, ref_values = 0;
    double checksum = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        lines = 0;
        for (const char *p = text, *end = text + len; p < end;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            struct ctf_where at = {.file = path, .line = lines + 1};
            struct ctf_line line;
            if (ctf_parse_line(in, 2, cols, p, n, 0, &at, &line, &e)) {
                fprintf(stderr, "%s\n", e.msg);
                return 1;
            }
            lines++;
            if (cols[1].rows == 4096) { /* keep memory bounded, like a reader chunk */
                checksum += cols[1].val[cols[1].rows * 784 - 1];
                ctf_column_clear(&cols[0]);
                ctf_column_clear(&cols[1]);
            }
            p = nl ? nl + 1 : end;
        }
        double t1 = now();
        checksum += reference(text, len, &ref_values);
        double t2 = now();
        if (t1 - t0 < best_ours)
            best_ours = t1 - t0;
        if (t2 - t1 < best_ref)
            best_ref = t2 - t1;
    }
    double mb = (double)len / 1e6;
    printf("%-28s %10s %10s\n", "parser", "MB/s", "seconds");
    printf("%-28s %10.1f %10.3f\n", "ctf_parse_line (partrain)", mb / best_ours, best_ours);
    printf("%-28s %10.1f %10.3f\n", "strtof loop (reference)", mb / best_ref, best_ref);
    printf("ratio partrain / reference: %.2fx   (%zu lines, %zu values, best of %d; checksum %g)\n",
           best_ref / best_ours, lines, ref_values, reps, checksum);
    for (int i = 0; i < 2; i++)
        ctf_column_free(&cols[i]);
    free(text);
    return 0;
}
