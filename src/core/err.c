/* Error record and checked allocation; see err.h. */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pt_err_clear(struct pt_err *e)
{
    if (!e)
        return;
    e->code = PT_OK;
    e->msg[0] = '\0';
}

int pt_err_set(struct pt_err *e, int code, const char *fmt, ...)
{
    if (!e)
        return code;
    if (e->code != PT_OK)
        return e->code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
    return code;
}

int pt_err_context(struct pt_err *e, const char *fmt, ...)
{
    if (!e || e->code == PT_OK)
        return e ? e->code : PT_OK;
    size_t used = strlen(e->msg);
    if (used + 3 >= sizeof e->msg)
        return e->code;
    memcpy(e->msg + used, "; ", 2);
    used += 2;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + used, sizeof e->msg - used, fmt, ap);
    va_end(ap);
    return e->code;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not valid. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    size_t need;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (avail < need)
        return 0;
    unsigned cp = c & (0xFF >> (need + 1));
    for (size_t k = 1; k < need; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need;
}

const char *pt_excerpt(char *buf, size_t n, const char *s, size_t len, size_t max_chars)
{
    size_t o = 0, chars = 0, i = 0;
    if (n == 0)
        return buf;
    while (i < len && chars < max_chars) {
        const unsigned char *u = (const unsigned char *)s + i;
        size_t k = utf8_len(u, len - i);
        char tmp[8];
        const char *piece = tmp;
        size_t plen;
        if (k == 1 && u[0] >= 0x20 && u[0] != 0x7F) {
            tmp[0] = (char)u[0];
            plen = 1;
        } else if (k > 1) {
            piece = s + i;
            plen = k;
        } else {
            snprintf(tmp, sizeof tmp, "\\x%02X", u[0]);
            plen = 4;
            k = 1;
        }
        if (o + plen + 4 >= n)
            break;
        memcpy(buf + o, piece, plen);
        o += plen;
        i += k;
        chars++;
    }
    if (i < len && o + 4 <= n) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

void *pt_malloc(size_t size, struct pt_err *e)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        pt_err_set(e, PT_ENOMEM, "error: out of memory (allocating %zu bytes)", size);
    return p;
}

void *pt_calloc(size_t count, size_t size, struct pt_err *e)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        pt_err_set(e, PT_ENOMEM, "error: out of memory (allocating %zu x %zu bytes)", count, size);
    return p;
}

void *pt_realloc(void *p, size_t size, struct pt_err *e)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        pt_err_set(e, PT_ENOMEM, "error: out of memory (allocating %zu bytes)", size);
    return q;
}

char *pt_strndup(const char *s, size_t len, struct pt_err *e)
{
    char *p = pt_malloc(len + 1, e);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *pt_strdup(const char *s, struct pt_err *e)
{
    return pt_strndup(s, strlen(s), e);
}
