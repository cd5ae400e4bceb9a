/* The log: stderr, or the file named by the top-level `stderr=` key (each rank its own file,
 * named by the trainer: CNTK's names), with optional CNTK-style timestamps. */
#ifndef PT_CORE_LOG_H
#define PT_CORE_LOG_H

#include <stdio.h>

#include "core/err.h"

struct pt_log {
    FILE *out;        /* where lines go */
    int own;          /* out was opened by pt_log_open */
    int timestamping; /* prefix "MM/DD/YYYY HH:MM:SS: " */
    int at_line_start;
    int write_errno; /* first failed write (0: none) */
    char name[4096]; /* the file's name, for messages ("" for stderr) */
    double flushed;  /* pt_now() at the last flush */
    size_t held;     /* bytes of hold[] not written yet */
    char hold[8192]; /* pt_log_often's lines that came soon after a flush */
};

/* Log to stderr, no timestamps. */
void pt_log_init(struct pt_log *l);
/* Log to the file name (this rank's name for stderr=path, which messages quote), creating
 * its directory; truncates a regular file (never through a symlink); a device or pipe
 * (/dev/null, /dev/stderr) is written as is; "-" is standard output, as CNTK's File takes
 * it (stderr=- without timestamping: the log on the terminal's stdout). On failure the log
 * stays on stderr. */
int pt_log_open(struct pt_log *l, const char *path, const char *name, struct pt_err *e);
/* printf to the log; each new line gets the timestamp prefix when enabled, except an
 * empty line (CNTK stamps the lines it prints with LOGPRINTF, never its blank ones). */
void pt_log_printf(struct pt_log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* pt_log_printf for a line that can come many times a second (a step's aggregation time
 * with syncPerfStats=1, the progress lines with numMBsToShowResult=1): within
 * PT_LOG_HOLD_SECONDS of the last flush it is held and written with the next line that
 * flushes, so that a fast loop does not pay a write (and, under mpiexec, a wake-up of its
 * output forwarding) per line: 2 % of a two-rank step of the Fashion-MNIST MLP. */
#define PT_LOG_HOLD_SECONDS 0.1
void pt_log_often(struct pt_log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Write the lines held by pt_log_often (before an abort, which skips pt_log_close). */
void pt_log_flush(struct pt_log *l);
/* printf to the log without timestamps: the lines CNTK prints with a plain fprintf. */
void pt_log_plain(struct pt_log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether every write so far reached the log (flushing it first): 0, or PT_ESYS with a
 * message naming the file (a full disk must not end a run with status 0). */
int pt_log_check(struct pt_log *l, struct pt_err *e);
/* Flush and close a file opened by pt_log_open; back to stderr. */
void pt_log_close(struct pt_log *l);

#endif
