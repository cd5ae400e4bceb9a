/* The log: stderr, or the file named by the top-level `stderr=` key (rank 0 writes the
 * file itself, rank k writes FILE.rank<k>), with optional CNTK-style timestamps. */
#ifndef PT_CORE_LOG_H
#define PT_CORE_LOG_H

#include <stdio.h>

#include "core/err.h"

struct pt_log {
    FILE *out;        /* where lines go */
    int own;          /* out was opened by pt_log_open */
    int timestamping; /* prefix "MM/DD/YYYY HH:MM:SS: " */
    int at_line_start;
};

/* Log to stderr, no timestamps. */
void pt_log_init(struct pt_log *l);
/* Log to path (rank 0) or path.rank<k>, creating its directory; truncates. On failure the
 * log stays on stderr. */
int pt_log_open(struct pt_log *l, const char *path, int rank, struct pt_err *e);
/* printf to the log; each new line gets the timestamp prefix when enabled. */
void pt_log_printf(struct pt_log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Flush and close a file opened by pt_log_open; back to stderr. */
void pt_log_close(struct pt_log *l);

#endif
