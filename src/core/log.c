/* Logging; see log.h. */
#include "core/log.h"

#include "core/fs.h"
#include "core/timer.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

void pt_log_init(struct pt_log *l)
{
    l->out = stderr;
    l->own = 0;
    l->timestamping = 0;
    l->at_line_start = 1;
    l->write_errno = 0;
    l->name[0] = '\0';
    l->flushed = 0.0;
    l->held = 0;
}

int pt_log_open(struct pt_log *l, const char *path, const char *name, struct pt_err *e)
{
    if (strcmp(name, "-") == 0) { /* CNTK's files: "-" is standard output */
        pt_log_close(l);
        l->out = stdout;
        l->at_line_start = 1;
        l->write_errno = 0;
        snprintf(l->name, sizeof l->name, "<stdout>");
        return 0;
    }
    struct pt_err dir_err;
    pt_err_clear(&dir_err);
    if (pt_make_parent_dirs(name, &dir_err))
        return pt_err_set(e, PT_EUSER, "error: stderr=%s: cannot open log file '%s': %s", path,
                          name, dir_err.msg + strlen("error: "));
    FILE *f = NULL;
    struct pt_err open_err;
    pt_err_clear(&open_err);
    if (pt_fs_open_stream(name, &f, &open_err))
        return pt_err_set(e, PT_EUSER, "error: stderr=%s: cannot open log file '%s': %s", path,
                          name, open_err.msg);
    pt_log_close(l);
    l->out = f;
    l->own = 1;
    l->at_line_start = 1;
    l->write_errno = 0;
    snprintf(l->name, sizeof l->name, "%s", name);
    return 0;
}

/* Bytes to the log as they are (an error kept for pt_log_check). */
static void emit(struct pt_log *l, const char *p, size_t len)
{
    if (len && fwrite(p, 1, len, l->out) != len && !l->write_errno)
        l->write_errno = errno ? errno : EIO;
}

/* Bytes to the log, or into hold[] (what does not fit there: the hold first, then them). */
static void put(struct pt_log *l, const char *p, size_t len, int hold)
{
    if (hold && l->held + len > sizeof l->hold) {
        emit(l, l->hold, l->held);
        l->held = 0;
    }
    if (hold && len <= sizeof l->hold) {
        memcpy(l->hold + l->held, p, len);
        l->held += len;
    } else {
        emit(l, p, len);
    }
}

/* The held lines, then everything out of the stream's buffer. */
static void flush(struct pt_log *l)
{
    emit(l, l->hold, l->held);
    l->held = 0;
    if (fflush(l->out) != 0 && !l->write_errno)
        l->write_errno = errno ? errno : EIO;
    l->flushed = pt_now();
}

static void stamp(struct pt_log *l, int hold)
{
    time_t t = time(NULL);
    struct tm tm;
    char buf[32];
    localtime_r(&t, &tm);
    size_t n = strftime(buf, sizeof buf, "%m/%d/%Y %H:%M:%S: ", &tm);
    put(l, buf, n, hold);
}

static void vlog(struct pt_log *l, int stamps, int often, const char *fmt, va_list ap)
{
    char small[1024];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(again);
        return;
    }
    char *text = small;
    char *big = NULL;
    if ((size_t)n >= sizeof small) {
        big = malloc((size_t)n + 1);
        if (big)
            vsnprintf(big, (size_t)n + 1, fmt, again);
        text = big;
    }
    va_end(again);
    if (!text)
        return;
    /* held: a frequent line soon after the last flush; anything else writes the held
     * lines before itself, so the order stays as printed */
    int hold = often && pt_now() - l->flushed < PT_LOG_HOLD_SECONDS;
    if (!hold) {
        emit(l, l->hold, l->held);
        l->held = 0;
    }
    for (char *p = text; *p;) {
        if (l->at_line_start && stamps && l->timestamping && *p != '\n')
            stamp(l, hold);
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
        put(l, p, len, hold);
        l->at_line_start = nl != NULL;
        p += len;
    }
    if (!hold)
        flush(l);
    free(big);
}

void pt_log_printf(struct pt_log *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(l, 1, 0, fmt, ap);
    va_end(ap);
}

void pt_log_often(struct pt_log *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(l, 1, 1, fmt, ap);
    va_end(ap);
}

void pt_log_flush(struct pt_log *l)
{
    flush(l);
}

void pt_log_plain(struct pt_log *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(l, 0, 0, fmt, ap);
    va_end(ap);
}

int pt_log_check(struct pt_log *l, struct pt_err *e)
{
    flush(l);
    if (!l->write_errno)
        return 0;
    if (l->own)
        return pt_err_set(e, PT_ESYS, "error: cannot write log file '%s' (stderr=): %s", l->name,
                          strerror(l->write_errno));
    return pt_err_set(e, PT_ESYS, "error: cannot write the log to standard error: %s",
                      strerror(l->write_errno));
}

void pt_log_close(struct pt_log *l)
{
    flush(l);
    if (l->own && l->out)
        fclose(l->out);
    l->out = stderr;
    l->own = 0;
}
