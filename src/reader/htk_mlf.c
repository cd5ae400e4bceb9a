/* The state list and the master label files (MLF) of CNTK's HTK readers (htk.h).
 *
 * An MLF (HTK's format, as CNTK reads it):
 *
 *   #!MLF!#
 *   "An4/71/71/cen5-fjam-b.lab"
 *   0 100000 sil[2] -0.78 sil 454.79 </s>
 *   100000 5500000 sil[3] 465.52
 *   .
 *
 * An entry's name loses its quotes, a leading "*" + "/" and its extension: it is then the
 * key of the script file's utterance of that name (also without extension). Each line gives
 * START END STATE: times in 100 ns units (10 ms frames) where END - START is at least a
 * frame's worth, else frame numbers (CNTK's rule), and the state's class is its line in the
 * state list; without a state list, a 4th column gives the class as a number. Every entry's
 * lines must cover its frames from 0 without gaps. Errors name file:line. CNTK's binary MLF
 * (read_mlf_bin) is told from the text form by its first bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/htk.h"

#define HTK_TIME_TO_FRAME 100000.0

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

int htk_grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap > 32 ? 2 * *cap : 64;
    c = c < need ? need : c;
    void *q = realloc(*(void **)p, c * elem);
    if (!q)
        return -1;
    *(void **)p = q;
    *cap = c;
    return 0;
}

void htk_names_free(struct htk_names *t)
{
    free(t->buf);
    free(t->off);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

size_t htk_names_find(const struct htk_names *t, const char *s, size_t n)
{
    if (!t->nslot)
        return SIZE_MAX;
    for (size_t h = hash_bytes(s, n) & (t->nslot - 1);; h = (h + 1) & (t->nslot - 1)) {
        size_t i = t->slot[h];
        if (!i)
            return SIZE_MAX;
        const char *x = t->buf + t->off[i - 1];
        if (strlen(x) == n && !memcmp(x, s, n))
            return i - 1;
    }
}

int htk_names_add(struct htk_names *t, const char *s, size_t n)
{
    if (2 * (t->n + 1) > t->nslot) {
        size_t ns = t->nslot ? 2 * t->nslot : 1024;
        size_t *slot = calloc(ns, sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < t->n; i++) {
            const char *x = t->buf + t->off[i];
            size_t h = hash_bytes(x, strlen(x)) & (ns - 1);
            while (slot[h])
                h = (h + 1) & (ns - 1);
            slot[h] = i + 1;
        }
        free(t->slot);
        t->slot = slot;
        t->nslot = ns;
    }
    if (htk_grow(&t->buf, &t->cap, t->len + n + 1, 1) ||
        htk_grow(&t->off, &t->cap_n, t->n + 1, sizeof *t->off))
        return -1;
    memcpy(t->buf + t->len, s, n);
    t->buf[t->len + n] = '\0';
    t->off[t->n] = t->len;
    t->len += n + 1;
    size_t h = hash_bytes(s, n) & (t->nslot - 1);
    while (t->slot[h])
        h = (h + 1) & (t->nslot - 1);
    t->slot[h] = ++t->n;
    return 0;
}

size_t htk_key_len(const char *name, size_t n)
{
    for (size_t i = n; i > 0 && name[i - 1] != '/'; i--)
        if (name[i - 1] == '.')
            return i - 1;
    return n;
}

/* The line without its end of line (\n, \r\n). */
static size_t chomp(char *line, ssize_t len)
{
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
    return (size_t)len;
}

static int read_states(const struct htk_config *hc, struct htk_names *st, struct pt_err *e)
{
    FILE *f = fopen(hc->states, "r");
    if (!f)
        return cfg_error(e, &hc->states_origin, "cannot read state list '%s': %s", hc->states,
                         strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    int r = 0;
    while (r == 0 && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t n = chomp(line, len);
        if (n == 0) /* CNTK skips empty lines */
            continue;
        if (htk_names_find(st, line, n) != SIZE_MAX)
            r = pt_err_set(e, PT_EUSER, "%s:%zu: error: state '%s' is listed twice", hc->states,
                           lineno, line);
        else if (htk_names_add(st, line, n))
            r = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    }
    free(line);
    fclose(f);
    if (r == 0 && st->n == 0)
        r = pt_err_set(e, PT_EUSER, "%s: error: the state list is empty", hc->states);
    if (r == 0 && st->n > (size_t)hc->label_dim)
        r = pt_err_set(e, PT_EUSER,
                       "%s: error: %zu states, more than the labels' %d classes (labelDim)",
                       hc->states, st->n, hc->label_dim);
    return r;
}

/* The MLF being read. */
struct mlf_state {
    const struct htk_config *hc;
    const struct htk_names *states; /* NULL: class numbers in a 4th column */
    struct htk_names keys;
    struct htk_labels *out;
    size_t cap_ids, cap_entries;
    const char *file;
    size_t lineno;
    int in_entry;        /* between a "NAME" line and its "." */
    uint64_t next_frame; /* the entry's next frame */
    size_t entry_line;   /* where the entry started */
};

/* The most frames one entry may have: 2^24 (46 hours at 10 ms; an HTK file's frame count
 * is 32 bits, but no utterance is that long), so that a damaged count is an error, not an
 * allocation of gigabytes. */
#define MLF_MAX_ENTRY_FRAMES ((uint64_t)1 << 24)

static int grow_ids(struct mlf_state *m, size_t more, struct pt_err *e)
{
    struct htk_labels *l = m->out;
    size_t need = (size_t)l->first[l->n + 1] + more; /* after the entry's frames so far */
    if (need <= m->cap_ids)
        return 0;
    if (need > ((size_t)1 << 34))
        return pt_err_set(e, PT_EUSER, "%s:%zu: error: more than 2^34 labelled frames", m->file,
                          m->lineno);
    return htk_grow(&l->ids, &m->cap_ids, need, sizeof *l->ids)
               ? pt_err_set(e, PT_ENOMEM, "error: out of memory")
               : 0;
}

/* An entry's name line "NAME" (quoted). */
static int entry_start(struct mlf_state *m, char *line, size_t n, struct pt_err *e)
{
    struct htk_labels *l = m->out;
    if (n < 3 || line[0] != '"' || line[n - 1] != '"')
        return pt_err_set(e, PT_EUSER,
                          "%s:%zu: error: expected an entry's name in double quotes "
                          "(\"NAME.lab\"), got '%.80s'",
                          m->file, m->lineno, line);
    char *key = line + 1;
    size_t k = n - 2;
    if (k > 2 && key[0] == '*' && key[1] == '/')
        key += 2, k -= 2;
    k = htk_key_len(key, k);
    if (htk_names_find(&m->keys, key, k) != SIZE_MAX)
        return pt_err_set(e, PT_EUSER, "%s:%zu: error: a second entry for '%.*s'", m->file,
                          m->lineno, (int)k, key);
    if (htk_grow(&l->first, &m->cap_entries, l->n + 2, sizeof *l->first) ||
        htk_names_add(&m->keys, key, k))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    l->first[l->n + 1] = l->first[l->n];
    m->in_entry = 1;
    m->next_frame = 0;
    m->entry_line = m->lineno;
    return 0;
}

/* One START END STATE ... line of the current entry. */
static int entry_line(struct mlf_state *m, char *line, struct pt_err *e)
{
    char *tok[4], *save = NULL;
    int nt = 0;
    for (char *t = strtok_r(line, " \t", &save); t && nt < 4; t = strtok_r(NULL, " \t", &save))
        tok[nt++] = t;
    int need = m->states ? 3 : 4;
    if (nt < need)
        return pt_err_set(e, PT_EUSER,
                          m->states ? "%s:%zu: error: expected START END STATE (times in 100 ns "
                                      "units, or frames)"
                                    : "%s:%zu: error: expected START END NAME CLASS (no "
                                      "labelMappingFile, so the 4th column gives the class)",
                          m->file, m->lineno);
    char *end1 = NULL, *end2 = NULL;
    double s = strtod(tok[0], &end1), t = strtod(tok[1], &end2);
    if (*end1 || *end2 || end1 == tok[0] || end2 == tok[1] || !(s >= 0) || !(t >= s) || t > 1e15)
        return pt_err_set(e, PT_EUSER,
                          "%s:%zu: error: expected START END with 0 <= START <= END, got '%s %s'",
                          m->file, m->lineno, tok[0], tok[1]);
    uint64_t a = (uint64_t)s, b = (uint64_t)t;
    if (t - s >= HTK_TIME_TO_FRAME - 1) { /* times, as CNTK tells them from frame numbers */
        a = (uint64_t)(s / HTK_TIME_TO_FRAME + 0.5);
        b = (uint64_t)(t / HTK_TIME_TO_FRAME + 0.5);
    }
    if (b > MLF_MAX_ENTRY_FRAMES)
        return pt_err_set(e, PT_EUSER,
                          "%s:%zu: error: the entry of line %zu reaches frame %llu: an entry has "
                          "at most %llu frames",
                          m->file, m->lineno, m->entry_line, (unsigned long long)b,
                          (unsigned long long)MLF_MAX_ENTRY_FRAMES);
    if (a != m->next_frame)
        return pt_err_set(e, PT_EUSER,
                          "%s:%zu: error: this line starts at frame %llu, but the entry's frames "
                          "so far end at %llu: the lines must cover the utterance in order, "
                          "without gaps",
                          m->file, m->lineno, (unsigned long long)a,
                          (unsigned long long)m->next_frame);
    size_t cls;
    if (m->states) {
        cls = htk_names_find(m->states, tok[2], strlen(tok[2]));
        if (cls == SIZE_MAX)
            return pt_err_set(e, PT_EUSER, "%s:%zu: error: state '%s' is not in the state list %s",
                              m->file, m->lineno, tok[2], m->hc->states);
    } else {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(tok[3], &end, 10);
        if (*end || end == tok[3] || errno || tok[3][0] == '-' ||
            v >= (unsigned long long)m->hc->label_dim)
            return pt_err_set(e, PT_EUSER,
                              "%s:%zu: error: class '%s': expected a whole number from 0 to %d "
                              "(labelDim %d)",
                              m->file, m->lineno, tok[3], m->hc->label_dim - 1, m->hc->label_dim);
        cls = (size_t)v;
    }
    if (cls >= (size_t)m->hc->label_dim)
        return pt_err_set(e, PT_EUSER,
                          "%s:%zu: error: state '%s' has class %zu, beyond labelDim %d", m->file,
                          m->lineno, tok[2], cls, m->hc->label_dim);
    int r = grow_ids(m, b - a, e);
    struct htk_labels *l = m->out;
    for (uint64_t f = a; r == 0 && f < b; f++)
        l->ids[l->first[l->n + 1]++] =
            (uint32_t)cls | (m->hc->boundaries && f == a ? HTK_BOUNDARY : 0u);
    m->next_frame = b;
    return r;
}

/* Little-endian fields of the binary MLF. */
static int get_u(FILE *f, int bytes, uint32_t *v)
{
    unsigned char b[4];
    if (fread(b, 1, (size_t)bytes, f) != (size_t)bytes)
        return -1;
    *v = bytes == 2
             ? (uint32_t)(b[0] | b[1] << 8)
             : (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 0;
}

/* CNTK's binary MLF (its HTKMLFBinaryDeserializer's; MLFBinaryIndexBuilder.cpp): "MLF", a
 * 16-bit version, then per utterance its key (version 1: a 32-bit number; 2: a 16-bit
 * length and the name), its 32-bit frame count, a 16-bit count of runs and each run's
 * class and frames (16 bits each); little-endian. Errors name the file and byte offset. */
static int read_mlf_bin(struct mlf_state *m, FILE *f, const char *path, struct pt_err *e)
{
    struct htk_labels *l = m->out;
    uint32_t version = 0, v = 0, frames = 0, runs = 0, cls = 0, count = 0;
    char key[1024];
    int rc = get_u(f, 2, &version);
    if (rc == 0 && version != 1 && version != 2)
        return pt_err_set(e, PT_EUSER, "%s: error: binary MLF of version %u: CNTK writes 1 or 2",
                          path, version);
    for (;;) {
        long at = ftell(f);
        size_t klen = 0;
        if (version == 1) {
            if (get_u(f, 4, &v))
                break;
            klen = (size_t)snprintf(key, sizeof key, "%u", v);
        } else {
            if (get_u(f, 2, &v))
                break;
            if (v == 0 || v >= sizeof key || fread(key, 1, v, f) != v)
                return pt_err_set(e, PT_EUSER,
                                  "%s: error: at byte %ld: an utterance key of %u bytes: expected "
                                  "1 to %zu bytes of name",
                                  path, at, v, sizeof key - 1);
            klen = v;
            key[klen] = '\0';
        }
        if (get_u(f, 4, &frames) || get_u(f, 2, &runs))
            return pt_err_set(e, PT_EUSER, "%s: error: at byte %ld: the file ends inside '%s'",
                              path, at, key);
        if (frames > MLF_MAX_ENTRY_FRAMES)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: at byte %ld: '%s' says %u frames: an entry has at most "
                              "%llu",
                              path, at, key, frames, (unsigned long long)MLF_MAX_ENTRY_FRAMES);
        if (htk_names_find(&m->keys, key, klen) != SIZE_MAX)
            return pt_err_set(e, PT_EUSER, "%s: error: at byte %ld: a second entry for '%s'", path,
                              at, key);
        if (htk_grow(&l->first, &m->cap_entries, l->n + 2, sizeof *l->first) ||
            htk_names_add(&m->keys, key, klen))
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        l->first[l->n + 1] = l->first[l->n];
        if ((rc = grow_ids(m, frames, e)) != 0)
            return rc;
        uint64_t got = 0;
        for (uint32_t k = 0; k < runs; k++) {
            if (get_u(f, 2, &cls) || get_u(f, 2, &count))
                return pt_err_set(e, PT_EUSER, "%s: error: at byte %ld: the file ends inside '%s'",
                                  path, at, key);
            if (cls >= (uint32_t)m->hc->label_dim || got + count > frames)
                return pt_err_set(e, PT_EUSER,
                                  "%s: error: at byte %ld: '%s' has %s (class %u of labelDim %d; "
                                  "%llu + %u of its %u frames)",
                                  path, at, key,
                                  cls >= (uint32_t)m->hc->label_dim ? "a class beyond labelDim"
                                                                    : "more frames than it says",
                                  cls, m->hc->label_dim, (unsigned long long)got, count, frames);
            for (uint32_t t = 0; t < count; t++)
                l->ids[l->first[l->n + 1]++] = cls;
            got += count;
        }
        if (got != frames || frames == 0)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: at byte %ld: '%s' says %u frames, its runs cover %llu",
                              path, at, key, frames, (unsigned long long)got);
        l->n++;
    }
    return ferror(f) ? pt_err_set(e, PT_EUSER, "%s: error: cannot read: %s", path, strerror(errno))
                     : 0;
}

static int read_mlf(struct mlf_state *m, const char *path, struct pt_err *e)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cfg_error(e, &m->hc->mlf_origin, "cannot read MLF '%s': %s", path, strerror(errno));
    char magic[8] = {0};
    size_t nm = fread(magic, 1, 7, f);
    m->file = path;
    m->lineno = 0;
    if (nm >= 3 && !memcmp(magic, "MLF", 3)) { /* CNTK's binary form */
        if (m->hc->boundaries) {
            fclose(f);
            return cfg_error(e, &m->hc->mlf_origin,
                             "MLF '%s' is binary: phoneBoundaries needs a text MLF (CNTK's "
                             "binary MLF deserializer has none either)",
                             path);
        }
        fseek(f, 3, SEEK_SET);
        int r = read_mlf_bin(m, f, path, e);
        fclose(f);
        return r;
    }
    rewind(f);
    m->file = path;
    m->lineno = 0;
    m->in_entry = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int r = 0, header = 0;
    while (r == 0 && (len = getline(&line, &cap, f)) >= 0) {
        m->lineno++;
        size_t n = chomp(line, len);
        if (n == 0)
            continue;
        if (!strcmp(line, "#!MLF!#")) { /* also inside, where MLFs were concatenated */
            if (m->in_entry)
                r = pt_err_set(e, PT_EUSER, "%s:%zu: error: #!MLF!# inside the entry of line %zu",
                               path, m->lineno, m->entry_line);
            header = 1;
            continue;
        }
        if (!header) {
            r = pt_err_set(e, PT_EUSER, "%s:%zu: error: expected the MLF header #!MLF!#", path,
                           m->lineno);
        } else if (!m->in_entry) {
            r = entry_start(m, line, n, e);
        } else if (!strcmp(line, ".")) {
            if (m->next_frame == 0)
                r = pt_err_set(e, PT_EUSER, "%s:%zu: error: the entry of line %zu has no frames",
                               path, m->lineno, m->entry_line);
            m->in_entry = 0;
            m->out->n++;
        } else {
            r = entry_line(m, line, e);
        }
    }
    if (r == 0 && ferror(f))
        r = pt_err_set(e, PT_EUSER, "%s: error: cannot read: %s", path, strerror(errno));
    if (r == 0 && m->in_entry)
        r = pt_err_set(e, PT_EUSER, "%s:%zu: error: the entry of line %zu has no final '.' line",
                       path, m->lineno, m->entry_line);
    if (r == 0 && !header)
        r = pt_err_set(e, PT_EUSER, "%s: error: empty, expected an MLF (#!MLF!# first)", path);
    free(line);
    fclose(f);
    return r;
}

/* mlfFileList: a file listing the MLFs, or PATH:PATH:... (a ':' and no such file). */
static int read_list(struct mlf_state *m, struct pt_err *e)
{
    const char *list = m->hc->mlf_list;
    FILE *f = strchr(list, ':') ? NULL : fopen(list, "r");
    if (!f && !strchr(list, ':'))
        return cfg_error(e, &m->hc->mlf_origin, "cannot read MLF list '%s': %s", list,
                         strerror(errno));
    int r = 0;
    if (!f) {
        char path[1024];
        for (const char *p = list; r == 0 && *p;) {
            size_t n = strcspn(p, ":");
            if (n >= sizeof path)
                return cfg_error(e, &m->hc->mlf_origin, "mlfFileList: a path is too long");
            memcpy(path, p, n);
            path[n] = '\0';
            if (n)
                r = read_mlf(m, path, e);
            p += n + (p[n] == ':');
        }
        return r;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (r == 0 && (len = getline(&line, &cap, f)) >= 0) {
        size_t n = chomp(line, len);
        if (n)
            r = read_mlf(m, line, e);
    }
    free(line);
    fclose(f);
    return r;
}

int htk_labels_read(const struct htk_config *hc, struct pt_log *log, struct htk_labels *out,
                    struct pt_err *e)
{
    if (hc->ctf[0])
        return htk_ctf_labels_read(hc, log, out, e);
    memset(out, 0, sizeof *out);
    struct htk_names states;
    memset(&states, 0, sizeof states);
    int r = hc->states[0] ? read_states(hc, &states, e) : 0;
    if (r == 0 && log && hc->states[0])
        pt_log_printf(log, "Total (%zu) state names in state list '%s'\n", states.n, hc->states);
    struct mlf_state m = {.hc = hc, .states = hc->states[0] ? &states : NULL, .out = out};
    out->first = calloc(2, sizeof *out->first);
    m.cap_entries = 2;
    if (!out->first)
        r = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    if (r == 0)
        r = hc->mlf[0] ? read_mlf(&m, hc->mlf, e) : read_list(&m, e);
    out->nclasses = hc->states[0] ? states.n : (size_t)hc->label_dim;
    htk_names_free(&states);
    out->keys = m.keys;
    if (r == 0 && out->n == 0)
        r = pt_err_set(e, PT_EUSER, "%s: error: the MLF has no entries",
                       hc->mlf[0] ? hc->mlf : hc->mlf_list);
    if (r == 0 && log)
        pt_log_printf(log, "MLF: %zu utterances with %llu frames\n", out->n,
                      (unsigned long long)out->first[out->n]);
    return r;
}

void htk_labels_free(struct htk_labels *l)
{
    htk_names_free(&l->keys);
    free(l->first);
    free(l->ids);
    memset(l, 0, sizeof *l);
}
