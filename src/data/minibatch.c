/* Minibatch buffers; see minibatch.h. */
#include "data/minibatch.h"

#include <stdlib.h>
#include <string.h>

struct mb_input *mb_find(struct minibatch *mb, const char *name)
{
    for (int i = 0; i < mb->ninputs; i++)
        if (strcmp(mb->in[i].name, name) == 0)
            return &mb->in[i];
    return NULL;
}

static int shape(struct mb_input *in, size_t nseq, size_t steps, int clear, struct pt_err *e)
{
    size_t n = (size_t)in->dim * steps * nseq;
    if (n > in->cap_data) { /* the old values are not kept: the buffer is cleared below */
        size_t bytes = (n ? n : 1) * sizeof(float);
        float *p = in->host ? in->host->alloc(in->host->ctx, bytes) : realloc(in->data, bytes);
        if (!p)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory (minibatch of %zu values)", n);
        if (in->host && in->data)
            in->host->free(in->host->ctx, in->data);
        in->data = p;
        in->cap_data = n;
    }
    if (nseq > in->cap_len) {
        uint32_t *l = realloc(in->len, (nseq ? nseq : 1) * sizeof *l);
        if (!l)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory (minibatch of %zu sequences)",
                              nseq);
        in->len = l;
        in->cap_len = nseq;
    }
    if (n && clear)
        memset(in->data, 0, n * sizeof *in->data);
    if (nseq)
        memset(in->len, 0, nseq * sizeof *in->len);
    in->steps = steps;
    in->normalized = 0;
    return 0;
}

int mb_input_reset(struct mb_input *in, size_t nseq, size_t steps, struct pt_err *e)
{
    return shape(in, nseq, steps, 1, e);
}

int mb_input_shape(struct mb_input *in, size_t nseq, size_t steps, struct pt_err *e)
{
    return shape(in, nseq, steps, 0, e);
}

void mb_input_pad(struct mb_input *in, size_t nseq)
{
    size_t dim = (size_t)in->dim;
    for (size_t s = 0; s < nseq; s++)
        for (size_t t = in->len[s]; t < in->steps; t++)
            memset(in->data + (t * nseq + s) * dim, 0, dim * sizeof *in->data);
}

void mb_free(struct minibatch *mb)
{
    for (int i = 0; i < CTF_MAX_INPUTS; i++) {
        if (mb->in[i].host && mb->in[i].data)
            mb->in[i].host->free(mb->in[i].host->ctx, mb->in[i].data);
        else
            free(mb->in[i].data);
        free(mb->in[i].len);
        mb->in[i].data = NULL;
        mb->in[i].len = NULL;
        mb->in[i].cap_data = mb->in[i].cap_len = 0;
    }
    free(mb->cont);
    mb->cont = NULL;
    mb->cap_cont = 0;
    free(mb->begins);
    mb->begins = NULL;
    mb->cap_begins = 0;
}
