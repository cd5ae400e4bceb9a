/* Fuzz target for CNTK's LMSequenceReader (src/reader/lm.h: lm_config.c, lm_reader.c). The
 * input is two header bytes, then the word-class file, a 0 byte, and the text:
 *
 *   byte 0: bits 0-1 nbruttsineachrecurrentiter (0 .. 3), bits 2-7 minibatchSize - 1 (1 .. 64)
 *   byte 1: bits 0-5 labelIn's labelDim - 1 (1 .. 64), the words the word-class file must
 *           have; bit 6 cacheBlockSize 1 (a line a block) or CNTK's 50000; bit 7 epochSize
 *           0 (a sweep) or 5 samples
 *
 * (no 0 byte: all the word-class file, the text empty). Both are written to files and read
 * through a reader config, as a config file gives it; two epochs are read on one worker and
 * as ranks 0 and 1 of two, each until its end. An error is a fine outcome; a crash, leak,
 * hang or sanitizer report is not, nor is a minibatch that breaks lm.h's rules: an epoch
 * that never ends (more minibatches than samples), samples other than a sweep's (or past
 * epochSize by more than a minibatch), ranks' shares that do not add up, a minibatch beyond
 * what minibatchSize and nbruttsineachrecurrentiter allow, a step's word not one-hot or not
 * the last step's target, a target outside its class's words. Built by
 * scripts/fuzz.sh with libFuzzer; tests/fuzz_regress.sh replays kept inputs with the same
 * harness. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parsers/cfg.h"
#include "reader/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && (n == 0 || fwrite(p, 1, n, f) == n);
    if (f)
        ok &= fclose(f) == 0;
    return ok;
}

static void fail(const char *what, size_t epoch, int rank, int workers)
{
    fprintf(stderr, "fuzz_lm: epoch %zu, rank %d of %d: %s\n", epoch, rank, workers, what);
    abort();
}

/* This rank's sequences of mb (of `workers`) against lm.h's rules: sentences of one length,
 * with nbruttsineachrecurrentiter = 0 whole and as many as stay under minibatchSize words
 * (or one), else at most N in pieces of at most minibatchSize steps (mb->cont where they are
 * cut); each step's word one-hot and the last step's target, each target inside its class's
 * words [first, end). */
static int mb_ok(const struct minibatch *mb, const struct reader_config *rc, size_t mb_size,
                 int workers)
{
    const struct mb_input *x = &mb->in[rc->lm.features], *y = &mb->in[rc->lm.labels];
    size_t vocab = (size_t)rc->lm.vocab, samples = 0, n = rc->lm.nbrutts;
    if (x->dim != rc->lm.vocab || y->dim != 4)
        return 0;
    if (mb->nseq &&
        (n ? x->steps > mb_size || (workers == 1 && mb->nseq > n)
           : mb->cont || (workers == 1 && mb->nseq > 1 && mb->nseq * (x->steps + 1) >= mb_size)))
        return 0;
    for (size_t s = 0; s < mb->nseq; s++) {
        if (x->len[s] != y->len[s] || x->len[s] != x->steps)
            return 0;
        samples += x->len[s];
        for (size_t t = 0; t < x->len[s]; t++) {
            const float *col = x->data + (t * mb->nseq + s) * vocab;
            const float *l = y->data + (t * mb->nseq + s) * 4;
            size_t hot = vocab, ones = 0;
            for (size_t k = 0; k < vocab; k++)
                if (col[k] == 1.0f)
                    hot = k, ones++;
                else if (col[k] != 0.0f)
                    return 0;
            if (ones != 1 || !(l[2] <= l[0] && l[0] < l[3] && l[3] <= (float)vocab))
                return 0;
            if (t > 0 && (float)hot != y->data[((t - 1) * mb->nseq + s) * 4])
                return 0;
        }
    }
    return samples == mb->samples;
}

/* One epoch to its end (or an error, a fine outcome: 1): its global and this rank's samples. */
static int run_epoch(struct reader *r, const struct reader_config *rc, size_t epoch,
                     size_t epoch_size, int rank, int workers, size_t mb_size, struct minibatch *mb,
                     uint64_t *global, uint64_t *local, struct pt_err *e)
{
    size_t sweep = reader_sweep_samples(r), count = 0;
    uint64_t last = 0;
    *global = *local = 0;
    if (reader_start_epoch(r, epoch, epoch_size, rank, workers, e))
        return 1;
    for (;;) {
        if (reader_next(r, mb_size, mb, e))
            return 1;
        if (!mb->global_samples)
            break;
        if (++count > sweep) /* every minibatch has a sample */
            fail("the epoch does not end", epoch, rank, workers);
        if (mb->samples > mb->global_samples || !mb_ok(mb, rc, mb_size, workers))
            fail("a minibatch breaks lm.h's rules", epoch, rank, workers);
        last = *global;
        *global += mb->global_samples;
        *local += mb->samples;
    }
    if (*global > sweep ||
        (epoch_size ? last > epoch_size || (*global <= epoch_size && *global != sweep)
                    : *global != sweep))
        fail("the epoch's samples are not a sweep's, nor end past epochSize", epoch, rank, workers);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char vocab[64], text[64];
    if (!vocab[0]) {
        snprintf(vocab, sizeof vocab, "/tmp/fuzz_lm_vocab.%ld", (long)getpid());
        snprintf(text, sizeof text, "/tmp/fuzz_lm_text.%ld", (long)getpid());
    }
    if (size < 2)
        return 0;
    int nbrutts = data[0] & 3, label_dim = (data[1] & 63) + 1;
    size_t mb_size = (size_t)(data[0] >> 2) + 1, epoch_size = data[1] & 128 ? 5 : 0;
    const uint8_t *wc = data + 2, *nul = memchr(wc, 0, size - 2);
    size_t nwc = nul ? (size_t)(nul - wc) : size - 2;
    if (!write_file(vocab, wc, nwc) ||
        !write_file(text, nul ? nul + 1 : wc, nul ? size - 2 - nwc - 1 : 0)) {
        unlink(vocab);
        return 0;
    }
    char conf[512];
    snprintf(conf, sizeof conf,
             "reader = [ readerType = \"LMSequenceReader\"; file = \"%s\"; wordclass = \"%s\"\n"
             "  nbruttsineachrecurrentiter = %d; cacheBlockSize = %d\n"
             "  features = [ dim = 0 ]\n"
             "  labelIn = [ labelType = \"Category\"; labelDim = %d ]\n"
             "  labels = [ labelType = \"NextWord\" ] ]\n",
             text, vocab, nbrutts, data[1] & 64 ? 50000 : 1, label_dim);
    struct pt_err e;
    pt_err_clear(&e);
    struct cfg *c = cfg_new();
    struct cfg_node *block = NULL;
    static struct reader_config rc; /* large: not on the stack */
    struct reader *r = NULL;
    int rcode = !c || cfg_load_string(c, "lm.cfg", conf, strlen(conf), &e) ||
                cfg_find_block(cfg_root(c), "reader", &block, &e) || !block ||
                reader_config_read(block, &rc, &e) || reader_open(&rc, NULL, &r, &e);
    if (rcode == 0 && (!rc.lm.on || rc.lm.nbrutts != nbrutts || rc.lm.vocab != label_dim))
        fail("the config was not read as written", 0, 0, 1);
    uint64_t global[3], local[3];
    struct minibatch mb;
    memset(&mb, 0, sizeof mb);
    int done = 0; /* the passes run to their end */
    for (size_t epoch = 0; rcode == 0 && epoch < 2; epoch++) {
        rcode =
            run_epoch(r, &rc, epoch, epoch_size, 0, 1, mb_size, &mb, &global[0], &local[0], &e) ||
            run_epoch(r, &rc, epoch, epoch_size, 0, 2, mb_size, &mb, &global[1], &local[1], &e) ||
            run_epoch(r, &rc, epoch, epoch_size, 1, 2, mb_size, &mb, &global[2], &local[2], &e);
        if (rcode == 0 && (local[0] != global[0] || global[1] != global[0] ||
                           global[2] != global[0] || local[1] + local[2] != global[0]))
            fail("the ranks' shares are not the one worker's minibatches", epoch, 1, 2);
        done += rcode == 0;
    }
    if (getenv("FUZZ_VERBOSE") && (rcode || !r)) /* what a seed does: the error, or its samples */
        fprintf(stderr, "%s\n", e.msg[0] ? e.msg : "error");
    else if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "%zu sentences, %zu samples a sweep, %d epochs\n", reader_sequences(r),
                reader_sweep_samples(r), done);
    mb_free(&mb);
    reader_close(r);
    cfg_free(c);
    unlink(vocab);
    unlink(text);
    return 0;
}
