/* CNTK's HTK readers' data (htk.h): the script file's utterances, their HTK feature files,
 * and the minibatches.
 *
 * A script (scp) line names an utterance and where its frames lie: NAME=FILE[FIRST,LAST]
 * (frames FIRST..LAST of FILE, inclusive: an archive of many utterances), NAME=FILE or FILE
 * (the whole file). NAME without its extension is the key of its MLF entry (else, as a
 * convenience beyond CNTK, its last path component). FILE is an HTK feature file: a 12-byte
 * header (frames, sample period in 100 ns, bytes a frame, parameter kind; big-endian, or
 * little-endian where the sample period says so, as CNTK guesses), then the frames as
 * 32-bit floats, or 16-bit integers with a compressed kind (_C: value = (x + B) / A, A and
 * B stored first). Utterances without labels, or whose labels cover another number of
 * frames, are skipped with a warning (CNTK's rule; more than half skipped is an error).
 *
 * Each sample is a frame with its context window: the frames t - left .. t + right of its
 * utterance, the utterance's first or last frame standing in beyond its ends, in time order
 * (CNTK's augmentation). In frame mode (CNTK's default) every frame is a sequence of one
 * sample, shuffled among all; otherwise every utterance is a sequence. Chunks of about
 * HTK_CHUNK_FRAMES frames of whole utterances are the unit of distributed reading. The
 * frames are read from the files when a minibatch needs them (archives of 1 MiB or more
 * mapped into memory, other files with pread; the page cache holds them), never copied
 * whole into the process. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/htk.h"
#include "reader/reader_internal.h"

enum { HTK_WARN_MAX = 5 }; /* skipped utterances named one by one */

/* The header of `path` (listed at scp:line) into f; its dimension and kind must be dim's
 * (0: the first file sets them). */
static int read_header(const char *path, const char *scp, size_t line, struct htk_file *f, int *dim,
                       int *kind0, int *period0, struct pt_err *e)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return pt_err_set(e, PT_EUSER, "%s:%zu: error: cannot read feature file '%s': %s", scp,
                          line, path, strerror(errno));
    unsigned char h[12 + 16];
    struct stat st;
    ssize_t got = pread(fd, h, sizeof h, 0);
    int r = fstat(fd, &st);
    const char *why = NULL;
    if (got < 12 || r)
        why = "shorter than the 12-byte HTK header";
    /* CNTK's guess: the byte order in which the sample period reads smaller */
    uint32_t raw = why ? 0 : htk_be32(h + 4, 0), swapped = why ? 0 : htk_be32(h + 4, 1);
    int swap = swapped < raw;
    uint32_t nsamples = why ? 0 : htk_be32(h, swap), period = why ? 0 : htk_be32(h + 4, swap);
    uint16_t size = why ? 0 : htk_be16(h + 8, swap), kind = why ? 0 : htk_be16(h + 10, swap);
    int base = kind & 077, compressed = (kind & 02000) != 0;
    uint64_t data = 12 + (base == 12 ? 16 : 0); /* FESTREAM: a GUID after the header */
    int bytes = compressed ? 2 : 4;
    if (!why && base != 6 && base != 7 && base != 9 && base != 11 && base != 12)
        why = "its parameter kind is not one CNTK reads (MFCC, FBANK, PLP, USER)";
    if (!why && (kind & 040000))
        why = "it holds VQ indices, which CNTK does not read";
    if (!why && (size == 0 || size % bytes))
        why = compressed ? "its sample size is not a whole number of 16-bit values"
                         : "its sample size is not a whole number of 32-bit floats";
    int d = size / bytes;
    if (!why && compressed && nsamples < 4)
        why = "compressed, but too short for its A and B vectors";
    if (!why && compressed) {
        nsamples -= 4; /* A and B count as 4 frames' space */
        f->a = malloc((size_t)d * sizeof *f->a);
        f->b = malloc((size_t)d * sizeof *f->b);
        unsigned char *ab = malloc((size_t)d * 8);
        if (!f->a || !f->b || !ab)
            why = "out of memory";
        else if (pread(fd, ab, (size_t)d * 8, (off_t)data) != (ssize_t)d * 8)
            why = "shorter than its A and B vectors";
        for (int i = 0; !why && i < d; i++) {
            f->a[i] = htk_f32(ab + 4 * i, swap);
            f->b[i] = htk_f32(ab + 4 * (d + i), swap);
            if (f->a[i] == 0)
                why = "a compression factor A is 0";
        }
        free(ab);
        data += (uint64_t)d * 8;
    }
    if (!why && (uint64_t)st.st_size < data + (uint64_t)nsamples * size)
        why = "shorter than its header's frames";
    /* an archive (1 MiB or more) is mapped: its frames are then read without a system call
     * (a file of one utterance is read with pread, as the mappings would be too many) */
    f->map = NULL;
    if (!why && st.st_size >= (off_t)HTK_MAP_BYTES) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) {
            f->map = m;
            f->map_len = (size_t)st.st_size;
        }
    }
    close(fd);
    if (why)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: not a usable HTK feature file (listed at %s:%zu): %s", path,
                          scp, line, why);
    int k = kind & ~(02000 | 010000); /* compression and CRC do not change the values */
    if (*dim && (d != *dim || k != *kind0 || (int)period != *period0))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %d values a frame of kind %d every %u x 100 ns, where the "
                          "files before (from %s) have %d of kind %d every %d: all must agree",
                          path, d, k, period, scp, *dim, *kind0, *period0);
    *dim = d;
    *kind0 = k;
    *period0 = (int)period;
    f->data = data;
    f->frames = nsamples;
    f->vec = size;
    f->swap = swap;
    f->compressed = compressed;
    return 0;
}

/* The physical file `path` (n bytes), added with its header on first sight. */
static int file_of(struct htk_set *s, const char *path, size_t n, const char *scp, size_t line,
                   int *kind, int *period, uint32_t *out, struct pt_err *e)
{
    size_t i = htk_names_find(&s->paths, path, n);
    if (i != SIZE_MAX) {
        *out = (uint32_t)i;
        return 0;
    }
    if (htk_grow(&s->files, &s->cap_files, s->paths.n + 1, sizeof *s->files) ||
        htk_names_add(&s->paths, path, n))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    i = s->paths.n - 1;
    memset(&s->files[i], 0, sizeof s->files[i]);
    *out = (uint32_t)i;
    return read_header(s->paths.buf + s->paths.off[i], scp, line, &s->files[i], &s->dim, kind,
                       period, e);
}

/* One script line: its key, physical path (prefixed or "..." expanded) and frame range. */
struct scp_entry {
    const char *key;
    size_t key_len;
    char path[4096];
    uint64_t s, e; /* e = UINT64_MAX: the whole file */
};

static int parse_scp_line(const struct htk_config *hc, char *line, size_t lineno,
                          struct scp_entry *x, struct pt_err *e)
{
    char *eq = strchr(line, '='), *phys = eq ? eq + 1 : line;
    x->key = line;
    x->key_len = htk_key_len(line, eq ? (size_t)(eq - line) : strlen(line));
    x->s = 0;
    x->e = UINT64_MAX;
    char *br = eq ? strchr(phys, '[') : NULL;
    if (br) {
        char *end = NULL, *end2 = NULL;
        errno = 0;
        unsigned long long a = strtoull(br + 1, &end, 10);
        unsigned long long b = *end == ',' ? strtoull(end + 1, &end2, 10) : 0;
        if (errno || end == br + 1 || *end != ',' || !end2 || end2 == end + 1 || *end2 != ']' ||
            end2[1] || a > b || br[1] == '-' || end[1] == '-')
            return pt_err_set(e, PT_EUSER,
                              "%s:%zu: error: expected NAME=FILE[FIRST,LAST] with FIRST <= LAST "
                              "(frames, from 0), got '%s'",
                              hc->scp, lineno, line);
        x->s = a;
        x->e = b;
        *br = '\0';
    }
    if (!phys[0] || (eq && eq == line))
        return pt_err_set(e, PT_EUSER,
                          "%s:%zu: error: expected NAME=FILE[FIRST,LAST], NAME=FILE or FILE",
                          hc->scp, lineno);
    int n;
    if (hc->prefix[0]) {
        size_t p = strlen(hc->prefix);
        while (p > 0 && hc->prefix[p - 1] == '/')
            p--;
        n = snprintf(x->path, sizeof x->path, "%.*s/%s", (int)p, hc->prefix, phys);
    } else if (!strncmp(phys, "...", 3)) { /* the script file's directory */
        const char *slash = strrchr(hc->scp, '/');
        int d = slash ? (int)(slash - hc->scp) : 1;
        n = snprintf(x->path, sizeof x->path, "%.*s%s", d, slash ? hc->scp : ".", phys + 3);
    } else {
        n = snprintf(x->path, sizeof x->path, "%s", phys);
    }
    if (n >= (int)sizeof x->path)
        return pt_err_set(e, PT_EUSER, "%s:%zu: error: the path is too long", hc->scp, lineno);
    return 0;
}

/* Skipped utterances: a warning for each of the first few. */
static void skip_warn(struct pt_log *log, size_t *skipped, const char *scp, size_t line,
                      const struct scp_entry *x, const char *why, uint64_t a, uint64_t b)
{
    if ((*skipped)++ < HTK_WARN_MAX && log)
        pt_log_printf(log, "%s:%zu: warning: utterance '%.*s' skipped: %s", scp, line,
                      (int)x->key_len, x->key, why);
    if (*skipped <= HTK_WARN_MAX && log && a != b)
        pt_log_printf(log, " (%llu frames of labels, %llu of features)", (unsigned long long)a,
                      (unsigned long long)b);
    if (*skipped <= HTK_WARN_MAX && log)
        pt_log_printf(log, "\n");
}

static int add_utt(struct htk_set *s, const struct htk_utt *u, struct pt_err *e)
{
    if (htk_grow(&s->utt, &s->cap_utt, s->nutt + 1, sizeof *s->utt))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    s->utt[s->nutt++] = *u;
    return 0;
}

/* The MLF entry of script entry x in l (its key, else its last path component), or
 * SIZE_MAX. */
static size_t labels_of(const struct htk_labels *l, const struct scp_entry *x)
{
    size_t k = htk_names_find(&l->keys, x->key, x->key_len);
    if (k == SIZE_MAX) { /* NAME's last component, as an MLF "* /NAME.lab" would have it */
        const char *b = x->key;
        for (size_t i = 0; i < x->key_len; i++)
            if (x->key[i] == '/')
                b = x->key + i + 1;
        k = htk_names_find(&l->keys, b, x->key_len - (size_t)(b - x->key));
    }
    return k;
}

/* Script file hc->scp into s (set: its number in the log, 0 the first stream's). With
 * labels, the first stream's utterances need theirs in every label stream. */
static int read_scp(struct reader *r, struct htk_set *s, const struct htk_config *hc, int set,
                    struct pt_err *e)
{
    FILE *f = fopen(hc->scp, "r");
    if (!f)
        return cfg_error(e, &hc->scp_origin, "cannot read script file '%s': %s", hc->scp,
                         strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 0, entries = 0, skipped = 0;
    ssize_t len;
    int rc = 0, kind = 0, period = 0;
    uint64_t total = 0;
    struct scp_entry x;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = '\0';
        if (len == 0)
            continue;
        entries++;
        uint32_t file = 0;
        if ((rc = parse_scp_line(hc, line, lineno, &x, e)) ||
            (rc = file_of(s, x.path, strlen(x.path), hc->scp, lineno, &kind, &period, &file, e)))
            break;
        const struct htk_file *hf = &s->files[file];
        uint64_t last = x.e == UINT64_MAX ? hf->frames - 1 : x.e;
        if (hf->frames == 0 || last >= hf->frames) {
            rc = pt_err_set(e, PT_EUSER,
                            "%s:%zu: error: frames %llu to %llu, but '%s' holds %llu frames",
                            hc->scp, lineno, (unsigned long long)x.s, (unsigned long long)last,
                            x.path, (unsigned long long)hf->frames);
            break;
        }
        uint64_t n = last - x.s + 1;
        if (n > UINT32_MAX / 2) {
            rc = pt_err_set(e, PT_EUSER, "%s:%zu: error: an utterance of %llu frames", hc->scp,
                            lineno, (unsigned long long)n);
            break;
        }
        struct htk_utt u = {.file = file,
                            .n = (uint32_t)n,
                            .s = x.s,
                            .frame0 = total,
                            .entry = (uint32_t)entries - 1};
        int skip = 0;
        for (int m = -1; hc->labels >= 0 && !skip && m < hc->nextra; m++) {
            if (m >= 0 && hc->extra[m].feat)
                continue;
            const struct htk_labels *l = m < 0 ? &s->lab : &s->xlab[m];
            size_t k = labels_of(l, &x);
            uint64_t nl = k == SIZE_MAX ? 0 : l->first[k + 1] - l->first[k];
            /* a further label stream's MLF is named */
            const char *mlf = m < 0                 ? "the MLF"
                              : hc->extra[m].mlf[0] ? hc->extra[m].mlf
                                                    : hc->extra[m].mlf_list;
            char why[1200];
            if (k == SIZE_MAX)
                snprintf(why, sizeof why, "no labels in %s", mlf);
            else
                snprintf(why, sizeof why, "its labels' duration%s%s differs", m < 0 ? "" : " in ",
                         m < 0 ? "" : mlf);
            if (k == SIZE_MAX || nl != n) {
                skip_warn(r->log, &skipped, hc->scp, lineno, &x, why, k == SIZE_MAX ? 0 : nl,
                          k == SIZE_MAX ? 0 : n);
                skip = 1;
            } else if (m < 0) {
                u.lab = l->first[k];
            } else {
                u.xlab[m] = l->first[k];
            }
        }
        if (skip)
            continue;
        rc = add_utt(s, &u, e);
        total += n;
    }
    free(line);
    fclose(f);
    s->entries = entries;
    if (rc)
        return rc;
    if (r->log)
        pt_log_printf(r->log,
                      "reading script file %s ... %zu entries; feature set %d: %llu frames in "
                      "%zu out of %zu utterances\n",
                      hc->scp, entries, set, (unsigned long long)total, s->nutt, entries);
    if (skipped && r->log)
        pt_log_printf(r->log,
                      "%s: %zu of %zu utterances skipped (no labels, or labels of "
                      "another duration)\n",
                      hc->scp, skipped, entries);
    if (s->nutt == 0 || skipped > entries / 2)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %zu of its %zu utterances have no labels in %s or labels "
                          "of another duration: more than half, so the script file and the "
                          "MLF do not belong together",
                          hc->scp, skipped, entries, hc->mlf[0] ? hc->mlf : hc->mlf_list);
    if (hc->frame_mode && total > UINT32_MAX - 1) /* frames are the sequences */
        return pt_err_set(e, PT_EUSER, "%s: error: %llu frames, more than 2^32 - 1", hc->scp,
                          (unsigned long long)total);
    return 0;
}

/* The context window from the stream's dim and the files' (CNTK's augmentation extent). */
static int context(struct reader *r, struct htk_set *s, const struct htk_config *hc,
                   struct pt_err *e)
{
    long long want = r->rc.inputs[hc->features].dim, d = s->dim;
    const char *name = r->rc.inputs[hc->features].name;
    s->left = hc->left;
    s->right = hc->right;
    if (hc->left || hc->right) {
        if (want != d * (1 + hc->left + hc->right))
            return cfg_error(e, &hc->scp_origin,
                             "%s: the feature files hold %lld values a frame, but the stream's "
                             "dim is %lld (with contextWindow, dim is the file's values a frame)",
                             name, d, want / (1 + hc->left + hc->right));
        return 0;
    }
    long long frames = want / d;
    if (want % d || frames % 2 == 0)
        return cfg_error(e, &hc->scp_origin,
                         "%s: dim = %lld is not an odd number of the feature files' %lld-value "
                         "frames (a context window of frames around each: %lld = %lld x %lld "
                         "would be), or give contextWindow",
                         name, want, d, d * (frames | 1), frames | 1, d);
    s->left = s->right = (int)(frames / 2);
    return 0;
}

/* Frame mode: every frame a sequence; else every utterance. Chunks of whole utterances. */
static int make_index(struct reader *r, struct htk_set *s, struct pt_err *e)
{
    struct ctf_index *ix = &r->ix;
    int frames = r->rc.htk.frame_mode;
    uint64_t total = s->nutt ? s->utt[s->nutt - 1].frame0 + s->utt[s->nutt - 1].n : 0;
    size_t nseq = frames ? (size_t)total : s->nutt, nch = 0;
    ix->seq_samples = malloc((nseq ? nseq : 1) * sizeof *ix->seq_samples);
    ix->seq_chunk = malloc((nseq ? nseq : 1) * sizeof *ix->seq_chunk);
    ix->chunk_first = malloc((s->nutt + 1) * sizeof *ix->chunk_first);
    if (!ix->seq_samples || !ix->seq_chunk || !ix->chunk_first)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    size_t q = 0;
    uint64_t in_chunk = 0;
    for (size_t u = 0; u < s->nutt; u++) {
        if (u == 0 || in_chunk + s->utt[u].n > HTK_CHUNK_FRAMES) {
            ix->chunk_first[nch++] = q;
            in_chunk = 0;
        }
        in_chunk += s->utt[u].n;
        for (uint32_t t = 0; t < (frames ? s->utt[u].n : 1); t++, q++) {
            ix->seq_samples[q] = frames ? 1 : s->utt[u].n;
            ix->seq_chunk[q] = (uint32_t)(nch - 1);
        }
    }
    ix->chunk_first[nch] = q;
    ix->nseq = nseq;
    ix->nchunks = nch;
    ix->total_samples = (size_t)total;
    if (r->log)
        pt_log_printf(r->log,
                      "HTK reader: %zu utterances grouped into %zu chunks, av. chunk size: %.1f "
                      "utterances, %.1f frames; %s mode; context %d:%d frames of %d values\n",
                      s->nutt, nch, (double)s->nutt / (double)nch, (double)total / (double)nch,
                      frames ? "frame" : "utterance", s->left, s->right, s->dim);
    return 0;
}

/* Further feature stream k into its own set: the same utterances as the first stream's
 * script file, entry by entry, each of the same frames. */
static int open_extra(struct reader *r, struct htk_set *s, int k, struct pt_err *e)
{
    struct htk_config *t = calloc(1, sizeof *t);
    struct htk_set *x = calloc(1, sizeof *x);
    if (!t || !x) {
        free(t);
        free(x);
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    }
    s->xfeat[k] = x;
    for (int w = 0; w < FILL_POOL_MAX; w++)
        x->w[w].fd = -1;
    htk_extra_config(&r->rc.htk, k, t);
    int rc = read_scp(r, x, t, k + 1, e);
    if (rc == 0)
        rc = context(r, x, t, e);
    if (rc == 0 && x->nutt != s->entries)
        rc = cfg_error(e, &t->scp_origin,
                       "%s: %zu utterances, where %s lists %zu: the script files of a reader's "
                       "feature streams list the same utterances in the same order",
                       t->scp, x->nutt, r->rc.htk.scp, s->entries);
    for (size_t u = 0; rc == 0 && u < s->nutt; u++) {
        const struct htk_utt *a = &s->utt[u], *b = &x->utt[a->entry];
        if (a->n != b->n)
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: its utterance %u has %u frames, and %u in %s: the "
                            "feature streams' utterances must be of the same frames",
                            t->scp, a->entry + 1, b->n, a->n, r->rc.htk.scp);
    }
    free(t);
    return rc;
}

int htk_open(struct reader *r, struct pt_err *e)
{
    struct htk_set *s = calloc(1, sizeof *s);
    if (!s)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    r->htk = s;
    for (int k = 0; k < FILL_POOL_MAX; k++)
        s->w[k].fd = -1;
    const struct htk_config *hc = &r->rc.htk;
    int rc = hc->labels < 0 ? 0 : htk_labels_read(hc, r->log, &s->lab, e);
    for (int k = 0; rc == 0 && k < hc->nextra; k++) {
        if (hc->extra[k].feat)
            continue;
        struct htk_config *t = calloc(1, sizeof *t);
        if (!t)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        htk_extra_config(hc, k, t);
        rc = htk_labels_read(t, r->log, &s->xlab[k], e);
        free(t);
    }
    if (rc == 0)
        rc = read_scp(r, s, hc, 0, e);
    if (rc == 0)
        rc = context(r, s, hc, e);
    for (int k = 0; rc == 0 && k < hc->nextra; k++)
        if (hc->extra[k].feat)
            rc = open_extra(r, s, k, e);
    if (rc == 0)
        rc = make_index(r, s, e);
    return rc;
}

static void set_free(struct htk_set *s)
{
    if (!s)
        return;
    for (int k = 0; k < FILL_POOL_MAX; k++) {
        if (s->w[k].fd >= 0)
            close(s->w[k].fd);
        free(s->w[k].raw);
        free(s->w[k].frames);
    }
    for (size_t i = 0; i < s->paths.n; i++) {
        if (s->files[i].map)
            munmap((void *)s->files[i].map, s->files[i].map_len);
        free(s->files[i].a);
        free(s->files[i].b);
    }
    free(s->files);
    htk_names_free(&s->paths);
    free(s->utt);
    htk_labels_free(&s->lab);
    for (int k = 0; k < HTK_MAX_EXTRA; k++) {
        set_free(s->xfeat[k]);
        htk_labels_free(&s->xlab[k]);
    }
    free(s);
}

void htk_close(struct reader *r)
{
    set_free(r->htk);
    r->htk = NULL;
}
