/* The ImageDeserializer's data (image.h): the map file read into the reader's index (each
 * image one sequence of one sample, and one chunk, so that the timeline shuffles and deals
 * the images one by one, as CNTK's one chunk per image does), the transforms' files, and
 * the minibatches: each picked image decoded, transformed and stored, its class one-hot.
 *
 * Map file lines (CNTK's ImageDataDeserializer): PATH<TAB>LABEL, or KEY<TAB>PATH<TAB>LABEL;
 * columns split at tabs only; LABEL a whole number below labelDim (what follows its digits
 * is ignored, as strtoull does: a CR). A relative PATH is from the working directory; one
 * that starts "..." from the map file's directory. Errors name the map file and line. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "reader/image.h"
#include "reader/reader_internal.h"

struct image_set {
    char *names;     /* the paths, NUL-separated */
    size_t *path;    /* offset of each image's path in names */
    uint32_t *label; /* its class */
    size_t n;
    struct img_aux aux[IMG_MAX_TF];
    struct img im[FILL_POOL_MAX], tmp[FILL_POOL_MAX]; /* each fill worker's */
};

/* The map file's directory for a "..." path ("" when it has none). */
static size_t map_dir(const char *map)
{
    const char *slash = strrchr(map, '/');
    return slash ? (size_t)(slash - map) : 0;
}

static int add_image(struct image_set *s, size_t *cap, size_t *ncap, size_t *nlen, const char *map,
                     const char *path, size_t plen, uint32_t label)
{
    size_t extra = plen >= 3 && !strncmp(path, "...", 3) ? map_dir(map) : 0;
    size_t need = *nlen + plen + extra + 1;
    if (s->n == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        size_t *p = realloc(s->path, c * sizeof *p);
        uint32_t *l = p ? realloc(s->label, c * sizeof *l) : NULL;
        if (p)
            s->path = p;
        if (!p || !l)
            return -1;
        s->label = l;
        *cap = c;
    }
    if (need > *ncap) {
        size_t c = need * 2;
        char *q = realloc(s->names, c);
        if (!q)
            return -1;
        s->names = q;
        *ncap = c;
    }
    char *dst = s->names + *nlen;
    if (extra) { /* "..." stands for the map file's directory */
        memcpy(dst, map, extra);
        memcpy(dst + extra, path + 3, plen - 3);
        dst[extra + plen - 3] = '\0';
    } else {
        memcpy(dst, path, plen);
        dst[plen] = '\0';
    }
    s->path[s->n] = *nlen;
    s->label[s->n++] = label;
    *nlen += strlen(dst) + 1;
    return 0;
}

static int read_map(const struct reader_config *rc, struct image_set *s, struct pt_err *e)
{
    FILE *f = fopen(rc->file, "r");
    if (!f)
        return cfg_error(e, &rc->file_origin, "cannot read map file '%s': %s", rc->file,
                         strerror(errno));
    char *line = NULL;
    size_t lcap = 0, cap = 0, ncap = 0, nlen = 0, lineno = 0;
    ssize_t len;
    int r = 0;
    while (r == 0 && (len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        char *col[3];
        int ncol = 0;
        for (char *p = line; ncol < 3;) {
            col[ncol++] = p;
            char *tab = strchr(p, '\t');
            if (!tab)
                break;
            *tab = '\0';
            p = tab + 1;
        }
        if (ncol == 3 && !col[2][0]) /* a trailing tab */
            ncol = 2;
        const char *path = ncol == 3 ? col[1] : col[0], *lab = ncol == 3   ? col[2]
                                                               : ncol == 2 ? col[1]
                                                                           : "";
        if (ncol < 2 || !path[0] || !lab[0]) {
            r = pt_err_set(e, PT_EUSER,
                           "%s:%zu: error: expected PATH<TAB>LABEL (or KEY<TAB>PATH<TAB>LABEL), "
                           "columns separated by tabs",
                           rc->file, lineno);
            break;
        }
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(lab, &end, 10);
        int digits = end != lab && isdigit((unsigned char)*lab);
        if (!digits || errno == ERANGE || v >= (unsigned long long)rc->img.label_dim) {
            r = pt_err_set(e, PT_EUSER,
                           "%s:%zu: error: the class of '%s' is '%s': expected a whole number "
                           "from 0 to %d (labelDim %d)",
                           rc->file, lineno, path, lab, rc->img.label_dim - 1, rc->img.label_dim);
            break;
        }
        if (s->n == UINT32_MAX ||
            add_image(s, &cap, &ncap, &nlen, rc->file, path, strlen(path), (uint32_t)v)) {
            r = pt_err_set(e, PT_ENOMEM, "error: out of memory reading map file '%s'", rc->file);
            break;
        }
        /* checked now, on every rank (a stat and an access, no read: cheap at ImageNet's
         * 1.3 M files): a missing or unreadable image is found before the training starts,
         * where the ranks agree on errors. One that exists but does not decode is found in
         * the epoch that reads it (its rank ends the job with the reason: train_epoch.c). */
        const char *img = s->names + s->path[s->n - 1];
        struct stat st;
        const char *why = stat(img, &st)           ? strerror(errno)
                          : !S_ISREG(st.st_mode)   ? "not a regular file"
                          : access(img, R_OK) != 0 ? strerror(errno)
                                                   : NULL;
        if (why) {
            r = pt_err_set(e, PT_EUSER, "%s:%zu: error: cannot read image '%s': %s", rc->file,
                           lineno, img, why);
            break;
        }
    }
    if (r == 0 && ferror(f))
        r = pt_err_set(e, PT_ESYS, "%s: error: reading the map file failed", rc->file);
    free(line);
    fclose(f);
    if (r == 0 && s->n == 0)
        r = pt_err_set(e, PT_EUSER, "%s: error: the map file lists no image", rc->file);
    return r;
}

/* Each image its own sequence and chunk. */
static int make_index(struct reader *r, struct pt_err *e)
{
    struct ctf_index *ix = &r->ix;
    size_t n = r->img->n;
    ix->nseq = ix->nchunks = ix->total_samples = n;
    ix->seq_samples = malloc(n * sizeof *ix->seq_samples);
    ix->seq_chunk = malloc(n * sizeof *ix->seq_chunk);
    ix->chunk_first = malloc((n + 1) * sizeof *ix->chunk_first);
    if (!ix->seq_samples || !ix->seq_chunk || !ix->chunk_first)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    for (size_t i = 0; i < n; i++) {
        ix->seq_samples[i] = 1;
        ix->seq_chunk[i] = (uint32_t)i;
        ix->chunk_first[i] = i;
    }
    ix->chunk_first[n] = n;
    return 0;
}

int image_open(struct reader *r, struct pt_err *e)
{
    r->img = calloc(1, sizeof *r->img);
    if (!r->img)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    int rc = read_map(&r->rc, r->img, e);
    if (rc == 0)
        rc = make_index(r, e);
    for (int k = 0; rc == 0 && k < r->rc.img.ntf; k++)
        rc = img_aux_load(&r->rc.img.tf[k], &r->img->aux[k], e);
    /* the whole map is one randomization window (CNTK's image reader shuffles every image
     * among all: its window of one sample over chunks of one image) */
    r->rc.window = r->ix.nchunks;
    r->rc.sample_window = 0;
    return rc;
}

void image_close(struct reader *r)
{
    if (!r->img)
        return;
    for (int k = 0; k < IMG_MAX_TF; k++)
        img_aux_free(&r->img->aux[k]);
    for (int k = 0; k < FILL_POOL_MAX; k++) {
        img_free(&r->img->im[k]);
        img_free(&r->img->tmp[k]);
    }
    free(r->img->names);
    free(r->img->path);
    free(r->img->label);
    free(r->img);
    r->img = NULL;
}

/* The random draws of the image at global sample position `at`: the same on any number of
 * ranks, different in every sweep. */
static uint64_t sample_seed(const struct reader *r, uint64_t at)
{
    uint64_t z = r->rc.seed * 0x9e3779b97f4a7c15ull ^ (at + 1) * 0xd1b54a32d192ed03ull;
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
    return z ^ (z >> 29);
}

/* The images of one fill (fill_pool_run's parts decode them, each worker into its own
 * scratch). */
struct image_job {
    struct reader *r;
    const uint32_t *seqs;
    const uint64_t *at;
    struct minibatch *mb;
};

static int image_part(void *ctx, size_t lo, size_t hi, int worker, struct pt_err *e)
{
    struct image_job *j = ctx;
    struct reader *r = j->r;
    const struct image_config *ic = &r->rc.img;
    struct image_set *s = r->img;
    struct img *im = &s->im[worker], *tmp = &s->tmp[worker];
    struct mb_input *feat = &j->mb->in[ic->features], *lab = &j->mb->in[ic->labels];
    for (size_t k = lo; k < hi; k++) {
        uint32_t seq = j->seqs[k];
        const char *path = s->names + s->path[seq], *why = NULL;
        if (img_decode(path, ic->grayscale ? 1 : 3, im, &why))
            return pt_err_set(e, PT_EUSER,
                              "%s: error: cannot read image '%s' (listed in map file "
                              "%s): %s",
                              path, path, r->rc.file, why ? why : "unknown reason");
        uint64_t rng = sample_seed(r, j->at[k]);
        char msg[512];
        for (int t = 0; t < ic->ntf; t++)
            if (img_apply(&ic->tf[t], &s->aux[t], im, tmp, &rng, msg, sizeof msg))
                return pt_err_set(e, PT_EUSER, "%s: error: %s (image '%s')", r->rc.file, msg, path);
        if (im->w != ic->width || im->h != ic->height || im->c != ic->channels)
            return pt_err_set(e, PT_EINTERNAL, "error: internal: image '%s' is %d x %d x %d", path,
                              im->w, im->h, im->c);
        img_store(im, ic->planar, feat->data + k * (size_t)feat->dim);
        feat->len[k] = 1;
        lab->data[k * (size_t)lab->dim + s->label[seq]] = 1.0f;
        lab->len[k] = 1;
    }
    return 0;
}

int image_fill(struct reader *r, const uint32_t *seqs, const uint64_t *at, size_t n,
               struct minibatch *mb, struct pt_err *e)
{
    const struct image_config *ic = &r->rc.img;
    int rc = 0;
    mb->ninputs = r->rc.ninputs;
    mb->nseq = n;
    mb->samples = n;
    for (int i = 0; rc == 0 && i < r->rc.ninputs; i++) {
        struct mb_input *in = &mb->in[i];
        memcpy(in->name, r->rc.inputs[i].name, sizeof in->name);
        in->dim = r->rc.inputs[i].dim;
        rc = i == ic->labels ? mb_input_reset(in, n, 1, e) : mb_input_shape(in, n, 1, e);
    }
    if (rc)
        return rc;
    struct image_job job = {.r = r, .seqs = seqs, .at = at, .mb = mb};
    return fill_pool_run(reader_pool(r), n, 1, image_part, &job, e);
}

/* ------------------------------------------------------------------ OpenCV's XML */

/* The text between <tag ...> and </tag> inside [p, end), or NULL. */
static const char *xml_find(const char *p, const char *end, const char *tag, const char **stop)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    size_t ol = strlen(open);
    for (const char *q = p; q && q < end; q++) {
        q = strstr(q, open);
        if (!q || q >= end)
            return NULL;
        if (q[ol] != '>' && !isspace((unsigned char)q[ol]))
            continue;
        const char *gt = strchr(q, '>'), *c = gt ? strstr(gt, close) : NULL;
        if (!c || c > end)
            return NULL;
        *stop = c;
        return gt + 1;
    }
    return NULL;
}

/* OpenCV's opencv-matrix `name`: rows x cols x channels floats (dt f or d) into *out. */
static int xml_matrix(const char *file, const char *text, const char *name, float **out, int *rows,
                      int *cols, int *chans, struct pt_err *e)
{
    const char *end = text + strlen(text), *stop = NULL, *s2 = NULL;
    const char *m = xml_find(text, end, name, &stop);
    const char *rs = m ? xml_find(m, stop, "rows", &s2) : NULL;
    *rows = rs ? atoi(rs) : 0;
    const char *cs = m ? xml_find(m, stop, "cols", &s2) : NULL;
    *cols = cs ? atoi(cs) : 0;
    const char *dt = m ? xml_find(m, stop, "dt", &s2) : NULL;
    const char *data = m ? xml_find(m, stop, "data", &s2) : NULL;
    *chans = 1;
    if (dt) {
        while (isspace((unsigned char)*dt))
            dt++;
        if (isdigit((unsigned char)*dt)) /* "3f": three channels */
            *chans = atoi(dt);
        while (isdigit((unsigned char)*dt))
            dt++;
    }
    if (!m || !data || !dt || (*dt != 'f' && *dt != 'd') || *rows <= 0 || *cols <= 0 ||
        *chans <= 0 || (size_t)*rows * (size_t)*cols > ((size_t)1 << 28))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: expected an OpenCV matrix <%s type_id=\"opencv-matrix\"> "
                          "with rows, cols, dt (f or d) and data",
                          file, name);
    size_t n = (size_t)*rows * (size_t)*cols * (size_t)*chans;
    float *v = malloc(n * sizeof *v);
    if (!v)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    const char *p = data;
    for (size_t i = 0; i < n; i++) {
        char *q = NULL;
        v[i] = strtof(p, &q);
        if (q == p || q > s2) {
            free(v);
            return pt_err_set(e, PT_EUSER,
                              "%s: error: %s holds %zu values, fewer than %d x %d x %d", file, name,
                              i, *rows, *cols, *chans);
        }
        p = q;
    }
    *out = v;
    return 0;
}

static int read_text(const char *file, char **out, struct pt_err *e)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return pt_err_set(e, PT_EUSER, "%s: error: cannot read: %s", file, strerror(errno));
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *b = realloc(buf, 2 * cap + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory reading '%s'", file);
    buf[n] = '\0';
    *out = buf;
    return 0;
}

int img_aux_load(const struct img_tf *t, struct img_aux *aux, struct pt_err *e)
{
    memset(aux, 0, sizeof *aux);
    if (!t->file[0] || (t->kind != IMG_MEAN && t->kind != IMG_INTENSITY))
        return 0;
    char *text = NULL;
    int rc = read_text(t->file, &text, e), rows = 0, cols = 0, ch = 0;
    if (rc == 0 && t->kind == IMG_MEAN) {
        rc = xml_matrix(t->file, text, "MeanImg", &aux->mean, &rows, &cols, &ch, e);
        const char *stop = NULL, *end = text + strlen(text);
        const char *c = rc ? NULL : xml_find(text, end, "Channel", &stop);
        const char *r = rc ? NULL : xml_find(text, end, "Row", &stop);
        const char *q = rc ? NULL : xml_find(text, end, "Col", &stop);
        aux->mean_c = c ? atoi(c) : 0;
        aux->mean_h = r ? atoi(r) : 0;
        aux->mean_w = q ? atoi(q) : 0;
        if (rc == 0 &&
            (aux->mean_c <= 0 || aux->mean_h <= 0 || aux->mean_w <= 0 ||
             (long long)aux->mean_c * aux->mean_h * aux->mean_w != (long long)rows * cols * ch))
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: Channel x Row x Col (%d x %d x %d) must be the MeanImg "
                            "matrix's %d x %d x %d values",
                            t->file, aux->mean_c, aux->mean_h, aux->mean_w, rows, cols, ch);
    } else if (rc == 0) {
        float *val = NULL, *vec = NULL;
        rc = xml_matrix(t->file, text, "EigVal", &val, &rows, &cols, &ch, e);
        if (rc == 0 && rows * cols * ch != 3)
            rc = pt_err_set(e, PT_EUSER, "%s: error: EigVal must hold 3 values", t->file);
        if (rc == 0)
            rc = xml_matrix(t->file, text, "EigVec", &vec, &rows, &cols, &ch, e);
        if (rc == 0 && (rows != 3 || cols != 3 || ch != 1))
            rc = pt_err_set(e, PT_EUSER, "%s: error: EigVec must be 3 x 3", t->file);
        if (rc == 0) {
            memcpy(aux->eigval, val, sizeof aux->eigval);
            memcpy(aux->eigvec, vec, sizeof aux->eigvec);
        }
        free(val);
        free(vec);
    }
    free(text);
    return rc;
}

void img_aux_free(struct img_aux *aux)
{
    free(aux->mean);
    memset(aux, 0, sizeof *aux);
}
