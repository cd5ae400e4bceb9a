/* Loading text into a config (see the map in cfg_internal.h): cfg_new with the
 * language's reader, config files (configFile= and include=, each real path read once),
 * strings, and command-line arguments. The only file that knows both front ends. */
#include "parsers/cfg_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parsers/cfg_ini.h"
#include "parsers/cfg_lex.h"
#include "parsers/cfg_parse.h"

static int ends_with_ci(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

static int read_whole(const char *path, const struct cfg_origin *at, char **out, size_t *len,
                      struct pt_err *e)
{
    char where[512];
    const char *w = at ? cfg_origin_str(at, where, sizeof where) : path;
    const char *sep = ": error: ";
    FILE *f = fopen(path, "rb");
    if (!f)
        return pt_err_set(e, PT_EUSER, "%s%scannot open config file '%s': %s", w, sep, path,
                          strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return pt_err_set(e, PT_EUSER, "%s%sconfig file '%s' is a directory", w, sep, path);
    }
    size_t cap = 4096, n = 0;
    char *buf = pt_malloc(cap, e);
    if (!buf) {
        fclose(f);
        return e ? e->code : PT_ENOMEM;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= CFG_MAX_FILE_BYTES) {
                free(buf);
                fclose(f);
                return pt_err_set(e, PT_EUSER, "%s%sconfig file '%s' is larger than %u MiB", w, sep,
                                  path, CFG_MAX_FILE_BYTES >> 20);
            }
            char *g = pt_realloc(buf, cap * 2, e);
            if (!g) {
                free(buf);
                fclose(f);
                return e ? e->code : PT_ENOMEM;
            }
            buf = g;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return pt_err_set(e, PT_EUSER, "%s%scannot read config file '%s'", w, sep, path);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

static int parse_text(struct cfg_node *block, const char *name, const char *text, size_t len,
                      const char *dir, struct pt_err *e)
{
    int rc = cfg_check_text(name, text, len, e);
    if (rc)
        return rc;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    if (ends_with_ci(name, ".ini") && !(block->cfg->options & CFG_LOAD_PLAIN))
        return cfg_parse_ini(block, name, text, len, dir, e);
    struct cfg_seg seg = {
        .text = (char *)text,
        .len = len,
        .at = {.file = name, .line = 1, .col = 1},
        .dir = dir,
    };
    return cfg_parse_segment(block, &seg, e);
}

/* Read a file into block: configFile= when include == 0, include= otherwise (a file read
 * before is then skipped with a warning instead of an error). */
static int read_file(struct cfg_node *block, const char *path, const char *dir, int include,
                     const struct cfg_origin *at, struct pt_err *e)
{
    struct cfg *c = block->cfg;
    char *full = NULL;
    if (path[0] != '/' && dir && dir[0]) {
        full = malloc(strlen(dir) + strlen(path) + 2);
        if (!full)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        sprintf(full, "%s/%s", dir, path);
    }
    const char *open_path = full ? full : path;
    char *real = realpath(open_path, NULL);
    if (!real) {
        int err = errno;
        free(full);
        if (at)
            return cfg_error(e, at, "cannot open config file '%s': %s", path, strerror(err));
        return pt_err_set(e, PT_EUSER, "error: cannot open config file '%s': %s", path,
                          strerror(err));
    }
    for (size_t i = 0; i < c->nloaded; i++) {
        if (strcmp(c->loaded[i], real) != 0)
            continue;
        free(real);
        free(full);
        if (include) {
            cfg_warn(c, at, "config file '%s' was already read; not including it again", path);
            return 0;
        }
        if (at)
            return cfg_error(e, at, "config file '%s' is given more than once", path);
        return pt_err_set(e, PT_EUSER, "error: config file '%s' is given more than once", path);
    }
    char **grown = realloc(c->loaded, (c->nloaded + 1) * sizeof *grown);
    if (!grown) {
        free(real);
        free(full);
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    }
    c->loaded = grown;
    c->loaded[c->nloaded++] = real;

    char *text = NULL;
    size_t len = 0;
    int rc = read_whole(open_path, at, &text, &len, e);
    if (rc == 0) {
        /* the directory of the including text stays the base for relative paths (CNTK
         * resolves against the current directory, not the file's) */
        const char *name = cfg_intern(c, path);
        if (!name)
            rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
        else
            rc = parse_text(block, name, text, len, dir, e);
    }
    free(text);
    free(full);
    return rc;
}

static int include_file(struct cfg_node *block, const char *path, const char *dir,
                        const struct cfg_origin *at, struct pt_err *e)
{
    if (block->cfg->options & CFG_LOAD_PLAIN)
        return cfg_error(e, at, "include= is not allowed here: this text may not read files");
    return read_file(block, path, dir, 1, at, e);
}

static const struct cfg_reader legacy_reader = {
    .parse_segment = cfg_parse_segment,
    .include_file = include_file,
};

struct cfg *cfg_new(void)
{
    return cfg_tree_new(&legacy_reader);
}

static const char *current_dir(struct cfg *c)
{
    char buf[PATH_MAX];
    if (!getcwd(buf, sizeof buf))
        return cfg_intern(c, ".");
    return cfg_intern(c, buf);
}

int cfg_load_file(struct cfg *c, const char *path, const struct cfg_origin *at, struct pt_err *e)
{
    const char *dir = current_dir(c);
    if (!dir)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    return read_file(&c->root, path, dir, 0, at, e);
}

int cfg_load_string(struct cfg *c, const char *name, const char *text, size_t len, struct pt_err *e)
{
    const char *iname = cfg_intern(c, name);
    const char *dir = current_dir(c);
    if (!iname || !dir)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    return parse_text(&c->root, iname, text, len, dir, e);
}

int cfg_load_string_opts(struct cfg *c, const char *name, const char *text, size_t len,
                         unsigned options, struct pt_err *e)
{
    c->options |= options;
    return cfg_load_string(c, name, text, len, e);
}

size_t cfg_file_count(const struct cfg *c)
{
    return c->nloaded;
}

const char *cfg_file(const struct cfg *c, size_t i)
{
    return i < c->nloaded ? c->loaded[i] : NULL;
}

/* An argument that is one block without a name, "[command=train:test]" (CNTK's tests pass
 * it so): its content, as CNTK's parser takes an opening brace where an entry starts (the
 * brace's content parsed at the same level). *from and *len narrowed to the inside; an
 * argument that is not wholly one bracketed block ("[a=1] x=2", or unbalanced: the parse
 * then says why) is left as it is. */
static void braced_arg(const char *arg, size_t *from, size_t *len)
{
    size_t a = strspn(arg, " \t"), b = *len;
    while (b > a && (arg[b - 1] == ' ' || arg[b - 1] == '\t'))
        b--;
    struct cfg_lex lx = {.s = arg, .n = b, .i = a, .line = 1, .col = 1};
    struct pt_err ignored;
    pt_err_clear(&ignored);
    if ((arg[a] != '[' && arg[a] != '{') || cfg_lex_skim(&lx, &ignored) || lx.i != b)
        return;
    *from = a + 1;
    *len = b - a - 2;
}

int cfg_apply_arg(struct cfg *c, const char *arg, int argno, struct pt_err *e)
{
    const char *file = cfg_intern(c, "<command line>");
    const char *dir = current_dir(c);
    if (!file || !dir)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    size_t len = strlen(arg);
    struct cfg_origin at = {.file = file, .arg = argno};
    char where[64];
    struct pt_err local;
    pt_err_clear(&local);
    int rc = cfg_check_text(cfg_origin_str(&at, where, sizeof where), arg, len, &local);
    if (rc) {
        /* cfg_check_text names line:col inside the argument; keep only the argument */
        const char *msg = strstr(local.msg, ": error: ");
        return pt_err_set(e, rc, "%s%s", where, msg ? msg : local.msg);
    }
    size_t from = 0;
    braced_arg(arg, &from, &len);
    struct cfg_seg seg = {.text = (char *)arg + from, .len = len, .at = at, .dir = dir};
    return cfg_parse_segment(&c->root, &seg, e);
}
