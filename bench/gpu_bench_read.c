/* gpu_bench read CONFIG MB EPOCHS [KEY=VALUE...]: the reader alone, as the trainer reads
 * ahead of a device (reader_prefetch_*: its thread, the fill threads, the minibatches'
 * data in the backend's host memory), with nobody computing: how fast minibatches of MB
 * samples come. CONFIG's train block's reader, KEY=VALUE settings applied as on the
 * trainer's command line (DataDir=...). Per epoch: minibatches, microseconds each,
 * samples/s (the first epoch also parses the text). The fill threads: as one rank's of the
 * trainer (the cores, at most 8; PT_READ_THREADS=N sets them). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "data/minibatch.h"
#include "gpu_bench.h"
#include "parsers/cfg.h"
#include "reader/fill_pool.h"
#include "reader/reader.h"

/* One epoch through the reader's thread: *n minibatches, *samples, in *sec. */
static int read_epoch(struct reader *r, size_t epoch, size_t mbsize,
                      const struct mb_host_alloc *host, size_t *n, size_t *samples, double *sec,
                      struct pt_err *e)
{
    struct reader_prefetch *p = NULL;
    struct minibatch *mb = NULL;
    *n = *samples = 0;
    double t0 = bench_now();
    int rc = reader_start_epoch(r, epoch, 0, 0, 1, e);
    if (rc == 0)
        rc = reader_prefetch_start(r, mbsize, host, &p, e);
    while (rc == 0 && (rc = reader_prefetch_next(p, &mb, e)) == 0 && mb->global_samples) {
        (*n)++;
        *samples += mb->samples;
    }
    *sec = bench_now() - t0;
    reader_prefetch_stop(p);
    return rc;
}

int bench_read(int argc, char **argv)
{
    if (argc < 3 || atol(argv[1]) <= 0 || atoi(argv[2]) <= 0) {
        fprintf(stderr, "usage: gpu_bench read CONFIG MB EPOCHS [KEY=VALUE...]\n");
        return 2;
    }
    struct pt_err e;
    pt_err_clear(&e);
    struct bench_backend bb = {0};
    int rc = bench_open_device(&bb);
    if (rc)
        return rc;
    struct cfg *c = cfg_new();
    struct cfg_node *train = NULL, *block = NULL;
    struct reader_config rcfg;
    struct reader *r = NULL;
    rc = c ? cfg_load_file(c, argv[0], NULL, &e) : pt_err_set(&e, PT_ENOMEM, "out of memory");
    for (int i = 3; rc == 0 && i < argc; i++)
        rc = cfg_apply_arg(c, argv[i], i, &e);
    if (rc == 0)
        rc = cfg_find_block(cfg_root(c), "train", &train, &e);
    if (rc == 0)
        rc = cfg_find_block(train, "reader", &block, &e);
    if (rc == 0)
        rc = reader_config_read(block, &rcfg, &e);
    if (rc == 0)
        rc = reader_open(&rcfg, NULL, &r, &e);
    struct mb_host_alloc pinned = {bk_host_malloc_cb, bk_host_release_cb, bb.b};
    const struct mb_host_alloc *host = bb.b->ops->host_alloc ? &pinned : NULL;
    size_t mbsize = (size_t)atol(argv[1]);
    /* the fill threads as the trainer of one rank has them: its cores, at most
     * FILL_POOL_MAX, or PT_READ_THREADS */
    const char *v = getenv("PT_READ_THREADS");
    long want = v && *v ? atol(v) : sysconf(_SC_NPROCESSORS_ONLN);
    want = want < 1 ? 1 : want > FILL_POOL_MAX ? FILL_POOL_MAX : want;
    fill_pool_set_default((int)want, v && *v);
    int force, threads = fill_pool_default(&force);
    if (rc == 0)
        printf("gpu_bench read: %s, minibatch %zu, %d fill thread%s, data in %s\n", argv[0], mbsize,
               threads, threads == 1 ? "" : "s", host ? "pinned memory" : "malloc");
    for (int ep = 0; rc == 0 && ep < atoi(argv[2]); ep++) {
        size_t n, samples;
        double sec;
        rc = read_epoch(r, (size_t)ep, mbsize, host, &n, &samples, &sec, &e);
        if (rc == 0 && n)
            printf("read_epoch_%d: %zu minibatches, %.1f us each, %.0f samples/s\n", ep + 1, n,
                   sec / (double)n * 1e6, (double)samples / sec);
    }
    reader_close(r);
    cfg_free(c);
    backend_free(bb.b);
    return rc ? bench_fail(&e) : 0;
}
