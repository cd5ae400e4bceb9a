/* A small deterministic speech corpus in CNTK's HTK formats (tests/htk_gen.c). */
#ifndef PT_TESTS_HTK_GEN_H
#define PT_TESTS_HTK_GEN_H

#include <stddef.h>
#include <stdint.h>

struct htk_gen {
    /* options */
    int utts, dim, classes;
    uint64_t seed;
    int compressed, little, files, baddur, nolabel, frames, nostates, binmlf;
    /* what htk_gen_write made: utterance u has len[u] frames, classes cls[off[u] ..] */
    uint32_t *len;
    uint64_t *off;
    uint32_t *cls;
};

/* Write the corpus into directory dir (which exists); -1 on failure. */
int htk_gen_write(struct htk_gen *g, const char *dir);
/* Value i of frame t of utterance u, as the files hold it. */
float htk_gen_value(const struct htk_gen *g, size_t u, uint32_t t, int i);
void htk_gen_free(struct htk_gen *g);

#endif
