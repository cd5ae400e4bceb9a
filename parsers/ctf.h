/* CNTK text format (CTF), one line at a time.
 *
 *   [seqId] |alias v v v ... |alias i:v i:v ... |# comment ...
 *
 * A line adds at most one row to each input it names. Dense rows hold `dim` values (fewer
 * are zero-padded and counted in ctf_row_stats.padded; more are an error). Sparse rows hold
 * index:value pairs with index < dim. Unknown aliases are skipped; `|#` starts a comment
 * that runs to the next '|' or the end of the line. Numbers are parsed without strtod on
 * the common path (at least 100 MB/s of dense text per core).
 *
 * Pure: no I/O, no allocation except growing the caller's ctf_column buffers. */
#ifndef PT_PARSERS_CTF_H
#define PT_PARSERS_CTF_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define CTF_MAX_INPUTS 16

/* One declared input stream. */
struct ctf_input {
    const char *alias; /* the name after '|' in the file */
    int dim;
    int sparse;
};

/* Values of one input, appended row by row. Dense: val has rows*dim entries. Sparse: val
 * and idx have nnz entries; row_end[r] is the nnz count after row r. Owned by the caller
 * (free with ctf_column_free); buffers grow as needed. */
struct ctf_column {
    float *val;
    int32_t *idx;
    uint32_t *row_end;
    size_t rows, nnz;
    size_t cap_val, cap_idx, cap_rows;
};

/* What a line held. */
struct ctf_line {
    int has_id;
    uint64_t id;
    int empty;       /* blank or comment-only line: no rows */
    unsigned rows;   /* bit i set: input i got a row */
    unsigned padded; /* bit i set: input i was zero-padded */
};

/* Where the line is, for messages: "file:line:col: error: ...". */
struct ctf_where {
    const char *file;
    size_t line;
};

/* Parse line s[0..len) (no newline; a trailing '\r' is ignored). ids: 1 when lines start
 * with a sequence id, 0 when not (then a leading number is an error). On error nothing is
 * appended to any column (the line is rolled back) and e names file:line:col. */
int ctf_parse_line(const struct ctf_input *inputs, int ninputs, struct ctf_column *cols,
                   const char *s, size_t len, int ids, const struct ctf_where *at,
                   struct ctf_line *out, struct pt_err *e);

/* Parse a decimal number at p (before end); on success *out is set and the return points
 * just past it, else NULL. Accepts [+-]digits[.digits][(e|E)[+-]digits] and .5 forms. */
const char *ctf_parse_float(const char *p, const char *end, float *out);

void ctf_column_free(struct ctf_column *c);
/* Drop all rows (keep the buffers). */
void ctf_column_clear(struct ctf_column *c);
/* Append src's rows to dst (both of one input; sparse: their nonzeros, dense: dim values a
 * row). */
int ctf_column_append(struct ctf_column *dst, const struct ctf_column *src, int dim, int sparse,
                      struct pt_err *e);
/* Release the buffers' unused capacity (keeps the rows). */
void ctf_column_shrink(struct ctf_column *c, int dim, int sparse);

#endif
