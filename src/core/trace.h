/* A timeline of one process (the `timelineFile` key): spans of time written as Chrome trace
 * events ("X", complete events), which chrome://tracing and ui.perfetto.dev display.
 *
 * The file is the JSON Array Format: "[", then one event per line separated by ",", then
 * "]" when the trace is closed. Spans are kept in a fixed buffer of PT_TRACE_BUF events and
 * written in pieces (a full buffer, pt_trace_flush); each piece is one write, so a process
 * killed between pieces leaves whole events and only the closing "]" missing, which both
 * viewers accept. pt_trace_close writes the "]" on every path through the program, errors
 * included.
 *
 * Event fields: name, cat (the lane's name), ph "X", ts and dur in microseconds of
 * CLOCK_MONOTONIC (pt_now; processes on one host share its zero, so their files line up
 * when loaded together), pid (the rank), tid (the lane), args (numbers). Metadata events
 * name the process "rank R" and the lanes.
 *
 * A disabled timeline is a NULL pointer: every call returns at once (one branch), and
 * pt_trace_now returns 0 without reading the clock. */
#ifndef PT_CORE_TRACE_H
#define PT_CORE_TRACE_H

#include <stdio.h>

#include "core/err.h"

/* The lanes (tid) of a trainer's timeline: spans within one lane never overlap. */
enum pt_trace_lane {
    PT_TRACE_EPOCH = 1,   /* an epoch's training, validation, saving */
    PT_TRACE_COMPUTE = 2, /* minibatch read, forward, backward, update, an engine's vector ops */
    PT_TRACE_COMM = 3,    /* the engine's communication and waits */
    PT_TRACE_LANES = 4
};

#define PT_TRACE_BUF  512 /* events buffered before a piece is written */
#define PT_TRACE_ARGS 4   /* arguments per event at most */

/* A numeric argument of an event: key must outlive the trace (a string literal). */
struct pt_trace_arg {
    const char *key;
    double value;
};

struct pt_trace_event {
    const char *name; /* a string literal */
    int lane, nargs;
    double t0, t1; /* pt_now() seconds */
    struct pt_trace_arg args[PT_TRACE_ARGS];
};

struct pt_trace {
    FILE *out;
    int pid;
    int write_errno;  /* first failed write (0: none) */
    size_t n;         /* events in ev */
    size_t written;   /* events written so far */
    char *piece;      /* text of one piece */
    size_t piece_cap; /* its size */
    const char *key;  /* the config key, for messages */
    char name[4200];  /* the file, for messages */
    struct pt_trace_event ev[PT_TRACE_BUF];
};

/* Open the timeline of rank `rank` at path (rank 0: path itself, rank K: path.rankK),
 * creating its directory; never through a symlink to a file (a device such as /dev/null is
 * written as is). Writes "[" and the metadata events. path NULL or "": *out = NULL (the
 * timeline is off). key names the config key in messages. */
int pt_trace_open(const char *path, int rank, const char *key, struct pt_trace **out,
                  struct pt_err *e);

/* Seconds of the monotonic clock (pt_now), or 0 when t is NULL. */
double pt_trace_now(const struct pt_trace *t);

/* Record the span [t0, t1] (pt_now() seconds) of `name` (a string literal) on lane, with
 * nargs (at most PT_TRACE_ARGS) arguments. A full buffer is written out first. */
void pt_trace_span(struct pt_trace *t, int lane, const char *name, double t0, double t1,
                   const struct pt_trace_arg *args, int nargs);

/* Write the buffered events now. 0, or PT_ESYS naming the file when any write so far
 * failed (a full disk). NULL: 0. */
int pt_trace_flush(struct pt_trace *t, struct pt_err *e);

/* Flush, write the closing "]", close and free. Returns what pt_trace_flush would, for
 * every write including the last. NULL: 0. */
int pt_trace_close(struct pt_trace *t, struct pt_err *e);

#endif
