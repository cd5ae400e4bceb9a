/* Private to src/reader: CNTK's HTK readers, for speech. htk_config.c reads either form
 * into rc->htk (struct htk_config, reader.h):
 *
 *   readerType = "HTKMLFReader"; features = [ dim = 363; scpFile = "x.scp" ];
 *   labels = [ mlfFile = "x.mlf"; labelMappingFile = "state.list"; labelDim = 132 ]
 *
 *   deserializers = ({ type = "HTKFeatureDeserializer"; module = "HTKDeserializers";
 *                      input = [ features = [ dim = 363; scpFile = "x.scp" ] ] } :
 *                    { type = "HTKMLFDeserializer"; module = "HTKDeserializers";
 *                      input = [ labels = [ mlfFile = ...; labelMappingFile = ...; dim = 132 ] ] })
 *
 * htk_mlf.c reads the state list and the MLFs (master label files), htk_reader.c the script
 * (scp) file, the HTK feature files' headers, and each minibatch's frames. */
#ifndef PT_READER_HTK_H
#define PT_READER_HTK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "reader/fill_pool.h"

#include "parsers/schema.h"
#include "reader/reader.h"

struct reader;

/* Whether deserializer block d is one of CNTK's HTK deserializers (type or module). */
int htk_deserializer(struct cfg_node *d);
/* Whether n, a block of reader block `block`, is a stream of an HTKMLFReader (reader schema's
 * owns: the blocks with scpFile or mlfFile, named as the config likes). */
int htk_legacy_stream(struct cfg_node *block, struct cfg_node *n);
/* readerType = "HTKMLFReader" in reader block b (its keys already read into rc). */
int htk_legacy_read(struct cfg_check *ck, struct cfg_node *b, struct reader_config *rc,
                    struct pt_err *e);
/* deserializers = ({ HTKFeatureDeserializer } : { HTKMLFDeserializer }) in reader block b, in
 * either order (d1, d2). */
int htk_deserializers_read(struct cfg_check *ck, struct cfg_node *b, struct cfg_node *d1,
                           struct cfg_node *d2, struct reader_config *rc, struct pt_err *e);

/* The config of further stream k of hc (hc->extra[k]) as a config of that stream alone:
 * its fields where the first stream's are, the other kind's index -1. */
void htk_extra_config(const struct htk_config *hc, int k, struct htk_config *out);

/* Make *p (an array of elements of elem bytes, *cap of them) hold at least need, doubling
 * (from at least 64); -1: out of memory (*p unchanged). */
int htk_grow(void *p, size_t *cap, size_t need, size_t elem);

/* A set of names: open addressing over indices into one NUL-separated buffer. */
struct htk_names {
    char *buf;
    size_t len, cap;
    size_t *off; /* offset of name i in buf */
    size_t n, cap_n;
    size_t *slot; /* index + 1, 0: empty */
    size_t nslot;
};
/* Index of name s (n bytes), or SIZE_MAX. */
size_t htk_names_find(const struct htk_names *t, const char *s, size_t n);
/* Add s (n bytes) as name t->n; -1: out of memory. */
int htk_names_add(struct htk_names *t, const char *s, size_t n);
void htk_names_free(struct htk_names *t);

/* The length of name (n bytes) without its extension (from the last '.' after the last
 * '/'): an utterance's key, in the script file and in the MLF alike. */
size_t htk_key_len(const char *name, size_t n);

#define HTK_BOUNDARY 0x80000000u

/* The labels of every utterance the MLFs hold (htk_mlf.c). */
struct htk_labels {
    struct htk_names keys; /* entry i's name without quotes or extension */
    uint64_t *first;       /* entry i's frames: ids[first[i] .. first[i + 1]) */
    uint32_t *ids;         /* class of each frame; HTK_BOUNDARY set: a segment's first
                            * (phoneBoundaries only) */
    size_t n;              /* entries */
    size_t nclasses;       /* the state list's lines (or labelDim without one) */
};

/* The state list (one state name a line, its class the line's number; NULL: the MLFs carry
 * class numbers in a 4th column), then every MLF (paths, or one per line of list_file when
 * list_file is set) into *out. Errors name file:line. */
int htk_labels_read(const struct htk_config *hc, struct pt_log *log, struct htk_labels *out,
                    struct pt_err *e);
void htk_labels_free(struct htk_labels *l);
/* The same from a text-format file beside the features (hc->ctf; htk_ctf.c). */
int htk_ctf_labels_read(const struct htk_config *hc, struct pt_log *log, struct htk_labels *out,
                        struct pt_err *e);

/* The utterances' data (htk_reader.c opens it, htk_fill.c reads minibatches from it).
 * Frames of a chunk (whole utterances): the unit of distributed reading. */
enum { HTK_CHUNK_FRAMES = 1024, HTK_MAP_BYTES = 1 << 20 };

struct htk_file {
    uint64_t data;   /* byte offset of frame 0 */
    uint64_t frames; /* frames the file holds */
    uint32_t vec;    /* bytes a frame */
    int swap, compressed;
    float *a, *b;             /* compressed: value = (x + b) / a */
    const unsigned char *map; /* the file mapped (an archive), or NULL: pread */
    size_t map_len;
};

struct htk_utt {
    uint32_t file;
    uint32_t n;      /* frames */
    uint64_t s;      /* its first frame in the file */
    uint64_t lab;    /* its first frame's class in set.lab.ids */
    uint64_t frame0; /* its first frame's number among all (frame mode's sequence) */
    uint32_t entry;  /* its line's number among the script file's entries, from 0: the same
                      * utterance's in a further feature stream's script file */
    uint64_t xlab[HTK_MAX_EXTRA]; /* further label stream k: its first frame's class */
};

struct htk_worker {
    int fd;
    uint32_t file; /* the file fd reads */
    unsigned char *raw;
    size_t cap_raw;
    float *frames;
    size_t cap_frames;
};

struct htk_set {
    struct htk_names paths; /* the physical files */
    struct htk_file *files;
    size_t cap_files;
    struct htk_utt *utt;
    size_t nutt, cap_utt;
    struct htk_labels lab;
    int dim; /* values a frame in the files */
    int left, right;
    struct htk_worker w[FILL_POOL_MAX];
    /* further streams (htk_config.extra): a feature stream's utterances (entry k is this
     * set's entry k), a label stream's labels */
    struct htk_set *xfeat[HTK_MAX_EXTRA];
    size_t entries; /* the script file's entries (utterances before any was skipped) */
    struct htk_labels xlab[HTK_MAX_EXTRA];
};

/* A value's bytes as the file holds them: swap = big-endian (as HTK writes), else little. */
static inline uint32_t htk_be32(const unsigned char *p, int swap)
{
    return swap ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline uint16_t htk_be16(const unsigned char *p, int swap)
{
    return swap ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static inline float htk_f32(const unsigned char *p, int swap)
{
    uint32_t u = htk_be32(p, swap);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The reader's side (htk_reader.c): the script file and the utterances into r->ix, and the
 * picked sequences (frames in frame mode, else utterances) into mb. */
int htk_open(struct reader *r, struct pt_err *e);
void htk_close(struct reader *r);
/* (htk_fill.c) */
int htk_fill(struct reader *r, const uint32_t *seqs, size_t n, struct minibatch *mb,
             struct pt_err *e);
/* Truncated mode: nstreams sequences, piece k is frames [pos[k], pos[k] + cnt[k]) of
 * utterance seqs[k] at steps [at[k], at[k] + cnt[k]) of sequence dst[k]; cont[q] whether
 * sequence q goes on from the previous minibatch's (mb->cont), a piece at a step > 0
 * starts an utterance there (mb->begins). */
int htk_fill_segments(struct reader *r, const uint32_t *seqs, const uint32_t *pos,
                      const uint32_t *cnt, const uint32_t *at, const uint32_t *dst, size_t n,
                      const uint8_t *cont, size_t nstreams, struct minibatch *mb, struct pt_err *e);

#endif
