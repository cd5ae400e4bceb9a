/* The timeline recorder; see trace.h. */
#include "core/trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/timer.h"

#define EVENT_MAX 640 /* bytes of one formatted event at most (names and keys are short) */

static const char *const lane_names[PT_TRACE_LANES] = {"", "epoch", "compute", "communication"};

/* Append a JSON string of s (quotes, backslashes and control bytes escaped). */
static size_t put_string(char *buf, size_t size, const char *s)
{
    size_t o = 0;
    if (size < 8)
        return 0;
    buf[o++] = '"';
    for (; *s && o + 8 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20) {
            o += (size_t)snprintf(buf + o, size - o, "\\u%04x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return o;
}

/* Microseconds with nanosecond digits, from integer nanoseconds (so that ts + dur of one
 * span equals the ts of a span that starts where it ends, exactly). */
static size_t put_micros(char *buf, size_t size, long long ns)
{
    if (ns < 0)
        ns = 0;
    int w = snprintf(buf, size, "%lld.%03lld", ns / 1000, ns % 1000);
    return w > 0 && (size_t)w < size ? (size_t)w : 0;
}

static long long nanos(double seconds)
{
    return llround(seconds * 1e9);
}

/* One event as JSON into buf (EVENT_MAX bytes); returns its length. */
static size_t format_event(const struct pt_trace *t, const struct pt_trace_event *ev, char *buf)
{
    size_t o = 0, size = EVENT_MAX;
    int lane = ev->lane > 0 && ev->lane < PT_TRACE_LANES ? ev->lane : PT_TRACE_COMPUTE;
    long long ns0 = nanos(ev->t0), ns1 = nanos(ev->t1);
    o += (size_t)snprintf(buf + o, size - o, "{\"name\":");
    o += put_string(buf + o, 80, ev->name);
    o += (size_t)snprintf(buf + o, size - o,
                          ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", lane_names[lane]);
    o += put_micros(buf + o, size - o, ns0);
    o += (size_t)snprintf(buf + o, size - o, ",\"dur\":");
    o += put_micros(buf + o, size - o, ns1 > ns0 ? ns1 - ns0 : 0);
    o += (size_t)snprintf(buf + o, size - o, ",\"pid\":%d,\"tid\":%d,\"args\":{", t->pid, lane);
    for (int i = 0; i < ev->nargs; i++) {
        o += (size_t)snprintf(buf + o, size - o, "%s", i ? "," : "");
        o += put_string(buf + o, 48, ev->args[i].key);
        double v = ev->args[i].value;
        if (isfinite(v))
            o += (size_t)snprintf(buf + o, size - o, ":%.15g", v);
        else /* JSON has no infinities */
            o += (size_t)snprintf(buf + o, size - o, ":null");
    }
    o += (size_t)snprintf(buf + o, size - o, "}}");
    return o;
}

/* One piece: text[0..len) in a single write (the stream is unbuffered). */
static void write_piece(struct pt_trace *t, const char *text, size_t len)
{
    if (t->write_errno || len == 0)
        return;
    errno = 0;
    if (fwrite(text, 1, len, t->out) != len)
        t->write_errno = errno ? errno : EIO;
}

/* Metadata: the process and lane names, and their order. */
static void write_header(struct pt_trace *t)
{
    size_t o = 0;
    char *p = t->piece;
    o += (size_t)snprintf(p + o, t->piece_cap - o,
                          "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                          "\"args\":{\"name\":\"rank %d\"}},\n"
                          "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                          "\"args\":{\"sort_index\":%d}}",
                          t->pid, t->pid, t->pid, t->pid);
    for (int l = 1; l < PT_TRACE_LANES; l++)
        o += (size_t)snprintf(p + o, t->piece_cap - o,
                              ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                              "\"args\":{\"name\":\"%s\"}},\n"
                              "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                              "\"args\":{\"sort_index\":%d}}",
                              t->pid, l, lane_names[l], t->pid, l, l);
    write_piece(t, p, o);
    t->written = 2 + 2 * (PT_TRACE_LANES - 1);
}

int pt_trace_open(const char *path, int rank, const char *key, struct pt_trace **out,
                  struct pt_err *e)
{
    *out = NULL;
    if (!path || !path[0])
        return 0;
    struct pt_trace *t = calloc(1, sizeof *t);
    if (!t || !(t->piece = malloc(PT_TRACE_BUF * (EVENT_MAX + 2) + 64))) {
        free(t);
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (%s)", key);
    }
    t->piece_cap = PT_TRACE_BUF * (EVENT_MAX + 2) + 64;
    t->pid = rank;
    if (rank == 0)
        snprintf(t->name, sizeof t->name, "%s", path);
    else
        snprintf(t->name, sizeof t->name, "%s.rank%d", path, rank);
    t->key = key;
    struct pt_err why;
    pt_err_clear(&why);
    /* a directory that cannot be made is a system failure, as modelPath's (exit 3); the
     * stream's opener tells a refused file (a symlink: bad input) from one */
    int code = PT_ESYS, rc = pt_make_parent_dirs(t->name, &why);
    if (rc == 0 && (rc = pt_fs_open_stream(t->name, &t->out, &why)))
        code = why.code;
    if (rc) {
        const char *msg = strncmp(why.msg, "error: ", 7) == 0 ? why.msg + 7 : why.msg;
        rc = pt_err_set(e, code, "error: cannot write %s '%s': %s", key, t->name, msg);
        free(t->piece);
        free(t);
        return rc;
    }
    setvbuf(t->out, NULL, _IONBF, 0);
    write_header(t);
    *out = t;
    return 0;
}

double pt_trace_now(const struct pt_trace *t)
{
    return t ? pt_now() : 0.0;
}

/* The buffered events as one piece. */
static void write_events(struct pt_trace *t)
{
    size_t o = 0;
    for (size_t i = 0; i < t->n; i++) {
        memcpy(t->piece + o, ",\n", 2); /* the header's events come first */
        o += 2;
        o += format_event(t, &t->ev[i], t->piece + o);
    }
    write_piece(t, t->piece, o);
    t->written += t->n;
    t->n = 0;
}

void pt_trace_span(struct pt_trace *t, int lane, const char *name, double t0, double t1,
                   const struct pt_trace_arg *args, int nargs)
{
    if (!t)
        return;
    if (t->n == PT_TRACE_BUF)
        write_events(t);
    struct pt_trace_event *ev = &t->ev[t->n++];
    ev->name = name;
    ev->lane = lane;
    ev->t0 = t0;
    ev->t1 = t1;
    ev->nargs = nargs < 0 ? 0 : nargs > PT_TRACE_ARGS ? PT_TRACE_ARGS : nargs;
    for (int i = 0; i < ev->nargs; i++)
        ev->args[i] = args[i];
}

static int write_status(const struct pt_trace *t, struct pt_err *e)
{
    if (!t->write_errno)
        return 0;
    return pt_err_set(e, PT_ESYS, "error: cannot write %s '%s': %s", t->key, t->name,
                      strerror(t->write_errno));
}

int pt_trace_flush(struct pt_trace *t, struct pt_err *e)
{
    if (!t)
        return 0;
    write_events(t);
    return write_status(t, e);
}

int pt_trace_close(struct pt_trace *t, struct pt_err *e)
{
    if (!t)
        return 0;
    write_events(t);
    write_piece(t, "\n]\n", 3);
    errno = 0;
    if (fclose(t->out) != 0 && !t->write_errno)
        t->write_errno = errno ? errno : EIO;
    int rc = write_status(t, e);
    free(t->piece);
    free(t);
    return rc;
}
