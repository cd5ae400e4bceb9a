/* Origins as text and errors that start with them (see the map in cfg_internal.h):
 * needs nothing but the error record, so every other part of the language can report. */
#include "parsers/cfg.h"

#include <stdarg.h>
#include <stdio.h>

const char *cfg_origin_str(const struct cfg_origin *o, char *buf, size_t size)
{
    if (!o || !o->file)
        snprintf(buf, size, "<unknown>");
    else if (o->arg > 0)
        snprintf(buf, size, "%s:arg%d", o->file, o->arg);
    else if (o->line > 0)
        snprintf(buf, size, "%s:%d:%d", o->file, o->line, o->col);
    else
        snprintf(buf, size, "%s", o->file);
    return buf;
}

int cfg_error(struct pt_err *e, const struct cfg_origin *o, const char *fmt, ...)
{
    char where[512], text[PT_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return pt_err_set(e, PT_EUSER, "%s: error: %s", cfg_origin_str(o, where, sizeof where), text);
}
