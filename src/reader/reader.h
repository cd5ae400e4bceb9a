/* CNTK text-format reader (SPEC 6).
 *
 * reader_open reads the whole file once, streaming (never slurped unless
 * keepDataInMemory=true), validating every line and building an index: sequences, their
 * sample counts and byte offsets, grouped into chunks of about chunkSizeInBytes. Each epoch
 * is then a pure function of (seed, epoch, rank, workers) through the timeline
 * (timeline.h): every rank walks the same global minibatches and keeps its own share,
 * parsing only the chunks it owns. */
#ifndef PT_READER_READER_H
#define PT_READER_READER_H

#include <stddef.h>
#include <stdint.h>

#include "core/log.h"
#include "parsers/schema.h"
#include "data/minibatch.h"

extern const struct cfg_schema reader_schema;       /* reader = [ ... ] */
extern const struct cfg_schema reader_input_schema; /* reader.input.<stream> = [ ... ] */
/* the one deserializer of reader.deserializers = ({ ... }) */
extern const struct cfg_schema reader_deserializer_schema;
/* A CNTKTextFormatDeserializer block d (its file and inputs) alone into rc: how the HTK
 * reader reads one composed with its features (htk_config.c). */
struct reader_config;
int reader_ctf_deserializer_read(struct cfg_node *d, struct reader_config *rc, struct pt_err *e);

struct reader_input {
    char name[64];  /* the stream's name in the config ("features") */
    char alias[64]; /* its name in the file (default: name) */
    int dim;
    int sparse;
    int defines_mb;
    /* Non-empty: every row must be one-hot (one value 1, the others 0), because of this
     * consumer ("the criterion CrossEntropyWithSoftmax"); see reader_config_one_hot. */
    char one_hot[80];
};

/* CNTK's ImageDeserializer (image_config.c, image_reader.c, image_tf.c): images listed in
 * a map file, each one sample of the features stream (after its transforms, in order) and
 * its class, one-hot, in the labels stream. */
#define IMG_MAX_TF 8
enum img_tf_kind { IMG_CROP, IMG_SCALE, IMG_MEAN, IMG_TRANSPOSE, IMG_COLOR, IMG_INTENSITY };
enum img_crop { IMG_CROP_CENTER, IMG_CROP_SIDE, IMG_CROP_AREA, IMG_CROP_MULTIVIEW };
enum img_interp { IMG_NEAREST, IMG_LINEAR, IMG_CUBIC };
enum img_scale_mode { IMG_FILL, IMG_SCALE_CROP, IMG_PAD };
struct img_tf {
    int kind;                /* enum img_tf_kind */
    struct cfg_origin where; /* the transform's block, for messages */
    /* Crop */
    int crop_type, crop_w, crop_h; /* cropSize (0: the ratios decide) */
    double side[2], area[2], aspect[2];
    int jitter, hflip;
    /* Scale */
    int width, height, channels, interp, scale_mode, pad_value;
    /* Mean (meanFile), Intensity (intensityFile) */
    char file[1024];
    /* Color, Intensity */
    double brightness, contrast, saturation, intensity_std;
};
struct image_config {
    int on;                      /* rc->file is a map file of images */
    int features, labels;        /* the inputs (rc->inputs) of the image and its class */
    int grayscale;               /* decode to one channel */
    int width, height, channels; /* the features' image (the last Scale) */
    int planar;                  /* a Transpose: channel planes (W:H:C), else interleaved */
    int label_dim;
    struct img_tf tf[IMG_MAX_TF];
    int ntf;
};

/* CNTK's HTK readers (htk.h): utterances listed in a script file (scpFile), their frames
 * in HTK feature files, each frame's class from master label files (MLF). */
struct htk_config {
    int on;
    int features, labels; /* the inputs (rc->inputs) of the frames and of their classes */
    char scp[1024];       /* scpFile */
    struct cfg_origin scp_origin;
    char prefix[1024];   /* prefixPathInSCP */
    int left, right;     /* context frames each side (contextWindow); both 0: from dim over
                          * the files' dimension, as CNTK's augmentation extent */
    int frame_mode;      /* frames are the sequences (CNTK's default), else utterances */
    char mlf[1024];      /* mlfFile, or "" with mlfFileList */
    char mlf_list[1024]; /* mlfFileList: a file of MLF paths, one a line, or "a:b:c" */
    struct cfg_origin mlf_origin;
    int truncated; /* utterances in segments of minibatchSize frames (utterance mode) */
#define HTK_MAX_SCHED 16
    int streams[HTK_MAX_SCHED]; /* nbruttsineachrecurrentiter: segments a minibatch, per rank */
    int nstreams;               /* per epoch, the last repeats */
    char states[1024];          /* labelMappingFile ("": the MLFs give class numbers) */
    struct cfg_origin states_origin;
    int label_dim;
    int boundaries; /* phoneBoundaries: a segment's first frame 2, the others 1 (CTC) */
    /* the labels from a CNTKTextFormatDeserializer beside the features instead of an MLF
     * (CNTK's Speech/LSTM_CTC): its file ("" none), the stream's alias and form */
    char ctf[1024];
    struct cfg_origin ctf_origin;
    char ctf_alias[64];
    int ctf_sparse;
    /* The legacy form's further streams, in the config's order after the first feature
     * stream and the first label stream above (TIMIT's featIn and featOut, features1 and
     * features2, labels and regions): each with the fields above that its kind has. A
     * further feature stream's script file lists the same utterances in the same order
     * (CNTK's rule), each of the same frames; a further label stream labels the same
     * utterances (one without is skipped, as without the first's labels). */
#define HTK_MAX_EXTRA 3
    int nextra;
    struct htk_extra {
        int feat;  /* a feature stream (scpFile), else a label stream (mlfFile) */
        int input; /* its rc->inputs index */
        char scp[1024], prefix[1024];
        struct cfg_origin scp_origin;
        int left, right;
        char mlf[1024], mlf_list[1024], states[1024];
        struct cfg_origin mlf_origin, states_origin;
        int label_dim, boundaries;
    } extra[HTK_MAX_EXTRA];
};

/* CNTK's LMSequenceReader (lm.h): sentences of words, one a line, each word's id and class
 * from a word-class file; the network's features are each step's word (one-hot) and its
 * labels the next word's id, class and class range (4 rows), for class-based language
 * models (ClassBasedCrossEntropyWithSoftmax). */
struct lm_config {
    int on;
    char wordclass[1024]; /* wordclass: lines INDEX COUNT WORD CLASS */
    struct cfg_origin wordclass_origin;
    char unk[64];             /* the word out-of-vocabulary words read as (unk, "<unk>") */
    int nbrutts;              /* nbruttsineachrecurrentiter: 0 fills the minibatch, N > 0 up to N */
    long long block_tokens;   /* cacheBlockSize: the words shuffled together (whole lines) */
    int features, labels;     /* the inputs (rc->inputs): this step's word, the next's 4 rows */
    int vocab;                /* the input section's labelDim: the words of the word-class file */
    struct cfg_origin origin; /* the reader block, for messages */
};

struct reader_config {
    char file[4096];
    struct cfg_origin file_origin; /* where file= was set, for messages */
    struct reader_input inputs[CTF_MAX_INPUTS];
    int ninputs;
    int randomize;
    int read_none; /* readMethod=none: the file order (randomize stays 0) */
    size_t window; /* chunks, or samples when sample_window */
    int sample_window;
    size_t chunk_bytes;
    uint64_t seed;
    int keep_in_memory, frame_mode, skip_ids;
    int by_sequence; /* distributionMode=sequence: ranks share every minibatch evenly */
    long long max_errors;
    int trace;
    struct image_config img;
    struct htk_config htk;
    struct lm_config lm;
    /* CNTK's composite reader of two deserializers, deserializers = ({ ... } : { ... }): the
     * second, a CNTKTextFormatDeserializer, supplies inputs[aux.first .. ninputs - 1] from
     * its file, its k-th sequence with the first's k-th (CNTK's keys: the line, or the
     * sequence id, 0, 1, 2 ... in order). aux.first == 0: one deserializer. */
    struct reader_aux {
        int first;
        char file[4096];
        struct cfg_origin file_origin;
        size_t chunk_bytes;
        int keep_in_memory, skip_ids;
        long long max_errors;
    } aux;
    /* This file is such a second deserializer: its sequence ids, where it has them, must be
     * 0, 1, 2 ... in order (checked by the index, naming the line). */
    int ids_are_positions;
};

/* Fill rc from a reader block (typed, validated, with CNTK's defaults). */
int reader_config_read(struct cfg_node *block, struct reader_config *rc, struct pt_err *e);
/* The layer above says that stream `name` holds class labels for `why` (a classification
 * criterion): reader_open then refuses any row of it that is not one-hot, naming file:line
 * (not counted against maxErrors: the row is well-formed text, wrong for the network).
 * Returns 1 when rc has such a stream, else 0 (nothing changes). */
int reader_config_one_hot(struct reader_config *rc, const char *name, const char *why);

struct reader;

/* Open and index the data file. Warnings (zero-padded rows, tolerated bad rows) go to log
 * (may be NULL). On failure *out is NULL and e names file:line:col. Rows that do not
 * parse count against maxErrors (skipped with a warning up to it); a sequence without a
 * row of some declared input is always an error (as CNTK's "Input is empty in sequence"),
 * naming the inputs the config declares and any undeclared alias seen (a typo). */
int reader_open(const struct reader_config *rc, struct pt_log *log, struct reader **out,
                struct pt_err *e);
void reader_close(struct reader *r);

size_t reader_sweep_samples(const struct reader *r); /* samples in one pass */
/* Whether the reader gives an input called name. */
int reader_has_input(const struct reader *r, const char *name);
size_t reader_sequences(const struct reader *r);
/* The files the reader reads, i = 0, 1, ... until NULL: the data file, an HTK reader's script
 * file, MLF and feature files, a composite reader's second file (what a writer must not
 * write over). */
const char *reader_data_file(const struct reader *r, size_t i);
size_t reader_chunks(const struct reader *r);

/* Begin epoch `epoch` (0-based): the samples [epoch*E, (epoch+1)*E) of the endless stream
 * of sweeps, E = epoch_size or one sweep when 0 (a sequence belongs to the epoch where its
 * first sample falls). This rank is `rank` of `workers`. */
int reader_start_epoch(struct reader *r, size_t epoch, size_t epoch_size, int rank, int workers,
                       struct pt_err *e);
/* Deal the sequences of every global minibatch round-robin among the workers (as
 * distributionMode=sequence) whatever the config says: distributedMBReading=false, where
 * CNTK reads every minibatch whole on each rank and keeps its 1/N slice. */
void reader_split_by_sequence(struct reader *r, int on);
/* The next global minibatch of mb_size samples (sequences are whole: one is added while the
 * total stays <= mb_size, or when the minibatch is still empty); mb gets this rank's share.
 * At the end of the epoch mb->global_samples is 0. */
int reader_next(struct reader *r, size_t mb_size, struct minibatch *mb, struct pt_err *e);

/* Reading ahead (prefetch.c): reader_next on a second thread, up to two minibatches ahead of the
 * caller, from a reader whose epoch has started; host (NULL: malloc) allocates the
 * minibatches' data. reader_prefetch_next gives the next one
 * (valid until the following call; its global_samples is 0 at the end of the epoch) or the
 * error the thread met. Nothing else may use the reader until reader_prefetch_stop. */
struct reader_prefetch;
int reader_prefetch_start(struct reader *r, size_t mb_size, const struct mb_host_alloc *host,
                          struct reader_prefetch **out, struct pt_err *e);
int reader_prefetch_next(struct reader_prefetch *p, struct minibatch **mb, struct pt_err *e);
/* The minibatch the next reader_prefetch_next gives, when the thread has already read it
 * (NULL otherwise, and for the epoch's end or a failure): the caller may read its data,
 * which stay as they are until the call after that next one hands its slot back. */
struct minibatch *reader_prefetch_peek(struct reader_prefetch *p);
void reader_prefetch_stop(struct reader_prefetch *p);

#endif
