/* The sweep order and ownership; see timeline.h for the steps. */
#include "reader/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "core/rng.h"

void tl_sweep_free(struct tl_sweep *s)
{
    free(s->order);
    free(s->key);
    s->order = s->key = NULL;
    s->n = 0;
}

static int file_order(const struct tl_source *src, struct tl_sweep *out)
{
    for (size_t i = 0; i < src->nseq; i++) {
        out->order[i] = (uint32_t)i;
        out->key[i] = (uint32_t)i;
    }
    return 0;
}

static size_t chunk_samples(const struct tl_source *src, uint32_t c)
{
    size_t n = 0;
    for (size_t i = src->chunk_first[c]; i < src->chunk_first[c + 1]; i++)
        n += src->seq_samples[i];
    return n;
}

static int randomized(const struct tl_source *src, const struct tl_params *p, uint64_t sweep,
                      struct tl_sweep *out, struct pt_err *e)
{
    uint32_t *chunks = malloc((src->nchunks ? src->nchunks : 1) * sizeof *chunks);
    if (!chunks)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (chunk order)");
    for (size_t c = 0; c < src->nchunks; c++)
        chunks[c] = (uint32_t)c;
    struct pt_rng rng;
    pt_rng_seed(&rng, p->seed, sweep, 0);
    pt_rng_shuffle_u32(&rng, chunks, src->nchunks);
    size_t k = 0, window = 0;
    for (size_t pos = 0; pos < src->nchunks; window++) {
        /* one randomization window: [pos, end) of the shuffled chunks */
        size_t start_k = k, end = pos, samples = 0;
        while (end < src->nchunks &&
               (p->sample_window ? (end == pos || samples < p->window) : end - pos < p->window)) {
            uint32_t c = chunks[end];
            samples += chunk_samples(src, c);
            for (size_t i = src->chunk_first[c]; i < src->chunk_first[c + 1]; i++) {
                out->order[k] = (uint32_t)i;
                out->key[k++] = (uint32_t)end; /* the chunk's position after the shuffle */
            }
            end++;
        }
        /* shuffle sequences (with their keys) inside the window */
        struct pt_rng wr;
        pt_rng_seed(&wr, p->seed, sweep, 1 + window);
        for (size_t i = k - start_k; i > 1; i--) {
            size_t j = start_k + (size_t)pt_rng_below(&wr, i), last = start_k + i - 1;
            uint32_t t = out->order[last];
            out->order[last] = out->order[j];
            out->order[j] = t;
            t = out->key[last];
            out->key[last] = out->key[j];
            out->key[j] = t;
        }
        pos = end;
    }
    free(chunks);
    return 0;
}

int tl_sweep_build(const struct tl_source *src, const struct tl_params *p, uint64_t sweep,
                   struct tl_sweep *out, struct pt_err *e)
{
    size_t n = src->nseq ? src->nseq : 1;
    if (out->n != src->nseq || !out->order) {
        tl_sweep_free(out);
        out->order = malloc(n * sizeof *out->order);
        out->key = malloc(n * sizeof *out->key);
        if (!out->order || !out->key) {
            tl_sweep_free(out);
            return pt_err_set(e, PT_ENOMEM, "error: out of memory (sweep order of %zu)", n);
        }
        out->n = src->nseq;
    }
    if (!p->randomize || src->nchunks == 0)
        return file_order(src, out);
    return randomized(src, p, sweep, out, e);
}
