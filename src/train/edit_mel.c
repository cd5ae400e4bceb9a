/* action=edit with editPath: CNTK's MEL (Model Editing Language) scripts, as CNTK's
 * discriminative pre-training adds a layer between two trainings (its speech DNN test,
 * TIMIT's TrainWithPreTrain):
 *
 *   m1 = LoadModel ("$currModel$", format = "cntk")
 *   SetDefaultModel (m1)
 *   HDim = 512
 *   HL$newLayer$ = DNNLayer (HDim, HDim, HL$currLayer$.y)     # a macro of ndlMacros
 *   SetInput (OL.t, 1, HL$newLayer$.y)                       # '*' matches any run
 *   SaveModel (m1, "$newModel$", format = "cntk")
 *   Dump (m1, "$newModel$.dump.txt")
 *
 * `$name$` is the value of key name, looked up from the edit block outward (CNTK's
 * variables). A line NAME = EXPRESSION is NDL: a new node (or a number), its macros those
 * of ndlMacros, written into the model's network description as an NDL network's lines
 * are (src/nn/ndl.c); SetInput becomes an "#@edit" line that the graph carries out when
 * it is built (src/nn/bs_edit.c), so the saved model is an ordinary model file, which a
 * training then starts from (CNTK's modelPath.0). SaveModel gives every parameter that
 * the loaded model has by name its trained values, the new ones their initial values
 * (randomSeed), and keeps the model's feature statistics and label prior. MEL's other
 * commands (CreateModel, CopyNode, Remove, Rename, SetProperty, ...) are errors naming
 * the line. Rank 0 runs the script; the other ranks wait for its outcome. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/fs.h"
#include "math/backend.h"
#include "train/train_internal.h"

#define MEL_MODELS 4
#define MEL_ARGS   8

struct mel_model {
    char name[64];
    char path[1024];
    struct nn *net;
    int copied, fresh, applied; /* its tensors from path, and new ones (apply_pending) */
    char *ndl;   /* the NDL lines for it so far, each on the script's own line number */
    size_t nndl; /* length of ndl */
    int last_line;
    char *edits; /* "#@edit" lines */
};

struct mel {
    const char *file;
    struct cfg_node *block;
    struct backend *be;
    long long seed;
    struct mel_model m[MEL_MODELS];
    int nm, def; /* def: the default model, -1 none */
    struct pt_log *log;
};

static int mel_error(const struct mel *s, int line, struct pt_err *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int mel_error(const struct mel *s, int line, struct pt_err *e, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pt_err_set(e, PT_EUSER, "%s:%d: error: %s", s->file, line, msg);
}

static int append(char **buf, size_t *len, const char *text, struct pt_err *e)
{
    size_t n = strlen(text);
    char *p = realloc(*buf, *len + n + 1);
    if (!p)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    memcpy(p + *len, text, n + 1);
    *buf = p;
    *len += n;
    return 0;
}

/* The script with every $name$ replaced by that key's value (from the edit block outward). */
static int substitute(struct mel *s, const char *text, char **out, struct pt_err *e)
{
    char *res = NULL;
    size_t len = 0;
    int line = 1, rc = append(&res, &len, "", e);
    for (const char *p = text; rc == 0 && *p;) {
        if (*p != '$') {
            size_t n = strcspn(p, "$\n");
            n = n ? n : 1;
            char chunk[4096];
            if (n >= sizeof chunk)
                n = sizeof chunk - 1;
            memcpy(chunk, p, n);
            chunk[n] = '\0';
            line += *p == '\n';
            rc = append(&res, &len, chunk, e);
            p += n;
            continue;
        }
        const char *end = strchr(p + 1, '$');
        size_t n = end ? (size_t)(end - p - 1) : 0;
        char name[128];
        if (!end || n == 0 || n >= sizeof name || memchr(p + 1, '\n', n)) {
            rc = mel_error(s, line, e, "a '$' that does not start a $name$ variable");
            break;
        }
        memcpy(name, p + 1, n);
        name[n] = '\0';
        struct cfg_node *key = NULL;
        const char *val = NULL;
        rc = cfg_find(s->block, name, &key, e);
        if (rc == 0 && !key)
            rc = mel_error(s, line, e,
                           "unknown variable $%s$ (set it in the edit block, an enclosing one or "
                           "on the command line)",
                           name);
        if (rc == 0)
            rc = cfg_value(key, &val, e);
        if (rc == 0)
            rc = append(&res, &len, val, e);
        p = end + 1;
    }
    if (rc)
        free(res);
    else
        *out = res;
    return rc;
}

/* A whole text file (at most 4 MiB) into *out (malloc'd). */
static int read_text(const char *path, const char *what, char **out, struct pt_err *e)
{
    size_t n = 0;
    int rc = pt_file_read_all(path, 4 << 20, out, &n);
    if (rc == -1)
        return pt_err_set(e, PT_EUSER, "error: cannot open %s '%s': %s", what, path,
                          strerror(errno));
    if (rc)
        return pt_err_set(e, PT_EUSER, "error: cannot read %s '%s' whole (at most 4 MiB)", what,
                          path);
    if (memchr(*out, '\0', n)) {
        free(*out);
        *out = NULL;
        return pt_err_set(e, PT_EUSER, "error: %s '%s' is not a text file (it holds NUL bytes)",
                          what, path);
    }
    return 0;
}

/* s without surrounding blanks, in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* s unquoted, in place. */
static char *unquote(char *s)
{
    size_t n = strlen(s);
    if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
        s[n - 1] = '\0';
        s++;
    }
    return s;
}

/* An argument unquoted; NAME = VALUE (a named one) as NAME=VALUE, its value unquoted. */
static char *plain_arg(char *a)
{
    size_t n = strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    size_t at = n + strspn(a + n, " \t");
    if (n == 0 || a[at] != '=')
        return unquote(a);
    char *v = unquote(trim(a + at + 1));
    memmove(a + n + 1, v, strlen(v) + 1);
    a[n] = '=';
    return a;
}

/* The arguments inside "(...)" of a call, split at top-level commas, each trimmed and
 * unquoted; a named argument keeps its "name=" (blanks around '=' removed). Returns the
 * count, -1 when malformed. */
static int split_args(char *p, char **args, int max)
{
    size_t n = strlen(p);
    if (n == 0 || p[n - 1] != ')')
        return -1;
    p[n - 1] = '\0';
    int k = 0, depth = 0;
    char quote = 0, *start = p;
    for (char *q = p;; q++) {
        if (quote) {
            if (!*q)
                return -1;
            if (*q == quote)
                quote = 0;
            continue;
        }
        if (*q == '"' || *q == '\'')
            quote = *q;
        else if (*q == '(')
            depth++;
        else if (*q == ')' && --depth < 0)
            return -1;
        else if ((*q == ',' && depth == 0) || !*q) {
            int last = !*q;
            *q = '\0';
            char *a = trim(start);
            if (*a || k || !last) {
                if (k == max || !*a)
                    return -1;
                args[k++] = plain_arg(a);
            }
            if (last)
                break;
            start = q + 1;
        }
    }
    return depth == 0 ? k : -1;
}

static int find_model(const struct mel *s, const char *name)
{
    for (int i = 0; i < s->nm; i++)
        if (!strcmp(s->m[i].name, name))
            return i;
    return -1;
}

/* A node name as the model knows it: "m1.L1.S" is "L1.S" where m1 names a model. */
static const char *unqualified(const struct mel *s, const char *name)
{
    const char *dot = strchr(name, '.');
    if (dot && (size_t)(dot - name) < sizeof s->m[0].name) {
        char head[sizeof s->m[0].name];
        memcpy(head, name, (size_t)(dot - name));
        head[dot - name] = '\0';
        if (find_model(s, head) >= 0)
            return dot + 1;
    }
    return name;
}

/* A model argument: a model's name, else the default model. */
static int model_arg(const struct mel *s, int line, const char *cmd, const char *name, int *out,
                     struct pt_err *e)
{
    *out = name ? find_model(s, name) : s->def;
    if (*out < 0)
        return name ? mel_error(s, line, e, "%s: '%s' is no model (LoadModel names one)", cmd, name)
                    : mel_error(s, line, e, "%s: no default model (SetDefaultModel)", cmd);
    return 0;
}

/* format = "cntk" (any case) or none: the only model format. */
static int check_format(const struct mel *s, int line, char **args, int *nargs, struct pt_err *e)
{
    for (int i = 0; i < *nargs; i++)
        if (!strncasecmp(args[i], "format=", 7)) {
            const char *f = args[i] + 7;
            if (strcasecmp(f, "cntk"))
                return mel_error(s, line, e, "format=%s: the model format is cntk", f);
            memmove(&args[i], &args[i + 1], (size_t)(*nargs - i - 1) * sizeof *args);
            (*nargs)--;
            i--;
        }
    return 0;
}

static int load_model(struct mel *s, int line, const char *name, char **args, int nargs,
                      struct pt_err *e)
{
    if (nargs != 1)
        return mel_error(s, line, e, "LoadModel (\"PATH\", format = \"cntk\"): one file");
    if (find_model(s, name) >= 0 || s->nm == MEL_MODELS)
        return mel_error(s, line, e, "LoadModel: '%s' %s", name,
                         s->nm == MEL_MODELS ? "is one model too many" : "names a model already");
    struct mel_model *m = &s->m[s->nm];
    memset(m, 0, sizeof *m);
    if (strlen(name) >= sizeof m->name || strlen(args[0]) >= sizeof m->path)
        return mel_error(s, line, e, "LoadModel: a name or path too long");
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->path, sizeof m->path, "%s", args[0]);
    int rc = nn_load(m->path, s->be, &m->net, e);
    if (rc)
        return pt_err_context(e, "in LoadModel at %s:%d", s->file, line);
    s->nm++;
    return 0;
}

/* The members of the translated NDL (each "\n#@at ...\n" and its text) that the model's
 * description lacks: a macro or value it has already (a second edit's HDim) is left out,
 * a node of the same name defined otherwise is an error. */
static int merge_members(const struct mel *s, const char *old, const char *bs, char **out,
                         size_t *outlen, struct pt_err *e)
{
    for (const char *p = strstr(bs, "\n#@at "); p;) {
        const char *next = strstr(p + 1, "\n#@at ");
        size_t n = next ? (size_t)(next - p) : strlen(p);
        const char *body = memchr(p + 1, '\n', n - 1);
        body = body ? body + 1 : p + n;
        size_t blen = (size_t)(p + n - body);
        while (blen && body[blen - 1] == '\n')
            blen--;
        char name[128];
        size_t nl = strcspn(body, " (=\n");
        int line = atoi(p + 6); /* "\n#@at LINE COL FILE": the script's line */
        if (nl == 0 || nl >= sizeof name)
            return mel_error(s, line, e, "a line that names no member");
        snprintf(name, sizeof name, "%.*s", (int)nl, body);
        int is_macro = body[nl + strspn(body + nl, " ")] == '(';
        /* the member in the old description: at a line's start, followed by ' ', '(' or '=' */
        const char *at = old;
        int have = 0, same = 0;
        while ((at = strstr(at, name)) != NULL) {
            if ((at == old || at[-1] == '\n') && at[nl] && strchr(" (=", at[nl])) {
                have = 1;
                same |= !strncmp(at, body, blen) && (at[blen] == '\n' || !at[blen]);
            }
            at += nl;
        }
        if (have && !is_macro && !same)
            return mel_error(s, line, e,
                             "'%s' is defined already in the model's network, "
                             "otherwise (MEL cannot define it again)",
                             name);
        if (!have) {
            char *chunk = strndup(p, n);
            int rc = chunk ? append(out, outlen, chunk, e)
                           : pt_err_set(e, PT_ENOMEM, "error: out of memory");
            free(chunk);
            if (rc)
                return rc;
        }
        p = next;
    }
    return 0;
}

/* The text of the files ndlMacros names ('+'-separated), appended to *buf. */
static int add_macros(struct mel *s, char **buf, size_t *len, struct pt_err *e)
{
    struct cfg_node *key = NULL;
    const char *v = NULL;
    int rc = cfg_find(s->block, "ndlMacros", &key, e);
    if (rc || !key)
        return rc;
    if ((rc = cfg_value(key, &v, e)) != 0)
        return rc;
    const struct cfg_origin *o = cfg_value_origin(key);
    while (rc == 0 && *v) {
        size_t n = strcspn(v, "+");
        char path[1024];
        if (n >= sizeof path)
            return cfg_error(e, o, "ndlMacros: a path is too long");
        if (n) {
            memcpy(path, v, n);
            path[n] = '\0';
            /* as NDLNetworkBuilder reads it (ndl.c): a relative path not found here is
             * looked for beside the config file that set it */
            char alt[sizeof path];
            const char *slash = o && o->file ? strrchr(o->file, '/') : NULL;
            if (path[0] != '/' && access(path, F_OK) != 0 && slash &&
                snprintf(alt, sizeof alt, "%.*s/%s", (int)(slash - o->file), o->file,
                         strrchr(path, '/') ? strrchr(path, '/') + 1 : path) < (int)sizeof alt &&
                access(alt, F_OK) == 0)
                memcpy(path, alt, sizeof path);
            char *text = NULL, *subst = NULL;
            rc = read_text(path, "ndlMacros", &text, e);
            if (rc && o && o->file)
                pt_err_context(e, "ndlMacros set at %s:%d:%d", o->file, o->line, o->col);
            if (rc == 0)
                rc = substitute(s, text, &subst, e);
            if (rc == 0)
                rc = append(buf, len, "\n", e);
            if (rc == 0)
                rc = append(buf, len, subst, e);
            free(text);
            free(subst);
        }
        v += n + (v[n] == '+');
    }
    return rc;
}

/* path is none of the files the script reads (the script, a model LoadModel read). */
static int not_input(const struct mel *s, int line, const char *cmd, const char *path,
                     struct pt_err *e)
{
    struct pt_inputs ins = {0};
    int rc = pt_inputs_add(&ins, s->file, "the MEL script", e);
    for (int i = 0; rc == 0 && i < s->nm; i++)
        rc = pt_inputs_add(&ins, s->m[i].path, "a model that LoadModel read", e);
    const struct pt_input *same = rc == 0 ? pt_inputs_find(&ins, path) : NULL;
    if (same)
        rc = mel_error(s, line, e, "%s: '%s' is %s (%s): not written over", cmd, path, same->what,
                       same->real);
    pt_inputs_free(&ins);
    return rc;
}

/* The model's pending lines and edits carried out (cmd, at the script's line, needs them):
 * a new network whose parameters the current one gives by name becomes the model's
 * network; *copied and *fresh count its tensors of each kind. Nothing pending: nothing
 * done, both 0. */
static int apply_pending(struct mel *s, int line, int mi, const char *cmd, int *copied, int *fresh,
                         struct pt_err *e)
{
    struct mel_model *m = &s->m[mi];
    const struct nn_config *oc = nn_get_config(m->net);
    *copied = *fresh = 0;
    if (!m->ndl && !m->edits)
        return 0;
    if (oc->rnn != NN_GRAPH)
        return mel_error(s, line, e,
                         "%s: the model '%s' holds a SimpleNetworkBuilder network, which "
                         "MEL cannot add to or rewire (an NDL or BrainScript network can be)",
                         cmd, m->path);
    struct nn_config *nc = pt_malloc(sizeof *nc, e);
    char *text = NULL, *ndl = NULL, *bs = NULL;
    size_t len = 0, nl = 0;
    struct nn *net = NULL;
    int rc = nc ? append(&text, &len, oc->bs_text, e) : e->code;
    if (rc == 0 && m->ndl && (rc = append(&ndl, &nl, m->ndl, e)) == 0 &&
        (rc = add_macros(s, &ndl, &nl, e)) == 0 &&
        (rc = nn_ndl_translate(ndl, nl, s->file, &bs, e)) == 0)
        rc = merge_members(s, oc->bs_text, bs, &text, &len, e);
    if (rc == 0 && m->edits)
        rc = append(&text, &len, m->edits, e);
    if (rc == 0 && len >= sizeof nc->bs_text)
        rc = mel_error(s, line, e, "%s: the edited network's description is longer than %zu bytes",
                       cmd, sizeof nc->bs_text - 1);
    if (rc == 0) {
        memcpy(nc, oc, sizeof *nc);
        memcpy(nc->bs_text, text, len + 1);
        nc->start_model[0] = '\0';
        rc = nn_config_reread(m->path, nc, e);
        if (rc == 0)
            rc = nn_new(nc, s->be, (uint64_t)s->seed, &net, e);
        if (rc == 0)
            rc = nn_graph_copy_named(net, m->net, copied, fresh, e);
        if (rc)
            pt_err_context(e, "in %s at %s:%d (the edited network)", cmd, s->file, line);
    }
    if (rc == 0) { /* the model is the edited one from now on */
        m->copied = m->applied++ ? m->copied : *copied; /* later: from the edited one */
        m->fresh += *fresh;
        nn_free(m->net);
        m->net = net;
        net = NULL;
        free(m->ndl);
        free(m->edits);
        m->ndl = m->edits = NULL;
        m->nndl = 0;
        m->last_line = 0;
    }
    nn_free(net);
    free(nc);
    free(text);
    free(ndl);
    free(bs);
    return rc;
}

/* The model's network with its pending lines and edits (apply_pending), written to path;
 * the log counts its tensors from the loaded file and those the edits added. */
static int save_model(struct mel *s, int line, int mi, const char *path, struct pt_err *e)
{
    struct mel_model *m = &s->m[mi];
    int copied, fresh;
    int rc = not_input(s, line, "SaveModel", path, e);
    if (rc == 0)
        rc = apply_pending(s, line, mi, "SaveModel", &copied, &fresh, e);
    if (rc == 0)
        rc = pt_make_parent_dirs(path, e);
    if (rc == 0)
        rc = nn_save(m->net, path, e);
    if (rc == 0) {
        int nodes = 0, with_grad = 0;
        nn_node_counts(m->net, &nodes, &with_grad);
        pt_log_printf(s->log,
                      "MEL: model '%s' (%d nodes) saved as '%s'; %d parameter tensors from '%s', "
                      "%d new.\n",
                      m->name, nodes, path, m->copied, m->path, m->fresh);
    }
    return rc;
}

/* NAME = EXPRESSION: an NDL line for the default model, on its own line number. */
static int ndl_line(struct mel *s, int line, const char *name, const char *expr, struct pt_err *e)
{
    if (s->def < 0)
        return mel_error(s, line, e, "%s = ...: no default model to add it to (SetDefaultModel)",
                         name);
    struct mel_model *m = &s->m[s->def];
    int rc = 0;
    for (; rc == 0 && m->last_line < line - 1; m->last_line++)
        rc = append(&m->ndl, &m->nndl, "\n", e);
    char buf[2048];
    if (snprintf(buf, sizeof buf, "%s = %s\n", unqualified(s, name), expr) >= (int)sizeof buf)
        return mel_error(s, line, e, "a line too long");
    if (rc == 0)
        rc = append(&m->ndl, &m->nndl, buf, e);
    m->last_line = line;
    return rc;
}

/* MEL's commands, blank-separated */
static const char unsupported[] =
    "CreateModel CreateModelWithName LoadNDLSnippet CopyModel CopyNode CopySubTree "
    "CopyNodeInputs SetNodeInputs SetInputs SetProperty SetPropertyForSubTree Remove RemoveNode "
    "Delete DeleteNode Rename LoadModelWithName UnloadModel ReviseParameter DumpNetwork";
static const char supported[] =
    "LoadModel SetDefaultModel SaveModel SaveDefaultModel Dump DumpModel SetInput SetNodeInput";

static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p; p += strcspn(p, " "), p += strspn(p, " "))
        if (strcspn(p, " ") == n && !strncasecmp(p, name, n))
            return 1;
    return 0;
}

/* A MEL command (-1: cmd is none, the line is an NDL expression). */
static int command(struct mel *s, int line, const char *result, const char *cmd, char **args,
                   int nargs, struct pt_err *e)
{
    if (listed(unsupported, cmd))
        return mel_error(s, line, e,
                         "MEL's %s is not supported by partrain (supported: LoadModel, "
                         "SetDefaultModel, NAME = NDL expression, SetInput, SaveModel, Dump)",
                         cmd);
    if (!listed(supported, cmd))
        return -1;
    int rc = check_format(s, line, args, &nargs, e), mi = -1;
    if (rc)
        return rc;
    if (!strcasecmp(cmd, "LoadModel"))
        return result ? load_model(s, line, result, args, nargs, e)
                      : mel_error(s, line, e, "LoadModel: write NAME = LoadModel (\"PATH\")");
    if (result)
        return mel_error(s, line, e, "%s gives no value to assign to '%s'", cmd, result);
    if (!strcasecmp(cmd, "SetDefaultModel")) {
        if (nargs != 1)
            return mel_error(s, line, e, "SetDefaultModel (MODEL): one model");
        rc = model_arg(s, line, cmd, args[0], &mi, e);
        if (rc == 0)
            s->def = mi;
        return rc;
    }
    if (!strcasecmp(cmd, "SaveModel") || !strcasecmp(cmd, "SaveDefaultModel")) {
        int def = !strcasecmp(cmd, "SaveDefaultModel");
        if (nargs != 2 - def)
            return mel_error(s, line, e, "%s: expected %s\"PATH\"", cmd, def ? "" : "MODEL, ");
        rc = model_arg(s, line, cmd, def ? NULL : args[0], &mi, e);
        return rc ? rc : save_model(s, line, mi, args[1 - def], e);
    }
    if (!strcasecmp(cmd, "Dump") || !strcasecmp(cmd, "DumpModel")) {
        int data = 0; /* includeData = false (CNTK's default): the nodes without values */
        if (nargs == 3 && !strncasecmp(args[2], "includeData=", 12)) {
            const char *v = args[2] + 12;
            data = !strcasecmp(v, "true") ? 1 : !strcasecmp(v, "false") ? 0 : -1;
        }
        if ((nargs != 2 && nargs != 3) || data < 0)
            return mel_error(s, line, e,
                             "%s (MODEL, \"PATH\", includeData = false|true): a model and a file",
                             cmd);
        int copied, fresh; /* the nodes as the script has made them so far */
        if ((rc = model_arg(s, line, cmd, args[0], &mi, e)) == 0)
            rc = not_input(s, line, cmd, args[1], e);
        if (rc == 0)
            rc = apply_pending(s, line, mi, cmd, &copied, &fresh, e);
        if (rc == 0)
            rc = dump_node_write(args[1], s->m[mi].net, data, e);
        return rc;
    }
    if (!strcasecmp(cmd, "SetInput") || !strcasecmp(cmd, "SetNodeInput")) {
        if (nargs != 3)
            return mel_error(s, line, e, "%s (NODE, INDEX, SOURCE): three arguments", cmd);
        if ((rc = model_arg(s, line, cmd, NULL, &mi, e)) != 0)
            return rc;
        char buf[1024];
        if (snprintf(buf, sizeof buf, "\n#@edit %s:%d SetInput %s %s %s", s->file, line,
                     unqualified(s, args[0]), args[1],
                     unqualified(s, args[2])) >= (int)sizeof buf ||
            strpbrk(s->file, " \t"))
            return mel_error(s, line, e,
                             "%s: the names are too long (or the script's path has "
                             "a blank)",
                             cmd);
        size_t n = s->m[mi].edits ? strlen(s->m[mi].edits) : 0;
        return append(&s->m[mi].edits, &n, buf, e);
    }
    return -1;
}

/* One statement of the script. */
static int statement(struct mel *s, int line, char *st, struct pt_err *e)
{
    char *eq = NULL, *paren = strchr(st, '(');
    for (char *q = st; *q && q != paren; q++)
        if (*q == '=') {
            eq = q;
            break;
        }
    char *result = NULL, *rhs = st;
    if (eq) {
        *eq = '\0';
        result = trim(st);
        rhs = trim(eq + 1);
        if (!*result || strpbrk(result, " \t\"'"))
            return mel_error(s, line, e, "expected NAME = EXPRESSION, or COMMAND (...)");
    }
    char callee[64];
    size_t cl = strcspn(rhs, "( \t");
    const char *open = rhs + cl + strspn(rhs + cl, " \t");
    if (*open == '(' && cl && cl < sizeof callee) {
        memcpy(callee, rhs, cl);
        callee[cl] = '\0';
        char copy[2048], *args[MEL_ARGS];
        snprintf(copy, sizeof copy, "%s", open + 1);
        int nargs = split_args(copy, args, MEL_ARGS);
        if (nargs >= 0) {
            int rc = command(s, line, result, callee, args, nargs, e);
            if (rc != -1)
                return rc;
        } else if (!result)
            return mel_error(s, line, e, "%s (...): malformed arguments", callee);
    }
    if (!result)
        return mel_error(s, line, e, "expected NAME = EXPRESSION, or COMMAND (...)");
    return ndl_line(s, line, result, rhs, e);
}

int mel_run(struct pt_ctx *ctx, struct cfg_node *block, const char *path, long long seed,
            struct pt_err *e)
{
    struct mel s = {.file = path, .block = block, .seed = seed, .def = -1, .log = ctx->log};
    char *raw = NULL, *text = NULL;
    int rc = read_text(path, "MEL script (editPath)", &raw, e);
    if (rc == 0)
        rc = substitute(&s, raw, &text, e);
    if (rc == 0)
        rc = backend_cpu_new(&s.be, e);
    int line = 1;
    for (char *p = text; rc == 0 && p && *p; line++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        char quote = 0; /* a '#' outside quotes starts a comment */
        for (char *q = p; *q; q++) {
            if (quote && *q == quote)
                quote = 0;
            else if (!quote && (*q == '"' || *q == '\''))
                quote = *q;
            else if (!quote && *q == '#') {
                *q = '\0';
                break;
            }
        }
        char *st = trim(p);
        size_t n = strlen(st);
        if (n && st[n - 1] == ';')
            st[--n] = '\0';
        if (n)
            rc = statement(&s, line, st, e);
        p = nl ? nl + 1 : NULL;
    }
    for (int i = 0; i < s.nm; i++) {
        if (rc == 0 && (s.m[i].ndl || s.m[i].edits))
            pt_log_printf(ctx->log,
                          "warning: %s: the edits of model '%s' after its last SaveModel are "
                          "not saved\n",
                          path, s.m[i].name);
        nn_free(s.m[i].net);
        free(s.m[i].ndl);
        free(s.m[i].edits);
    }
    if (s.be)
        backend_free(s.be);
    free(raw);
    free(text);
    return rc;
}
