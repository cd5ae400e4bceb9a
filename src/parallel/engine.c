/* ParallelTrain's configuration (read through the schemas), the engine factory (the
 * method's registry row builds it), the None engine (nothing to do: the local gradient is
 * the gradient) and the statistics every engine reports (syncPerfStats lines,
 * perfStatsFile JSON lines). The methods live in their own files (dpsgd.c, masgd.c,
 * asgd.c), each with its registry row. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/fs.h"
#include "core/timer.h"
#include "parallel/parallel.h"

int engine_read_block(struct cfg_node *pt, const struct cfg_schema *s, void *config, int *found,
                      struct pt_err *e)
{
    struct cfg_node *blk = NULL;
    int rc = pt ? cfg_find_block(pt, s->name, &blk, e) : 0;
    if (found)
        *found = blk != NULL;
    return rc ? rc : cfg_schema_read(blk ? blk : pt, s, config, e);
}

/* timelineFile without a ParallelTrain block: looked up from SGD outwards, as it would be
 * from the block (a key of every run, not only of parallel ones). */
static int read_timeline_key(struct cfg_node *sgd, struct parallel_config *pc, struct pt_err *e)
{
    struct cfg_val v = {0};
    int rc = cfg_schema_get(sgd, &parallel_train_schema, "timelineFile", &v, e);
    if (rc == 0 && v.node && v.s) {
        if (strlen(v.s) >= sizeof pc->timeline_file)
            rc = cfg_error(e, cfg_value_origin(v.node), "timelineFile: path too long");
        else
            snprintf(pc->timeline_file, sizeof pc->timeline_file, "%s", v.s);
    }
    cfg_val_free(&v);
    return rc;
}

int parallel_find_block(struct cfg_node *sgd, struct cfg_node **pt, struct pt_err *e)
{
    return cfg_find_inner_block(sgd, "ParallelTrain", pt, e);
}

int parallel_config_read(struct cfg_node *sgd, struct parallel_config *pc, struct pt_err *e)
{
    memset(pc, 0, sizeof *pc);
    struct cfg_node *pt = NULL;
    int rc = sgd ? parallel_find_block(sgd, &pt, e) : 0;
    if (rc == 0) /* no ParallelTrain block: its defaults (method None) */
        rc = cfg_schema_read(pt, &parallel_train_schema, pc, e);
    if (rc == 0 && !pt && sgd) /* a one-worker run's timeline, set further out */
        rc = read_timeline_key(sgd, pc, e);
    if (rc)
        return rc;
    const struct engine_method *m = pc->method;
    if (m->config_size && !(pc->method_config = calloc(1, m->config_size)))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    if (m->read)
        return m->read(pt, pc->method_config, e);
    return m->schema ? engine_read_block(pt, m->schema, pc->method_config, NULL, e) : 0;
}

void parallel_config_free(struct parallel_config *pc)
{
    if (pc->method_config && pc->method->schema)
        cfg_schema_free(pc->method->schema, pc->method_config);
    free(pc->method_config);
    pc->method_config = NULL;
}

int parallel_config_epoch_on(const struct parallel_config *pc, size_t epoch)
{
    return pc->method != &parallel_none_method && (long long)epoch + 1 >= pc->start_epoch;
}

size_t parallel_config_describe(const struct parallel_config *pc, size_t epoch, int rank,
                                int workers, char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    if (pc->method->describe)
        pc->method->describe(pc, epoch, rank, workers, buf, size);
    return strlen(buf);
}

/* ------------------------------------------------------------------ None */

/* Nothing to do: the local gradient is the gradient. */
static void none_destroy(struct engine *en)
{
    free(en);
}

static const struct engine_ops none_ops = {.name = "None", .destroy = none_destroy};

static int none_new(const struct parallel_config *pc, struct engine **out, struct pt_err *e)
{
    (void)pc;
    struct engine *en = calloc(1, sizeof *en);
    if (!en)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    en->ops = &none_ops;
    *out = en;
    return 0;
}

/* One rank, or parallel training not configured. */
const struct engine_method parallel_none_method = {.name = "None", .new = none_new};

/* ------------------------------------------------------------------ calls */

int engine_start_epoch(struct engine *en, size_t epoch, struct pt_err *e)
{
    en->epoch = epoch;
    en->minibatch = 0;
    /* the first sync's compute time counts from here, not across validation and saving */
    en->perf.last_end = pt_now();
    if (!en->ops->start_epoch)
        return 0;
    engine_mark_start(en);
    int rc = en->ops->start_epoch(en, epoch, e);
    engine_mark(en, PT_TRACE_COMM, "epoch start", -1);
    return rc;
}

int engine_after_backward(struct engine *en, float *grads, double stats[PT_STATS], struct pt_err *e)
{
    return en->ops->after_backward ? en->ops->after_backward(en, grads, stats, e) : 0;
}

int engine_keeps_gradient(struct engine *en)
{
    if (!en->ops->after_backward)
        return 1;
    return en->ops->keeps_gradient ? en->ops->keeps_gradient(en) : 0;
}

int engine_can_share(struct engine *en)
{
    return en->ops->after_backward && en->ops->can_share && en->ops->can_share(en);
}

void engine_share(struct engine *en, float *params)
{
    en->shared = 1;
    en->layout.params = params;
}

int engine_flush(struct engine *en, float *grads, double stats[PT_STATS], struct pt_err *e)
{
    return en->ops->flush ? en->ops->flush(en, grads, stats, e) : 0;
}

int engine_after_update(struct engine *en, size_t samples, struct pt_err *e)
{
    if (en->slow_seconds > 0) { /* a slow worker: burns the core as slow compute would */
        engine_mark_start(en);
        double until = pt_now() + en->slow_seconds;
        while (pt_now() < until)
            continue;
        engine_mark(en, PT_TRACE_COMPUTE, "slow (testSlowSeconds)", -1);
    }
    return en->ops->after_update ? en->ops->after_update(en, samples, e) : 0;
}

int engine_end_epoch(struct engine *en, double tally[PT_STATS], struct pt_err *e)
{
    en->minibatch = 0;
    return en->ops->end_epoch ? en->ops->end_epoch(en, tally, e) : 0;
}

/* ------------------------------------------------------------------ common */

void engine_perf_sync(struct engine *en, double t_start, double t_end, double exposed, double wait,
                      double bytes, double samples, int bits, int print, const char *extra)
{
    struct engine_perf *p = &en->perf;
    double compute = p->last_end > 0 ? t_start - p->last_end : 0.0;
    p->syncs++;
    p->comm_seconds += exposed;
    p->last_end = t_end;
    p->last_bytes = bytes;
    if (print && en->log && p->every > 0 && p->syncs % p->every == 0)
        pt_log_often(en->log, "\t\tActual gradient aggregation time: %.6g\n", t_end - t_start);
    if (p->file)
        fprintf(p->file,
                "{\"method\":\"%s\",\"rank\":%d,\"epoch\":%zu,\"sync\":%lld,\"compute_s\":%.6g,"
                "\"comm_s\":%.6g,\"wait_s\":%.6g,\"bytes_sent\":%.0f,\"samples\":%.0f,"
                "\"bits\":%d%s}\n",
                en->ops->name, comm_rank(en->comm), en->epoch + 1, p->syncs, compute,
                t_end - t_start, wait, bytes, samples, bits, extra);
}

void engine_mark_start(struct engine *en)
{
    if (en->timeline)
        en->mark = pt_now();
}

void engine_mark(struct engine *en, int lane, const char *name, double bytes)
{
    if (!en->timeline)
        return;
    double now = pt_now();
    struct pt_trace_arg a[PT_TRACE_ARGS] = {{"epoch", (double)en->epoch + 1},
                                            {"sync", (double)en->perf.syncs + 1}};
    int n = 2;
    if (en->minibatch > 0)
        a[n++] = (struct pt_trace_arg){"mb", (double)en->minibatch};
    if (bytes >= 0)
        a[n++] = (struct pt_trace_arg){"bytes", bytes};
    pt_trace_span(en->timeline, lane, name, en->mark, now, a, n);
    en->mark = now;
}

int engine_perf_open(const struct parallel_config *pc, int rank, FILE **out, struct pt_err *e)
{
    *out = NULL;
    if (!pc->perf_file[0])
        return 0;
    char name[4200];
    if (rank == 0)
        snprintf(name, sizeof name, "%s", pc->perf_file);
    else
        snprintf(name, sizeof name, "%s.rank%d", pc->perf_file, rank);
    if (pt_make_parent_dirs(name, e))
        return pt_err_context(e, "while creating perfStatsFile '%s'", name);
    /* never through a symlink to a file; a device (/dev/null) is fine */
    struct pt_err why;
    pt_err_clear(&why);
    if (pt_fs_open_stream(name, out, &why))
        return pt_err_set(e, why.code, "error: cannot write perfStatsFile '%s': %s", name, why.msg);
    setvbuf(*out, NULL, _IOLBF, 0);
    return 0;
}

int engine_new(const struct parallel_config *pc, struct comm *comm, struct pt_log *log,
               const struct engine_layout *layout, struct engine **out, struct pt_err *e)
{
    *out = NULL;
    struct engine *en = NULL;
    int rc = pc->method->new (pc, &en, e);
    if (rc) {
        if (en)
            en->ops->destroy(en);
        return rc;
    }
    en->comm = comm;
    en->log = log;
    en->layout = *layout;
    en->perf.every = pc->sync_perf_stats;
    if (pc->slow_rank == comm_rank(comm))
        en->slow_seconds = pc->slow_seconds;
    rc = engine_perf_open(pc, comm_rank(comm), &en->perf.file, e);
    if (rc == 0 && pc->method->setup)
        rc = pc->method->setup(en, pc, e);
    if (rc) {
        engine_free(en);
        return rc;
    }
    *out = en;
    return 0;
}

void engine_free(struct engine *en)
{
    if (!en)
        return;
    if (en->perf.file)
        fclose(en->perf.file);
    en->ops->destroy(en);
}
