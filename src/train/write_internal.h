/* action=write's settings, shared by its schema (write_schema.c: the keys, the format
 * block, labelMappingFile) and the writer (write_output.c). */
#ifndef PT_TRAIN_WRITE_INTERNAL_H
#define PT_TRAIN_WRITE_INTERNAL_H

#include <stddef.h>

#include "core/err.h"
#include "parsers/schema.h"

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
    char output[4096];
    long long mb_size, epoch_size;
    struct cfg_val nodes; /* outputNodeNames */
    struct write_format fmt;
};

/* precisionFormat "W.P", "W", ".P" (digits): width and precision of %f (-1: default). */
void write_precision_parse(const char *s, int *width, int *prec);
/* labelMappingFile's lines (without their line ends) into fm->labels; and freed. */
int write_read_labels(struct write_format *fm, struct pt_err *e);
void write_free_labels(struct write_format *fm);

#endif
