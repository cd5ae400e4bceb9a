/* action=write's settings, shared by its schema (write_schema.c: the keys, the format
 * block, labelMappingFile) and the writer (write_output.c). */
#ifndef PT_TRAIN_WRITE_INTERNAL_H
#define PT_TRAIN_WRITE_INTERNAL_H

#include <stddef.h>

#include "core/err.h"
#include "core/log.h"
#include "parsers/schema.h"

struct reader;

#define WRITE_MAX_NODES 16 /* nodes one write writes (text files or writer outputs) */

/* What a written output is: a SimpleNetworkBuilder network's HLast (a BrainScript one's
 * output node), its softmax, HLast less the log prior; one of the reader's inputs as the
 * minibatch holds it; any other node of a BrainScript network. */
enum write_node { NODE_HLAST, NODE_POSTERIOR, NODE_SCALED_LL, NODE_INPUT, NODE_GRAPH };

struct write_format {
    int category; /* type: 0 real, 1 category */
    int transpose;
    const char *prologue, *epilogue, *seq_sep, *seq_prologue, *seq_epilogue, *elem_sep, *sample_sep,
        *precision;
    const char *label_file; /* labelMappingFile, or NULL */
    char **labels;          /* its lines (open_outputs reads them) */
    size_t nlabels;
};

struct write_settings {
    char model[4096];
    char output[4096]; /* outputPath, or "" with a writer block */
    long long mb_size, epoch_size;
    struct cfg_val nodes; /* outputNodeNames */
    struct write_format fmt;
};

/* The values of node for one column of HLast (rows values) into v (write_output.c). */
void write_node_column(enum write_node node, const float *z, size_t rows, const float *prior,
                       double *v);

/* writer = [ writerType = HTKMLFWriter ; <node> = [ dim ; scpFile ; type = Real ] ... ]
 * (write_htk.c): sequence k of the reader (an utterance) is written as the HTK feature file
 * on line k + 1 of the node's scpFile. */
extern const struct cfg_schema writer_schema;
struct write_htk;
/* Read the writer block for the nodes names[0 .. n) and their script files; out NULL:
 * check the blocks only (no file is read, nothing is logged). */
int write_htk_open(struct cfg_node *writer, const char *const *names, size_t n, struct pt_log *log,
                   struct write_htk **out, struct pt_err *e);
/* Before writing: the script files list as many files as the reader has sequences (at
 * least as many when epoch_size limits them), and none is a file the reader reads or
 * the model. */
int write_htk_check(struct write_htk *hw, struct reader *r, const char *model, long long epoch_size,
                    struct pt_err *e);
/* Sequence seq's n columns of output o (rows values each) as its file. */
int write_htk_sequence(struct write_htk *hw, size_t o, size_t seq, enum write_node node,
                       const float *const *cols, size_t n, size_t rows, const float *prior,
                       struct pt_log *log, struct pt_err *e);
void write_htk_free(struct write_htk *hw);

/* precisionFormat "W.P", "W", ".P" (digits): width and precision of %f (-1: default). */
void write_precision_parse(const char *s, int *width, int *prec);
/* labelMappingFile's lines (without their line ends) into fm->labels; and freed. */
int write_read_labels(struct write_format *fm, struct pt_err *e);
void write_free_labels(struct write_format *fm);

#endif
