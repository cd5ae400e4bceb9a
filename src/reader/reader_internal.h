/* Private to src/reader: the index and the reader state. */
#ifndef PT_READER_READER_INTERNAL_H
#define PT_READER_READER_INTERNAL_H

#include "reader/dense_store.h"
#include "reader/fill_pool.h"
#include "reader/reader.h"
#include "reader/timeline.h"

struct ctf_index {
    int has_ids;         /* lines carry sequence ids (grouping lines into sequences) */
    uint64_t data_start; /* byte offset after a BOM */
    uint64_t file_bytes;
    size_t nseq, nchunks, total_samples;
    uint64_t *seq_offset; /* byte offset of each sequence's first line */
    uint32_t *seq_samples;
    uint32_t *seq_chunk;
    size_t *chunk_first; /* nchunks + 1 entries */
    size_t cap_seq;
};

void ctf_index_free(struct ctf_index *ix);

/* Per-line grouping shared by the index and chunk loading: does a line with this id start
 * a new sequence after the previous one? */
int ctf_starts_sequence(const struct reader_config *rc, int has_ids, int first,
                        const struct ctf_line *line, uint64_t prev_id);

/* A parsed chunk in memory. */
struct chunk {
    size_t id; /* SIZE_MAX: empty slot */
    uint64_t used;
    size_t nseq;
    struct ctf_column cols[CTF_MAX_INPUTS];   /* sparse inputs; dense ones pass through */
    struct dense_store dense[CTF_MAX_INPUTS]; /* dense inputs, packed */
    uint32_t *row0;                           /* nseq x ninputs: first row of (sequence, input) */
    uint32_t *rows;                           /* nseq x ninputs: its row count */
    size_t cap_seq;
};

/* Chunks built from lines already parsed (ctf_batch.c): chunk_reset empties c for the
 * inputs; chunk_count_line counts a line whose rows are in c (in its columns, or for dense
 * inputs in its stores) into its sequence, a new one where it starts one; chunk_move_dense
 * moves the dense rows from the columns into the packed stores; chunk_finish ends the
 * chunk (the stores sealed, the columns' spare capacity released); chunk_free releases
 * its memory. */
void chunk_reset(struct chunk *c, const struct ctf_input *in, int n);
int chunk_count_line(struct chunk *c, const struct ctf_input *in, int n, int starts, unsigned rows,
                     struct pt_err *e);
int chunk_move_dense(struct chunk *c, const struct ctf_input *in, int n, struct pt_err *e);
void chunk_finish(struct chunk *c, const struct ctf_input *in, int n);
void chunk_free(struct chunk *c);

/* The chunks the index pass keeps: it parses every line anyway, so up to `max` chunks from
 * the file's start are built there (c[0..n), complete) and the reader's cache starts with
 * them instead of parsing their text again (Fashion-MNIST's 212 MB: 0.6 s a rank). */
struct ctf_kept {
    struct chunk *c;
    size_t n, max;
    size_t max_samples; /* and no new one once the kept ones hold this many samples */
};

/* Build the index of rc->file (one streaming pass, every line parsed and validated), and
 * with keep (NULL: none) keep its first chunks. */
int ctf_index_build(const struct reader_config *rc, struct pt_log *log, struct ctf_index *ix,
                    struct ctf_kept *keep, struct pt_err *e);

struct reader {
    struct reader_config rc;
    struct ctf_index ix;
    struct ctf_input in[CTF_MAX_INPUTS];
    struct pt_log *log;
    int fd;
    struct tl_source src;
    struct tl_params tp;
    struct tl_sweep sweep;
    uint64_t sweep_no; /* which sweep `sweep` holds; UINT64_MAX: none */
    /* the walk through the current epoch */
    uint64_t w;    /* sweep of the next sequence */
    size_t k;      /* its position in the sweep */
    uint64_t next; /* global sample index where it starts */
    uint64_t end;  /* the epoch ends before this sample */
    int rank, workers;
    int split_by_sequence; /* reader_split_by_sequence */
    /* chunks in memory */
    struct chunk *cache;
    size_t ncache;
    uint64_t clock;
    uint32_t *pick;    /* this rank's sequences of the current minibatch */
    uint64_t *pick_at; /* and the global sample position of each */
    size_t cap_pick;
    struct chunk **pick_chunk; /* the chunk of each picked sequence (reader_fill) */
    size_t cap_chunk;
    struct fill_pool *pool; /* the threads that fill minibatches (reader_pool) */
    int pool_tried;
    int ahead;             /* read ahead of the caller (prefetch.c): filled on the pool's threads */
    struct image_set *img; /* rc.img.on: the images (image_reader.c) */
    struct htk_set *htk;   /* rc.htk.on: the utterances (htk_reader.c) */
    struct lm_set *lm;     /* rc.lm.on: the sentences (lm_reader.c) */
    /* truncated mode (rc.htk.truncated): the streams of every rank (rank r's are
     * [r * per_rank, (r + 1) * per_rank)), walked alike on every rank, so that all agree on
     * each minibatch's size and the epoch's end; this rank's segments in seg_* */
    struct seg_stream {
        uint32_t seq, pos; /* the utterance, and its frames read so far */
        int busy, fresh;   /* has an utterance; it starts in this minibatch */
    } * streams;
    size_t nstreams, per_rank;
    uint32_t *seg_seq, *seg_pos, *seg_cnt; /* this rank's pieces of its streams' segments */
    uint32_t *seg_at, *seg_dst;            /* each piece's first step, and its stream */
    uint8_t *seg_cont;                     /* per stream: goes on from the last minibatch */
    size_t cap_seg;
    /* the second deserializer of a composite reader (rc.aux): its own reader over the same
     * sequence numbers, and a minibatch whose inputs lend theirs to it (reader_next) */
    struct reader *aux;
    struct minibatch aux_mb;
};

/* The ImageDeserializer's data (image_reader.c): the map file into r->ix and r->img;
 * picked images into mb (at: their global sample positions, which seed their transforms). */
int image_open(struct reader *r, struct pt_err *e);
void image_close(struct reader *r);
int image_fill(struct reader *r, const uint32_t *seqs, const uint64_t *at, size_t n,
               struct minibatch *mb, struct pt_err *e);

/* The reader's fill threads, started at the first call that wants them (NULL: the caller
 * fills alone; see fill_pool_threads). */
struct fill_pool *reader_pool(struct reader *r);

/* Rows of the sequences of this minibatch into mb (ctf_batch.c). */
int reader_fill(struct reader *r, const uint32_t *seqs, size_t n, struct minibatch *mb,
                struct pt_err *e);

/* The parser's view of the configured inputs. */
void reader_ctf_inputs(const struct reader_config *rc, struct ctf_input *out);

#endif
