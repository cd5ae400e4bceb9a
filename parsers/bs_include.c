/* BrainScript's include "PATH" (CNTK's BrainScriptParser.cpp: the lexer reads the file's
 * text in place of the two tokens, as if it were written there): the text with every
 * include replaced by its file's text, itself expanded, between "#@at" comment lines that
 * keep each piece's file and position (bs_internal.h), so that an error inside an included
 * file names that file. The result is BrainScript still, the markers being comments, and
 * reads no file when it is parsed again (a model file keeps it). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parsers/bs.h"
#include "parsers/bs_internal.h"

#define MAX_DEPTH 8 /* includes inside includes */

struct out {
    char *s;
    size_t n, cap, max;
};

static int put(struct out *o, const char *s, size_t len, struct pt_err *e)
{
    if (o->n + len + 1 > o->max)
        return -1; /* the caller says what is too long */
    if (o->n + len + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->n + len + 1)
            cap *= 2;
        char *g = pt_realloc(o->s, cap, e);
        if (!g)
            return PT_ENOMEM;
        o->s = g;
        o->cap = cap;
    }
    memcpy(o->s + o->n, s, len);
    o->n += len;
    o->s[o->n] = '\0';
    return 0;
}

/* "FILE:LINE:COL: error: " for a token of a text whose own file is `file`. */
__attribute__((format(printf, 5, 6))) static int
tok_error(struct pt_err *e, const struct bs_toks *t, const char *file, const struct bs_tok *at,
          const char *fmt, ...)
{
    int f = at->line / BS_FILE_LINES;
    char name[512], msg[PT_ERR_MSG];
    if (f > 0 && f <= t->nfiles)
        snprintf(name, sizeof name, "%.*s", (int)t->files[f].len, t->files[f].s);
    else
        snprintf(name, sizeof name, "%s", file);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pt_err_set(e, PT_EUSER, "%s:%d:%d: error: %s", name, at->line % BS_FILE_LINES, at->col,
                      msg);
}

/* The directory part of path ("." when it has none), into buf. */
static void dir_of(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, size, ".");
    else if (slash == path)
        snprintf(buf, size, "/");
    else
        snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* CNTK's FindSourceFile: the path as written, else its file name in the directory of the
 * file that includes it. */
static int find(const char *want, const char *from, char *path, size_t size)
{
    if (snprintf(path, size, "%s", want) < (int)size && is_file(path))
        return 1;
    char dir[4096];
    dir_of(from, dir, sizeof dir);
    const char *slash = strrchr(want, '/'), *name = slash ? slash + 1 : want;
    return snprintf(path, size, "%s/%s", dir, name) < (int)size && is_file(path);
}

static int read_text(const char *path, size_t max, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno ? errno : EIO;
    char *buf = malloc(max + 1);
    size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return EIO;
    }
    if (n > max) {
        free(buf);
        return EFBIG;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

static int expand(struct out *o, const char *text, size_t len, const char *file, int line, int col,
                  int allowed, int depth, struct pt_err *e);

/* One include: its file's expanded text between markers, then the including text's
 * position after the path (end: the path token's end, in `file` unless a marker moved it). */
static int one(struct out *o, const struct bs_toks *t, const char *file, const struct bs_tok *kw,
               const struct bs_tok *str, int allowed, int depth, struct pt_err *e)
{
    char want[4096], path[4096];
    snprintf(want, sizeof want, "%.*s", (int)(str->len - 2), str->s + 1);
    if (!allowed)
        return tok_error(e, t, file, kw,
                         "include \"%s\": a model file's network description reads no other "
                         "file",
                         want);
    if (depth >= MAX_DEPTH)
        return tok_error(e, t, file, kw, "include \"%s\": includes nested deeper than %d levels",
                         want, MAX_DEPTH);
    int f = kw->line / BS_FILE_LINES;
    char from[4096];
    if (f > 0 && f <= t->nfiles)
        snprintf(from, sizeof from, "%.*s", (int)t->files[f].len, t->files[f].s);
    else
        snprintf(from, sizeof from, "%s", file);
    if (!find(want, from, path, sizeof path)) {
        char dir[4096];
        dir_of(from, dir, sizeof dir);
        return tok_error(e, t, file, kw,
                         "include \"%s\": no such file (looked for it as written and in %s)", want,
                         dir);
    }
    char *inc = NULL;
    size_t n = 0;
    int err = read_text(path, o->max, &inc, &n);
    if (err)
        return tok_error(e, t, file, kw, "include \"%s\": cannot read it: %s", path,
                         err == EFBIG ? "larger than a network description may be" : strerror(err));
    char mark[4200];
    snprintf(mark, sizeof mark, "\n#@at 1 1 %s\n", path);
    int rc = put(o, mark, strlen(mark), e);
    if (rc == 0)
        rc = expand(o, inc, n, path, 1, 1, allowed, depth + 1, e);
    free(inc);
    if (rc == 0) {
        int ef = str->end_line / BS_FILE_LINES;
        ef = ef <= t->nfiles ? ef : 0;
        snprintf(mark, sizeof mark, "\n#@at %d %d %.*s\n", str->end_line % BS_FILE_LINES,
                 str->end_col, (int)(ef > 0 ? t->files[ef].len : strlen(file)),
                 ef > 0 ? t->files[ef].s : file);
        rc = put(o, mark, strlen(mark), e);
    }
    return rc;
}

static int expand(struct out *o, const char *text, size_t len, const char *file, int line, int col,
                  int allowed, int depth, struct pt_err *e)
{
    struct bs_toks t;
    int rc = bs_lex(text, len, line, col, &t, e);
    size_t from = 0; /* text[from..) is not copied yet */
    for (size_t i = 0; rc == 0 && i + 1 < t.n; i++) {
        const struct bs_tok *kw = &t.v[i], *str = &t.v[i + 1];
        if (kw->kind != TK_NAME || kw->len != 7 || memcmp(kw->s, "include", 7) ||
            str->kind != TK_STR)
            continue;
        size_t at = (size_t)(kw->s - text);
        rc = put(o, text + from, at - from, e);
        if (rc == 0)
            rc = one(o, &t, file, kw, str, allowed, depth, e);
        from = (size_t)(str->s + str->len - text);
        i++;
    }
    if (rc == 0)
        rc = put(o, text + from, len - from, e);
    bs_toks_free(&t);
    return rc;
}

int bs_expand_includes(const char *text, size_t len, const char *file, int line, int col,
                       int allowed, size_t max, char **out, struct pt_err *e)
{
    struct out o = {.max = max};
    *out = NULL;
    int rc = expand(&o, text, len, file ? file : "<text>", line, col, allowed, 0, e);
    if (rc < 0)
        rc = pt_err_set(e, PT_EUSER,
                        "%s:%d:%d: error: the network description with the files it includes "
                        "is longer than the %zu bytes partrain keeps",
                        file ? file : "<text>", line, col, max - 1);
    if (rc == 0 && !o.s)
        rc = put(&o, "", 0, e);
    if (rc) {
        free(o.s);
        return rc;
    }
    *out = o.s;
    return 0;
}
