/* Model files (SPEC 8).
 *
 * Layout, version 1 (integers and floats in the writer's byte order, which the header
 * records; a file from the other byte order is refused):
 *
 *   offset  size  field
 *   0       8     magic "PTMODEL\x1a"
 *   8       4     format version (1)
 *   12      4     byte-order mark 0x01020304
 *   16      8     payload bytes P
 *   24      P     payload:
 *                   u32 D, D bytes of description (SimpleNetworkBuilder config text),
 *                   zero padding to a multiple of 4
 *                   u64 N, N floats: the parameter arena
 *                   u32 M, M floats mean, M floats 1/stddev (M = 0: none)
 *                   u32 Q, Q floats label prior (Q = 0: none)
 *   24+P    8     FNV-1a 64 of bytes [0, 24+P)
 *
 * Saving writes a unique temporary next to path (never through a symlink; core/fs.h),
 * fsyncs it, renames it over path and fsyncs the directory, so a crash leaves either the
 * old or the new model. The description is parsed with include= and $variables$ off: a
 * model file cannot make the trainer read another file. Loading checks, in order: magic, version,
 * byte order, length, checksum, then every field against the bytes left. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"
#include "nn/graph.h"
#include "nn/nn_internal.h"

#define MODEL_MAGIC   "PTMODEL\x1a"
#define MODEL_VERSION 1u
#define MODEL_BOM     0x01020304u
#define MODEL_HEADER  24u

static uint64_t fnv1a64(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ------------------------------------------------------------------ writing */

static void put(unsigned char *buf, size_t *at, const void *src, size_t n)
{
    if (n)
        memcpy(buf + *at, src, n);
    *at += n;
}

static size_t pad4(size_t n)
{
    return (n + 3) & ~(size_t)3;
}

/* The whole file in memory (the caller frees *out). */
static int encode_model(struct nn *net, unsigned char **out, size_t *size, struct pt_err *e)
{
    char desc[NN_BS_MAX + 4096];
    int dl = nn_config_write(&net->cfg, desc, sizeof desc);
    if (dl < 0 || (size_t)dl >= sizeof desc)
        return pt_err_set(e, PT_EINTERNAL, "error: internal: network description too long");
    uint32_t d = (uint32_t)dl;
    uint32_t m = net->cfg.mean_var_norm && net->mean_set ? (uint32_t)net->cfg.sizes[0] : 0;
    uint32_t q = net->prior ? (uint32_t)net->prior_dim : 0;
    uint64_t np = net->nparams;
    uint64_t payload = 4 + pad4(d) + 8 + 4 * np + 4 + 8 * (uint64_t)m + 4 + 4 * (uint64_t)q;
    size_t total = MODEL_HEADER + (size_t)payload + 8;
    unsigned char *buf = pt_calloc(total, 1, e);
    if (!buf)
        return e ? e->code : PT_ENOMEM;
    size_t at = 0;
    uint32_t version = MODEL_VERSION, bom = MODEL_BOM;
    put(buf, &at, MODEL_MAGIC, 8);
    put(buf, &at, &version, 4);
    put(buf, &at, &bom, 4);
    put(buf, &at, &payload, 8);
    put(buf, &at, &d, 4);
    put(buf, &at, desc, d);
    at = pad4(at);
    put(buf, &at, &np, 8);
    int rc = net->bk->ops->download(net->bk, (float *)(void *)(buf + at), net->params, np, e);
    at += 4 * np;
    put(buf, &at, &m, 4);
    put(buf, &at, net->mean, 4 * (size_t)m);
    put(buf, &at, net->invstd, 4 * (size_t)m);
    put(buf, &at, &q, 4);
    put(buf, &at, net->prior, 4 * (size_t)q);
    uint64_t sum = fnv1a64(buf, at);
    put(buf, &at, &sum, 8);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *size = total;
    return 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Through core/fs.h's safe replacement: a unique temporary, never through a symlink. The
 * directory is not created (nn_save's contract). */
static int write_atomic(const char *path, const unsigned char *buf, size_t n, struct pt_err *e)
{
    struct pt_file_out o;
    int rc = pt_file_begin(&o, path, 0, "model file", e);
    if (rc)
        return rc;
    if (write_all(o.fd, buf, n)) {
        rc =
            pt_err_set(e, PT_ESYS, "%s: error: cannot write model file: %s", path, strerror(errno));
        pt_file_abort(&o);
        return rc;
    }
    return pt_file_commit(&o, "model file", e);
}

int nn_save(struct nn *net, const char *path, struct pt_err *e)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    int rc = encode_model(net, &buf, &n, e);
    if (rc == 0)
        rc = write_atomic(path, buf, n, e);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------ reading */

/* What a model file holds besides the description (views into the loaded file). */
struct nn_model_data {
    const float *params;
    size_t nparams;
    const float *mean, *invstd; /* input size each, or NULL */
    int mean_dim;
    const float *prior; /* or NULL */
    int prior_dim;
};

/* A checked view of a loaded file. */
struct model_file {
    const char *path;
    unsigned char *buf;
    size_t size, at, end; /* read cursor and end of payload */
    const char *desc;
    uint32_t desc_len;
    struct nn_model_data d;
};

static int read_file(struct model_file *f, struct pt_err *e)
{
    FILE *fp = fopen(f->path, "rb");
    if (!fp)
        return pt_err_set(e, PT_EUSER, "%s: error: cannot open model file: %s", f->path,
                          strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fileno(fp), &st) || !S_ISREG(st.st_mode))
        rc = pt_err_set(e, PT_EUSER, "%s: error: not a regular file", f->path);
    f->size = rc ? 0 : (size_t)st.st_size;
    if (rc == 0)
        f->buf = pt_malloc(f->size + 1, e);
    if (rc == 0 && !f->buf)
        rc = e ? e->code : PT_ENOMEM;
    if (rc == 0 && fread(f->buf, 1, f->size, fp) != f->size)
        rc = pt_err_set(e, PT_ESYS, "%s: error: cannot read model file: %s", f->path,
                        ferror(fp) ? strerror(errno) : "file shrank while reading");
    fclose(fp);
    return rc;
}

static int corrupt(const struct model_file *f, const char *what, struct pt_err *e)
{
    return pt_err_set(e, PT_EUSER, "%s: error: corrupted model file: %s", f->path, what);
}

static int check_header(struct model_file *f, struct pt_err *e)
{
    uint32_t version, bom;
    uint64_t payload, sum;
    if (f->size == 0)
        return pt_err_set(e, PT_EUSER, "%s: error: empty model file", f->path);
    if (memcmp(f->buf, MODEL_MAGIC, f->size < 8 ? f->size : 8) != 0)
        return pt_err_set(e, PT_EUSER, "%s: error: not a partrain model file (bad magic number)",
                          f->path);
    if (f->size < MODEL_HEADER + 8)
        return pt_err_set(e, PT_EUSER, "%s: error: truncated model file (%zu bytes)", f->path,
                          f->size);
    memcpy(&version, f->buf + 8, 4);
    memcpy(&bom, f->buf + 12, 4);
    memcpy(&payload, f->buf + 16, 8);
    if (bom == __builtin_bswap32(MODEL_BOM))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: model file written on a machine of the other byte order",
                          f->path);
    if (bom != MODEL_BOM)
        return corrupt(f, "bad byte-order mark", e);
    if (version != MODEL_VERSION)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: model file format version %u; this trainer reads version %u",
                          f->path, version, MODEL_VERSION);
    if (payload > f->size - MODEL_HEADER - 8)
        return pt_err_set(e, PT_EUSER, "%s: error: truncated model file (%zu bytes, expected %llu)",
                          f->path, f->size, (unsigned long long)payload + MODEL_HEADER + 8);
    if (payload < f->size - MODEL_HEADER - 8)
        return corrupt(f, "unexpected bytes after the checksum", e);
    f->end = MODEL_HEADER + (size_t)payload;
    memcpy(&sum, f->buf + f->end, 8);
    if (sum != fnv1a64(f->buf, f->end))
        return corrupt(f, "checksum mismatch", e);
    f->at = MODEL_HEADER;
    return 0;
}

/* Take a count field (size bytes) and then count * each bytes, 4-byte aligned. */
static int take_array(struct model_file *f, size_t size, size_t each, uint64_t *count,
                      const unsigned char **data, struct pt_err *e)
{
    uint64_t n = 0;
    uint32_t n32 = 0;
    if (f->end - f->at < size)
        return corrupt(f, "payload ends inside a field", e);
    if (size == 4)
        memcpy(&n32, f->buf + f->at, 4);
    else
        memcpy(&n, f->buf + f->at, 8);
    n = size == 4 ? n32 : n;
    f->at += size;
    if (each && n > (f->end - f->at) / each)
        return corrupt(f, "an array runs past the payload", e);
    *count = n;
    *data = f->buf + f->at;
    f->at += pad4((size_t)(n * each));
    if (f->at > f->end)
        return corrupt(f, "payload ends inside padding", e);
    return 0;
}

/* Fields of the payload; floats are 4-byte aligned in the buffer (malloc'd). */
static int parse_payload(struct model_file *f, struct pt_err *e)
{
    uint64_t n;
    const unsigned char *p;
    int rc = take_array(f, 4, 1, &n, &p, e);
    if (rc)
        return rc;
    f->desc = (const char *)p;
    f->desc_len = (uint32_t)n;
    rc = take_array(f, 8, 4, &n, &p, e);
    if (rc)
        return rc;
    f->d.params = (const float *)(const void *)p;
    f->d.nparams = (size_t)n;
    rc = take_array(f, 4, 8, &n, &p, e);
    if (rc)
        return rc;
    f->d.mean_dim = (int)n;
    f->d.mean = n ? (const float *)(const void *)p : NULL;
    f->d.invstd = n ? f->d.mean + n : NULL;
    rc = take_array(f, 4, 4, &n, &p, e);
    if (rc)
        return rc;
    f->d.prior_dim = (int)n;
    f->d.prior = n ? (const float *)(const void *)p : NULL;
    if (f->at != f->end)
        return corrupt(f, "unexpected bytes at the end of the payload", e);
    return 0;
}

/* The description as a network config; its errors name path:line:col. want[0 .. nwant):
 * the nodes a test reports (nn_load_eval), or none. */
static int read_description(const char *path, const char *desc, size_t len, const char *const *want,
                            size_t nwant, int want_eval, struct nn_config *cfg, struct pt_err *e)
{
    struct cfg *c = cfg_new();
    if (!c)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    int rc = cfg_load_string_opts(c, path, desc, len, CFG_LOAD_PLAIN, e);
    struct cfg_node *bs = NULL;
    if (rc == 0)
        rc = cfg_find_local(cfg_root(c), "BrainScriptNetworkBuilder", &bs, e);
    if (rc == 0)
        rc = bs && nwant ? nn_bs_config_read_eval(bs, want_eval, want, nwant, cfg, e)
             : bs        ? nn_bs_config_read(bs, cfg, e)
                         : nn_config_read(cfg_root(c), cfg, e);
    cfg_free(c);
    return rc;
}

static int parse_description(const struct model_file *f, const char *const *want, size_t nwant,
                             int want_eval, struct nn_config *cfg, struct pt_err *e)
{
    int rc = read_description(f->path, f->desc, f->desc_len, want, nwant, want_eval, cfg, e);
    if (rc)
        pt_err_context(e, "in the network description of model file %s", f->path);
    return rc;
}

int nn_config_reread(const char *path, struct nn_config *cfg, struct pt_err *e)
{
    char *desc = pt_malloc(NN_BS_MAX + 4096, e);
    if (!desc)
        return e ? e->code : PT_ENOMEM;
    int dl = nn_config_write(cfg, desc, NN_BS_MAX + 4096);
    int rc = dl < 0 || dl >= NN_BS_MAX + 4096
                 ? pt_err_set(e, PT_EUSER, "error: the network description is longer than %d bytes",
                              NN_BS_MAX)
                 : read_description(path, desc, (size_t)dl, NULL, 0, 0, cfg, e);
    free(desc);
    return rc;
}

/* Read and check everything that can be checked before a network exists (so a damaged
 * description cannot make nn_new allocate what the file does not hold). */
static int open_model(struct model_file *f, const char *path, const char *const *want, size_t nwant,
                      int want_eval, struct nn_config *cfg, struct pt_err *e)
{
    size_t count = 0;
    memset(f, 0, sizeof *f);
    f->path = path;
    int rc = read_file(f, e);
    if (rc == 0)
        rc = check_header(f, e);
    if (rc == 0)
        rc = parse_payload(f, e);
    if (rc == 0)
        rc = parse_description(f, want, nwant, want_eval, cfg, e);
    if (rc == 0)
        rc = nn_config_param_count(cfg, &count, e);
    if (rc == 0 && count != f->d.nparams)
        rc = corrupt(f, "parameter count does not match the network description", e);
    return rc;
}

/* Sizes first (nothing changes on a mismatch), then the uploads. */
static int install(struct nn *net, const struct model_file *f, struct pt_err *e)
{
    const struct nn_model_data *d = &f->d;
    int out = net->cfg.sizes[net->cfg.nsizes - 1];
    if (d->nparams != net->nparams)
        return corrupt(f, "parameter count does not match the network description", e);
    if (d->mean_dim && (d->mean_dim != net->cfg.sizes[0] || !net->cfg.mean_var_norm))
        return corrupt(f, "feature statistics do not match the network description", e);
    if (d->prior_dim && d->prior_dim != out)
        return corrupt(f, "the label prior does not match the network description", e);
    int rc = nn_set_params(net, d->params, e);
    if (rc == 0 && d->mean_dim)
        rc = nn_set_mean_var(net, d->mean, d->invstd, d->mean_dim, e);
    if (rc == 0 && d->prior_dim)
        rc = nn_set_prior(net, d->prior, d->prior_dim, e);
    return rc;
}

int nn_load(const char *path, struct backend *b, struct nn **out, struct pt_err *e)
{
    return nn_load_eval(path, NULL, 0, 0, b, out, e);
}

int nn_load_eval(const char *path, const char *const *want, size_t nwant, int want_eval,
                 struct backend *b, struct nn **out, struct pt_err *e)
{
    struct model_file f;
    struct nn_config cfg;
    *out = NULL;
    int rc = open_model(&f, path, want, nwant, want_eval, &cfg, e);
    struct nn *net = NULL;
    if (rc == 0)
        rc = nn_new(&cfg, b, 0, &net, e);
    if (rc == 0)
        rc = install(net, &f, e);
    free(f.buf);
    if (rc) {
        nn_free(net);
        return rc;
    }
    *out = net;
    return 0;
}

int nn_load_params(struct nn *net, const char *path, struct pt_err *e)
{
    struct model_file f;
    struct nn_config cfg;
    int rc = open_model(&f, path, NULL, 0, 0, &cfg, e);
    if (rc == 0 && !nn_config_same_layout(&cfg, &net->cfg))
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: the model file holds a different network (rnnType, "
                        "layerSizes, layerTypes or applyMeanVarNorm) than the one configured at %s",
                        path, net->cfg.origin);
    if (rc == 0)
        rc = install(net, &f, e);
    free(f.buf);
    return rc;
}

/* ------------------------------------------------------------------ BS.Network.Load */

int nn_model_config(const char *path, struct nn_config *out, struct pt_err *e)
{
    struct model_file f;
    int rc = open_model(&f, path, NULL, 0, 0, out, e);
    free(f.buf);
    return rc;
}

int nn_model_description(void *ctx, const char *path, struct nn_config *out, struct pt_err *e)
{
    (void)ctx;
    int rc = nn_model_config(path, out, e);
    if (rc == 0 && out->rnn != NN_GRAPH)
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: the model holds a SimpleNetworkBuilder network, whose nodes "
                        "BrainScript cannot name (BS.Network.Load reads a BrainScript network)",
                        path);
    return rc;
}

/* The trained values of loaded model l's parameters that g reaches. */
static int fill_one(struct nn *net, const struct nn_graph *g, const struct g_loaded *l, float *host,
                    int *norm, int *prior, struct pt_err *e)
{
    struct model_file f;
    struct nn_config *mc = pt_calloc(1, sizeof *mc, e);
    struct nn_graph *gm = NULL;
    int rc = mc ? open_model(&f, l->path, NULL, 0, 0, mc, e) : PT_ENOMEM;
    if (rc == 0)
        rc = nn_graph_build(mc, &gm, e);
    if (rc == 0 && gm->n < l->n)
        rc = pt_err_set(e, PT_EINTERNAL,
                        "error: internal: %s: the model's graph has %d nodes, "
                        "fewer than the %d loaded",
                        l->path, gm->n, l->n);
    for (int k = 0; rc == 0 && k < l->n; k++) {
        const struct g_node *c = &g->nodes[l->base + k], *m = &gm->nodes[k];
        if (!c->learnable || c->dead)
            continue;
        if (!m->learnable || m->dead || m->rows != c->rows || m->cols != c->cols ||
            m->state != c->state)
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: BS.Network.Load: '%s' (%d x %d) is no trained parameter of "
                            "model file %s (its own network does not reach it)",
                            c->where, c->name, c->rows, c->cols, l->path);
        else
            memcpy(host + c->offset, f.d.params + m->offset,
                   (size_t)c->rows * (size_t)c->cols * sizeof *host);
    }
    if (rc == 0 && net->cfg.mean_var_norm && !*norm && f.d.mean_dim) {
        if (f.d.mean_dim != net->cfg.sizes[0])
            rc = corrupt(&f, "feature statistics do not match the network that loads it", e);
        else
            rc = nn_set_mean_var(net, f.d.mean, f.d.invstd, f.d.mean_dim, e);
        *norm = rc == 0;
    }
    if (rc == 0 && net->cfg.need_prior && !*prior && f.d.prior_dim) {
        rc = nn_set_prior(net, f.d.prior, f.d.prior_dim, e);
        *prior = rc == 0;
    }
    g_free(gm);
    if (mc)
        free(f.buf);
    free(mc);
    return rc;
}

int nn_graph_fill_loaded(struct nn *net, const struct nn_graph *g, float *host, struct pt_err *e)
{
    int norm = 0, prior = 0, rc = 0;
    for (int i = 0; rc == 0 && i < g->nloaded; i++)
        rc = fill_one(net, g, &g->loaded[i], host, &norm, &prior, e);
    if (rc == 0 && net->cfg.mean_var_norm && !norm)
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: the network's Mean / InvStdDev of '%s' are in none of the "
                        "models it loads",
                        net->cfg.origin, net->cfg.norm_input);
    if (rc == 0 && net->cfg.need_prior && !prior)
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: the network's label prior is in none of the "
                        "models it loads",
                        net->cfg.origin);
    return rc;
}
