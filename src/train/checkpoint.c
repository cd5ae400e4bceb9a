/* Checkpoints: the learner state and counters next to each epoch's model (SPEC 8), and
 * the checks of a makeMode restart: the network it resumes is the one configured, and a
 * checkpoint that exists is restored whole or the run stops (never silently dropped). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/blob.h"
#include "math/backend.h"
#include "parallel/parallel.h"
#include "train/train_internal.h"

static const char ckp_magic[8] = {'P', 'T', 'C', 'K', 'P', 'T', 0, 1};
#define CKP_VERSION 1

void ckp_path(char *buf, size_t size, const char *model_path, uint64_t epoch)
{
    snprintf(buf, size, "%s.%llu.ckp", model_path, (unsigned long long)epoch);
}

#define CKP_MAX_ENGINE 4

/* Section tag from n floats at x, device memory of b (NULL: host memory). */
static int write_floats(struct blob_writer *w, const char *tag, struct backend *b, float *x,
                        size_t n, struct pt_err *e)
{
    struct bk_stage st = {0};
    float *h = x;
    int rc = b ? bk_stage_out(b, &st, x, 0, n, &h, e) : 0;
    if (rc == 0)
        rc = blob_write_section(w, tag, h, n * sizeof *h, e);
    bk_stage_free(&st);
    return rc;
}

int ckp_save(const char *path, const struct ckp_state *st, const struct learner *l,
             struct engine *en, struct pt_err *e)
{
    struct engine_state es[CKP_MAX_ENGINE];
    size_t nes = en && en->ops->state ? en->ops->state(en, es, CKP_MAX_ENGINE) : 0;
    struct blob_writer w;
    uint64_t meta[5] = {st->epochs_done, st->samples_seen, st->dropout_state, (uint64_t)l->type,
                        (uint64_t)l->n};
    int64_t steps = l->steps;
    int rc = blob_write_begin(&w, path, ckp_magic, CKP_VERSION, e);
    if (rc == 0)
        rc = blob_write_section(&w, "meta", meta, sizeof meta, e);
    if (rc == 0)
        rc = blob_write_section(&w, "steps", &steps, sizeof steps, e);
    if (rc == 0)
        rc = write_floats(&w, "learner.s1", l->bk, l->s1, l->n, e);
    if (rc == 0 && l->s2)
        rc = write_floats(&w, "learner.s2", l->bk, l->s2, l->n, e);
    if (rc == 0 && l->s3)
        rc = write_floats(&w, "learner.s3", l->bk, l->s3, l->n, e);
    if (rc == 0 && l->type == LEARN_FSADAGRAD)
        rc = blob_write_section(&w, "learner.count", &l->count, sizeof l->count, e);
    if (rc == 0)
        rc = blob_write_section(&w, "autoadjust", &st->adjust, sizeof st->adjust, e);
    for (size_t i = 0; rc == 0 && i < nes; i++)
        rc = write_floats(&w, es[i].tag, es[i].bk, es[i].data, es[i].n, e);
    if (rc == 0)
        return blob_write_commit(&w, e);
    blob_write_abort(&w);
    return rc;
}

static int take(const struct blob *b, const char *tag, void *dst, size_t len, const char *path,
                struct pt_err *e)
{
    const struct blob_section *s = blob_find(b, tag);
    if (!s || s->len != len)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: checkpoint does not fit this training "
                          "(section '%s' %s)",
                          path, tag, s ? "has another size" : "missing");
    memcpy(dst, s->data, len);
    return 0;
}

/* Section tag into n floats at x, device memory of b (NULL: host memory). */
static int take_floats(const struct blob *bl, const char *tag, struct backend *b, float *x,
                       size_t n, const char *path, struct pt_err *e)
{
    struct bk_stage st = {0};
    float *h = x;
    int rc = b ? bk_stage_for_write(b, &st, x, n, &h, e) : 0;
    if (rc == 0)
        rc = take(bl, tag, h, n * sizeof *h, path, e);
    if (rc == 0 && b)
        rc = bk_stage_in(b, x, h, 0, n, e);
    bk_stage_free(&st);
    return rc;
}

/* The engine's sections: all there (1), none there (-1), or the engine keeps none (0). */
static int take_engine(const struct blob *b, struct engine *en, const char *path, int *status,
                       struct pt_err *e)
{
    struct engine_state es[CKP_MAX_ENGINE];
    size_t nes = en && en->ops->state ? en->ops->state(en, es, CKP_MAX_ENGINE) : 0;
    size_t found = 0;
    for (size_t i = 0; i < nes; i++)
        found += blob_find(b, es[i].tag) != NULL;
    *status = nes == 0 ? 0 : found == 0 ? -1 : 1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && found > 0 && i < nes; i++)
        rc = take_floats(b, es[i].tag, es[i].bk, es[i].data, es[i].n, path, e);
    return rc;
}

int ckp_load(const char *path, struct ckp_state *st, struct learner *l, struct engine *en,
             int *engine_state, struct pt_err *e)
{
    *engine_state = 0;
    struct blob b;
    int rc = blob_read(path, ckp_magic, CKP_VERSION, "checkpoint", &b, e);
    if (rc)
        return rc;
    uint64_t meta[5];
    int64_t steps = 0;
    rc = take(&b, "meta", meta, sizeof meta, path, e);
    if (rc == 0 && (meta[3] != (uint64_t)l->type || meta[4] != (uint64_t)l->n))
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: checkpoint is for another network or learner "
                        "(%llu parameters, learner %llu; this run: %zu, %d)",
                        path, (unsigned long long)meta[4], (unsigned long long)meta[3], l->n,
                        (int)l->type);
    if (rc == 0)
        rc = take(&b, "steps", &steps, sizeof steps, path, e);
    if (rc == 0)
        rc = take_floats(&b, "learner.s1", l->bk, l->s1, l->n, path, e);
    if (rc == 0 && l->s2)
        rc = take_floats(&b, "learner.s2", l->bk, l->s2, l->n, path, e);
    if (rc == 0 && l->s3)
        rc = take_floats(&b, "learner.s3", l->bk, l->s3, l->n, path, e);
    double count = 0;
    if (rc == 0 && l->type == LEARN_FSADAGRAD)
        rc = take(&b, "learner.count", &count, sizeof count, path, e);
    struct ckp_adjust adj = {0};
    int has_adj = blob_find(&b, "autoadjust") != NULL;
    if (rc == 0 && has_adj)
        rc = take(&b, "autoadjust", &adj, sizeof adj, path, e);
    if (rc == 0)
        rc = take_engine(&b, en, path, engine_state, e);
    if (rc == 0) {
        st->adjust = adj;
        st->has_adjust = has_adj;
        st->epochs_done = meta[0];
        st->samples_seen = meta[1];
        st->dropout_state = meta[2];
        l->steps = steps;
        l->count = count;
    }
    blob_free(&b);
    return rc;
}

/* "2:16:2 (SIMPLENET; Tanh)" or "28:64:10 (LSTM)". */
static void network_str(const struct nn_config *c, char *buf, size_t size)
{
    static const char *const act[] = {"None", "Sigmoid", "Tanh", "RectifiedLinear"};
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->nsizes && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%d", i ? ":" : "", c->sizes[i]);
    if (o < size)
        o += (size_t)snprintf(buf + o, size - o, " (%s",
                              c->rnn == NN_LSTM ? "LSTM" : "SIMPLENET; layerTypes ");
    for (int i = 0; c->rnn != NN_LSTM && i + 2 < c->nsizes && o < size; i++) {
        unsigned a = (unsigned)c->acts[i];
        o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ":" : "",
                              a < sizeof act / sizeof act[0] ? act[a] : "?");
    }
    if (o < size)
        snprintf(buf + o, size - o, ")");
}

int ckp_check_network(const char *model, const struct nn_config *have, const struct nn_config *want,
                      struct pt_err *e)
{
    int same = have->rnn == want->rnn && have->nsizes == want->nsizes &&
               memcmp(have->sizes, want->sizes, (size_t)want->nsizes * sizeof *want->sizes) == 0;
    if (want->rnn == NN_GRAPH) {
        if (have->rnn == NN_GRAPH && !strcmp(have->bs_text, want->bs_text) &&
            !strcmp(have->bs_root, want->bs_root))
            return 0;
        return pt_err_set(e, PT_EUSER,
                          "%s: error: the configured BrainScript network is not the one makeMode "
                          "would resume from '%s' (and its checkpoint); remove that run's model "
                          "and checkpoint files or set makeMode=false to start afresh",
                          want->origin, model);
    }
    for (int i = 0; same && want->rnn != NN_LSTM && i + 2 < want->nsizes; i++)
        same = have->acts[i] == want->acts[i];
    if (same)
        return 0;
    char a[512], b[512];
    network_str(want, a, sizeof a);
    network_str(have, b, sizeof b);
    return pt_err_set(e, PT_EUSER,
                      "%s: error: the configured network %s is not the one makeMode would resume "
                      "from '%s' (and its checkpoint): %s; remove that run's model and checkpoint "
                      "files or set another modelPath",
                      want->origin[0] ? want->origin : model, a, model, b);
}

int ckp_resume(const char *model, uint64_t done, struct ckp_state *st, struct learner *l,
               struct engine *en, struct pt_log *log, int *engine_state, struct pt_err *e)
{
    char path[4300], older[4300];
    struct stat sb;
    *engine_state = 0;
    ckp_path(path, sizeof path, model, done);
    if (stat(path, &sb) != 0 && errno == ENOENT) { /* SPEC 8: a warning, the state reset */
        if (log)
            pt_log_printf(log,
                          "warning: checkpoint '%s' not found: continuing from %s.%llu without "
                          "its checkpoint: learner state reset\n",
                          path, model, (unsigned long long)done);
        learner_reset(l);
        st->epochs_done = done;
        return 0;
    }
    int rc = ckp_load(path, st, l, en, engine_state, e);
    if (rc == 0)
        return 0;
    /* Stop rather than train on without the state the user kept: say how to go on. */
    ckp_path(older, sizeof older, model, done - 1);
    if (done > 1 && access(older, R_OK) == 0)
        pt_err_context(e,
                       "makeMode stops here: remove the checkpoint to continue from %s.%llu "
                       "with the learner state reset, or remove %s.%llu and its checkpoint to "
                       "resume from epoch %llu ('%s')",
                       model, (unsigned long long)done, model, (unsigned long long)done,
                       (unsigned long long)(done - 1), older);
    else
        pt_err_context(e,
                       "makeMode stops here: remove the checkpoint to continue from %s.%llu "
                       "with the learner state reset",
                       model, (unsigned long long)done);
    return rc;
}

void train_mark_labels(const struct nn_config *nc, struct reader_config *rc,
                       struct reader_config *cv)
{
    int ev = nc->eval_crit == BK_CRIT_CE_SOFTMAX || nc->eval_crit == BK_CRIT_CLASS_ERR;
    const char *crit = nc->train_crit == BK_CRIT_CE_SOFTMAX ? nc->train_name
                       : ev                                 ? nc->eval_name
                                                            : NULL;
    if (!crit)
        return;
    char why[80];
    snprintf(why, sizeof why, "the criterion %s", crit);
    const char *labels = nc->labels_input[0] ? nc->labels_input : "labels";
    reader_config_one_hot(rc, labels, why);
    if (cv)
        reader_config_one_hot(cv, labels, why);
}
