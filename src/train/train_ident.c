/* The start-up identity check: before any collective moves data, every rank compares what
 * must be equal on all ranks. Ranks given different configs (one per node, MPMD), or a
 * resume that found other files, would otherwise enter collectives with different sizes
 * or counts: a heap overflow, a hang, or a silently wrong model.
 *
 * Each rank describes itself as a list of items (a hash of the exact value and a short
 * text for people); one allgather gives every rank every description, so every rank finds
 * the same first difference and fails with the same message, printed once by rank 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/blob.h"
#include "train/train_run.h"

/* Epochs whose schedules are compared (a longer run repeats its last entries). */
#define IDENT_EPOCHS 4096

/* One item as it travels: the hash, then the text. */
struct ident_wire {
    uint64_t hash;
    char text[TRAIN_IDENT_TEXT];
};

/* The first rank whose item i differs from rank 0's, into e: up to three ranks named. */
static int differs(const struct train_ident *items, size_t i, const struct ident_wire *all,
                   size_t n, int size, struct pt_err *e)
{
    const struct ident_wire *zero = &all[i];
    char msg[PT_ERR_MSG] = "";
    size_t len = 0;
    int named = 0, more = 0;
    for (int k = 1; k < size; k++) {
        const struct ident_wire *w = &all[(size_t)k * n + i];
        if (w->hash == zero->hash)
            continue;
        if (named == 3) {
            more++;
            continue;
        }
        int same_text = strcmp(w->text, zero->text) == 0;
        int m =
            snprintf(msg + len, sizeof msg - len, "%srank %d: %s %s differs from rank 0's %s%s",
                     named ? "; " : "", k, items[i].name, w->text,
                     same_text ? "in its details" : zero->text, same_text ? items[i].details : "");
        if (m > 0)
            len += (size_t)m < sizeof msg - len ? (size_t)m : sizeof msg - len - 1;
        named++;
    }
    if (!named)
        return 0;
    if (more)
        snprintf(msg + len, sizeof msg - len, "; and %d more rank%s", more, more == 1 ? "" : "s");
    return pt_err_set(e, PT_EUSER, "error: %s (every rank must have the same %s)", msg,
                      items[i].name);
}

int train_check_same(struct comm *comm, const struct train_ident *items, size_t n, struct pt_err *e)
{
    int size = comm_size(comm);
    if (size == 1 || n == 0)
        return 0;
    struct ident_wire *mine = calloc(n, sizeof *mine);
    struct ident_wire *all = calloc(n * (size_t)size, sizeof *all);
    int rc = mine && all ? 0 : pt_err_set(e, PT_ENOMEM, "error: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        mine[i].hash = items[i].hash;
        snprintf(mine[i].text, sizeof mine[i].text, "%s", items[i].text);
    }
    rc = train_agree(comm, rc, "to allocate the identity check", e); /* all or none gather */
    if (rc == 0)
        rc = comm_allgather(comm, mine, n * sizeof *mine, all, COMM_BYTE, e);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = differs(items, i, all, n, size, e);
    free(mine);
    free(all);
    return rc;
}

static uint64_t hash_ll(uint64_t h, long long v)
{
    return blob_fnv1a(h, &v, sizeof v);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    return blob_fnv1a(h, s, strlen(s) + 1);
}

static size_t compared_epochs(const struct run *r)
{
    return r->lc.max_epochs < IDENT_EPOCHS ? (size_t)r->lc.max_epochs : IDENT_EPOCHS;
}

/* An integer schedule as given ("64:128:256"), cut to fit. */
static void sched_text(char *buf, size_t size, const struct cfg_val *v)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < v->n && len + 24 < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ":" : "", v->ilist[i]);
    if (v->n == 0 || len + 24 >= size)
        snprintf(buf + len, size - len, "%s", v->n ? "..." : "(none)");
}

/* The parallel method and every setting that shapes its collectives, epoch by epoch (its
 * own words for each epoch, as rank 0 would say them, carry gradientBits and the like). */
static uint64_t method_hash(const struct run *r)
{
    const struct parallel_config *pc = &r->pc;
    uint64_t h = hash_str(BLOB_FNV_START, pc->method->name);
    long long v[] = {pc->start_epoch,      pc->distributed_reading, pc->fp16,
                     pc->hierarchical,     pc->bucket_bytes,        pc->overlap,
                     pc->every_rank_saves, pc->algorithm,           pc->segment_bytes,
                     pc->share_host};
    h = blob_fnv1a(h, v, sizeof v);
    char line[512];
    for (size_t ep = 0; ep < compared_epochs(r); ep++) {
        line[0] = '\0';
        parallel_config_describe(pc, ep, 0, r->workers, line, sizeof line);
        h = hash_str(h, line);
    }
    return h;
}

/* AutoAdjust's settings: its decisions are collective (the criterion check, a rollback). */
static uint64_t adjust_hash(const struct learn_autoadjust *a)
{
    double v[] = {a->mode,
                  a->reduce_if_less,
                  a->decrease,
                  a->increase_if_more,
                  a->increase,
                  a->load_best,
                  a->continue_reduce,
                  (double)a->interval,
                  a->use_cv,
                  a->use_eval,
                  a->auto_mb,
                  (double)a->mb_freq,
                  (double)a->mb_max,
                  (double)a->mb_margin,
                  (double)a->prev_rates,
                  (double)a->best_search_epochs};
    uint64_t h = blob_fnv1a(BLOB_FNV_START, v, sizeof v);
    h = blob_fnv1a(h, a->search_samples, (size_t)a->n_search_samples * sizeof *a->search_samples);
    return blob_fnv1a(h, a->search_mbs, (size_t)a->n_search_mbs * sizeof *a->search_mbs);
}

int run_check_settings(struct run *r, struct pt_err *e)
{
    struct train_ident it[6] = {
        {.name = "maxEpochs", .details = ""},
        {.name = "epochSize", .details = ""},
        {.name = "minibatchSize", .details = " (its schedule)"},
        {.name = "parallelizationMethod",
         .details = " (its settings: gradientBits, parallelizationStartEpoch, ...)"},
        {.name = "makeMode's resumed epoch", .details = ""},
        {.name = "AutoAdjust", .details = " (its settings)"},
    };
    it[0].hash = hash_ll(BLOB_FNV_START, r->lc.max_epochs);
    snprintf(it[0].text, sizeof it[0].text, "%lld", r->lc.max_epochs);
    it[1].hash = hash_ll(BLOB_FNV_START, r->lc.epoch_size);
    snprintf(it[1].text, sizeof it[1].text, "%lld", r->lc.epoch_size);
    it[2].hash = BLOB_FNV_START;
    for (size_t ep = 0; ep < compared_epochs(r); ep++) {
        struct learn_epoch le;
        learn_epoch_params(&r->lc, ep, &le);
        it[2].hash = hash_ll(it[2].hash, (long long)le.mb_size);
    }
    sched_text(it[2].text, sizeof it[2].text, &r->lc.mb_size);
    it[3].hash = method_hash(r);
    snprintf(it[3].text, sizeof it[3].text, "%s", r->pc.method->name);
    it[4].hash = hash_ll(hash_ll(hash_ll(BLOB_FNV_START, (long long)r->resume), r->nothing_to_do),
                         r->start0);
    snprintf(it[4].text, sizeof it[4].text, "%llu%s", (unsigned long long)r->resume,
             r->nothing_to_do ? " (all done)"
             : r->resume      ? ""
             : r->start0      ? " (from modelPath.0)"
                              : " (no model found)");
    it[5].hash = adjust_hash(&r->lc.aa);
    snprintf(it[5].text, sizeof it[5].text, "%s",
             learn_aa_search(&r->lc.aa)  ? "searchBeforeEpoch"
             : learn_aa_after(&r->lc.aa) ? "adjustAfterEpoch"
                                         : "none");
    return train_check_same(r->ctx->comm, it, 6, e);
}

/* The network's description (nn_config_write's canonical text) and its parameter count. */
void train_ident_network(struct nn *net, struct train_ident *it)
{
    const struct nn_config *c = nn_get_config(net);
    static char desc[NN_BS_MAX + 4096];
    nn_config_write(c, desc, sizeof desc);
    size_t n = nn_param_count(net);
    *it = (struct train_ident){.name = "layerSizes",
                               .details = " (layerTypes, criteria or other keys)"};
    it->hash = hash_ll(hash_str(BLOB_FNV_START, desc), (long long)n);
    size_t len = 0;
    for (int i = 0; i < c->nsizes && len + 16 < sizeof it->text; i++)
        len += (size_t)snprintf(it->text + len, sizeof it->text - len, "%s%d", i ? ":" : "",
                                c->sizes[i]);
    snprintf(it->text + len, sizeof it->text - len, " (parameters %zu)", n);
}

/* What a reader found: every rank must see the same data, or their minibatch counts part. */
static void data_item(struct train_ident *it, const char *name, const struct reader *rd)
{
    *it = (struct train_ident){.name = name, .details = " (its chunks: chunkSizeInBytes)"};
    if (!rd) {
        it->hash = hash_ll(BLOB_FNV_START, -1);
        snprintf(it->text, sizeof it->text, "none");
        return;
    }
    long long v[3] = {(long long)reader_sequences(rd), (long long)reader_sweep_samples(rd),
                      (long long)reader_chunks(rd)};
    it->hash = blob_fnv1a(BLOB_FNV_START, v, sizeof v);
    snprintf(it->text, sizeof it->text, "%lld sequences (%lld samples)", v[0], v[1]);
}

int run_check_network(struct run *r, struct pt_err *e)
{
    struct train_ident it[4];
    train_ident_network(r->net, &it[0]);
    data_item(&it[1], "reader data", r->reader);
    data_item(&it[2], "cvReader data", r->cv);
    /* what the network read from files (an embeddingPath): the same path may hold other
     * numbers on another host */
    it[3] =
        (struct train_ident){.name = "network's values from files",
                             .details = " (the files an embeddingPath or initFromFilePath names)"};
    it[3].hash = nn_fixed_values_hash(r->net, BLOB_FNV_START);
    snprintf(it[3].text, sizeof it[3].text, "(checksum %016llx)", (unsigned long long)it[3].hash);
    return train_check_same(r->ctx->comm, it, 4, e);
}
