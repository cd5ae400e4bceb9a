/* Error record: the one way errors travel in partrain.
 *
 * Library code never prints or exits on error. A function that can fail returns 0 or a
 * negative PT_E* code and fills a caller-owned struct pt_err. The first error wins: later
 * pt_err_set() calls on a record that already holds an error change nothing, so the
 * innermost (most precise) message survives; callers add context with pt_err_context().
 * Messages are complete lines without the trailing newline, for example
 *   "x.cfg:12:5: error: minibatchSize: expected an integer, got \"25x\"".
 */
#ifndef PT_CORE_ERR_H
#define PT_CORE_ERR_H

#include <stddef.h>

enum {
    PT_OK = 0,
    PT_EUSER = -1,     /* bad input: config, command line, data or model file */
    PT_ESYS = -2,      /* the system failed us: I/O, MPI */
    PT_ENOMEM = -3,    /* allocation failed */
    PT_EINTERNAL = -4, /* a bug */
    PT_EDEVICE = -5    /* the network has nodes this backend cannot run (a user error, but
                        * deviceId=auto takes the CPU instead: train_backend_fallback) */
};

#define PT_ERR_MSG 2048

struct pt_err {
    int code;             /* PT_OK while no error is recorded */
    char msg[PT_ERR_MSG]; /* the message; "" while code == PT_OK */
};

/* Reset to "no error". */
void pt_err_clear(struct pt_err *e);

/* Record an error unless one is already recorded. e may be NULL (the error is dropped).
 * Returns the code now held by e (or code when e is NULL), so `return pt_err_set(...)`. */
int pt_err_set(struct pt_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append "; <context>" to a recorded error (no effect when none is recorded or the message
 * is full). Returns e->code. */
int pt_err_context(struct pt_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write s[0..len) into buf (size n) as a printable, quoted-free excerpt: control bytes and
 * invalid UTF-8 become \xNN, and text past max_chars is cut with "...". Returns buf. */
const char *pt_excerpt(char *buf, size_t n, const char *s, size_t len, size_t max_chars);

/* Allocation that records PT_ENOMEM in e on failure (returns NULL then). */
void *pt_malloc(size_t size, struct pt_err *e);
void *pt_calloc(size_t count, size_t size, struct pt_err *e);
void *pt_realloc(void *p, size_t size, struct pt_err *e);
char *pt_strndup(const char *s, size_t len, struct pt_err *e);
char *pt_strdup(const char *s, struct pt_err *e);

#endif
