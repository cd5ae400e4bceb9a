/* trainer: command line, start-up and exit codes.
 *
 * Exit status: 0 success; 1 bad input (config, command line, data, model); 2 usage;
 * 3 system failure (I/O, MPI, memory); 4 internal error. Usage errors (no arguments, an
 * unknown option) are found before MPI starts. Errors that every rank meets at the same
 * point are agreed on (comm_agree) and reported once, by the lowest failing rank, tagged
 * "rank K: " when K > 0; inside an action the start-up steps agree the same way
 * (train_agree carries the failing rank's message to every rank). Every rank then exits
 * with the same status, so nothing hangs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/log.h"
#include "math/backend.h"
#include "reader/fill_pool.h"
#include "train/train.h"

#define MAX_COMMANDS 64

static int exit_code(int rc)
{
    switch (rc) {
    case PT_OK: return 0;
    case PT_EUSER:
    case PT_EDEVICE: return 1;
    case PT_ESYS:
    case PT_ENOMEM: return 3;
    default: return 4;
    }
}

/* --help, --version, --man-keys: no MPI, no config. Returns -1 when none was asked. */
static int informational(int argc, char **argv)
{
    struct cmdline f;
    cmdline_flags(argc, argv, &f);
    if (f.help)
        return train_print_help(stdout, f.help_topic);
    if (f.version) {
        train_print_version(stdout);
        return 0;
    }
    if (f.man_keys) {
        train_print_man_keys(stdout);
        return 0;
    }
    if (argc < 2) {
        train_print_usage(stderr);
        fputs("trainer: nothing to do (try trainer --help)\n", stderr);
        return 2;
    }
    struct pt_err e;
    pt_err_clear(&e);
    if (cmdline_usage_error(argc, argv, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 2;
    }
    return -1;
}

/* Report an agreed failure once; returns the process exit status. */
static int report(struct comm *comm, struct pt_log *log, int rc, int failed, struct pt_err *e)
{
    if (comm_rank(comm) == failed) {
        if (failed > 0)
            pt_log_printf(log, "rank %d: %s\n", failed, e->msg);
        else
            pt_log_printf(log, "%s\n", e->msg);
        if (log->own)
            fprintf(stderr, "%s\n", e->msg);
    }
    return exit_code(rc);
}

/* MPI could not even agree on the outcome: say why and end every rank. */
static void agreement_failed(struct pt_log *log, const struct pt_err *agree, struct comm *comm)
{
    pt_log_printf(log, "%s\n", agree->msg);
    if (log->own)
        fprintf(stderr, "%s\n", agree->msg);
    comm_abort(comm, exit_code(agree->code));
}

/* Set up the log from the config (stderr=, timestamping=), as CNTK's main does: the file
 * gets CNTK's name, the terminal a line saying where the log goes, and the log the banner
 * again (top-level traceLevel 0) and the build info. */
static int open_log(struct cfg *cfg, struct comm *comm, struct pt_log *log, int argc, char **argv,
                    const char *started, struct pt_err *e)
{
    struct cfg_val v = {0};
    int rc = cfg_schema_get(cfg_root(cfg), &train_top_schema, "timestamping", &v, e);
    if (rc)
        return rc;
    log->timestamping = v.b;
    char name[4200];
    struct cfg_node *path = NULL;
    if (train_log_name(cfg, comm_rank(comm), comm_size(comm), name, sizeof name, &path)) {
        const char *value = NULL;
        rc = cfg_value(path, &value, e);
        if (rc == 0)
            pt_log_printf(log, "Redirecting stderr to file %s\n", name);
        if (rc == 0)
            rc = pt_log_open(log, value, name, e);
        if (rc == 0 && cfg_schema_get(cfg_root(cfg), &train_top_schema, "traceLevel", &v, e) == 0 &&
            v.i == 0)
            train_print_banner(log, argc, argv, started);
    }
    log->timestamping = log->timestamping && rc == 0;
    if (rc == 0 && (comm_rank(comm) == 0 || log->own))
        train_print_build_info(log);
    return rc;
}

/* One command: CNTK's box before it, the action, the lines after it. */
static int run_command(struct pt_ctx *ctx, const struct train_command *cmd, struct pt_err *e)
{
    int talk = comm_rank(ctx->comm) == 0 || ctx->log->own;
    const char *action = cmd->action->name;
    if (talk)
        train_print_action_start(ctx->log, cfg_key(cmd->block), action);
    int rc = cmd->action->run(ctx, cmd->block, e);
    struct cfg_val trace = {0};
    struct pt_err ignored;
    pt_err_clear(&ignored);
    if (rc == 0 && talk &&
        cfg_schema_get(cmd->block, &train_top_schema, "traceLevel", &trace, &ignored) == 0)
        train_print_action_end(ctx->log, action, (int)trace.i);
    return rc;
}

/* The threads that fill a minibatch read ahead of a GPU, or of images: as many as the
 * rank's BLAS threads (the cores it has), at most FILL_POOL_MAX; PT_READ_THREADS=N sets
 * the number for every reader (the tests compare counts). */
static int read_threads(int blas, struct pt_err *e)
{
    const char *v = getenv("PT_READ_THREADS");
    int force = v && *v;
    if (force) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || n < 1 || n > FILL_POOL_MAX)
            return pt_err_set(e, PT_EUSER,
                              "error: PT_READ_THREADS: expected a number of threads from 1 to "
                              "%d, got '%s'",
                              FILL_POOL_MAX, v);
        blas = (int)n;
    }
    fill_pool_set_default(blas, force);
    return 0;
}

/* traceLevel > 0: dump the resolved config (rank 0); numCPUThreads: BLAS threads. */
static int start_up(struct cfg *cfg, struct comm *comm, struct pt_log *log, struct pt_err *e)
{
    struct cfg_val trace = {0}, threads = {0};
    int rc = cfg_schema_get(cfg_root(cfg), &train_top_schema, "traceLevel", &trace, e);
    if (rc == 0)
        rc = cfg_schema_get(cfg_root(cfg), &train_top_schema, "numCPUThreads", &threads, e);
    if (rc)
        return rc;
    int n = backend_cpu_set_threads((int)threads.i, comm_local_size(comm));
    if ((rc = read_threads(n, e)))
        return rc;
    struct cfg_val gemm = {0};
    rc = cfg_schema_get(cfg_root(cfg), &train_top_schema, "cpuGemm", &gemm, e);
    if (rc == 0 && backend_cpu_set_gemm(gemm.choice, e)) { /* only avx512 can fail */
        pt_err_clear(e);
        return cfg_error(e, cfg_value_origin(gemm.node),
                         "cpuGemm=avx512: this CPU has no AVX-512F (use auto or openblas)");
    }
    if (rc)
        return rc;
    if (trace.i > 0 && comm_rank(comm) == 0) {
        char *text = NULL;
        size_t len = 0;
        int problems = 0;
        int own = backend_cpu_own_gemm(); /* before the note, which it may measure */
        int force, readers = fill_pool_default(&force);
        FILE *f = open_memstream(&text, &len);
        if (!f)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        rc = cfg_print(cfg, f, &problems, e);
        fclose(f);
        char hosts[96] = ""; /* across hosts: the ring's automatic segment (comm_ring.c) */
        if (comm_node_count(comm) > 1)
            snprintf(hosts, sizeof hosts, "; %d hosts, ring segments of %zu bytes by default",
                     comm_node_count(comm), comm_ring_segment_bytes(comm));
        if (rc == 0)
            pt_log_printf(log,
                          "Configuration (merged, variables resolved, with origins):\n%s"
                          "Using %d BLAS thread%s per rank (%d rank%s on this node); matrix "
                          "products: %s%s; minibatches read by %d thread%s%s\n",
                          text, n, n == 1 ? "" : "s", comm_local_size(comm),
                          comm_local_size(comm) == 1 ? "" : "s",
                          own ? "partrain's AVX-512 kernel" : "OpenBLAS", hosts, readers,
                          readers == 1 ? "" : "s",
                          force || readers == 1 ? ""
                                                : " ahead of a GPU and for images, 1 otherwise");
        free(text);
    }
    return rc;
}

int main(int argc, char **argv)
{
    int info = informational(argc, argv);
    if (info >= 0)
        return info;

    char started[32];
    train_started(started, sizeof started);
    struct pt_err e;
    pt_err_clear(&e);
    struct comm *comm = comm_init(&argc, &argv, &e);
    if (!comm) {
        fprintf(stderr, "%s\n", e.msg);
        return exit_code(e.code);
    }
    int rank = comm_rank(comm);
    struct pt_log log;
    pt_log_init(&log);
    struct cmdline flags;
    cmdline_flags(argc, argv, &flags);
    if (rank == 0 && !flags.print_config) /* CNTK's banner, before anything is read */
        train_print_banner(&log, argc, argv, started);

    struct cfg *cfg = cfg_new();
    struct cmdline cl;
    memset(&cl, 0, sizeof cl);
    int rc = cfg ? cmdline_apply(argc, argv, cfg, &cl, &e)
                 : pt_err_set(&e, PT_ENOMEM, "error: out of memory");
    if (rc == 0 && cl.print_config && rank == 0) {
        int problems = 0;
        rc = cfg_print(cfg, stdout, &problems, &e);
        fflush(stdout);
        if (rc == 0 && problems)
            rc = pt_err_set(&e, PT_EUSER, "error: the config has %d problem%s (marked above)",
                            problems, problems == 1 ? "" : "s");
    }
    struct train_command cmds[MAX_COMMANDS];
    size_t ncmds = 0;
    if (rc == 0)
        rc = train_check_config(cfg, cmds, MAX_COMMANDS, &ncmds, &e);
    /* the log opens once the run's inputs are known (never over one of them), and not at
     * all for --print-config (a dry run creates no files) */
    if (rc == 0 && !cl.print_config)
        rc = train_check_files(cfg, cmds, ncmds, rank, comm_size(comm), &e);
    if (rc == 0 && !cl.print_config)
        rc = open_log(cfg, comm, &log, argc, argv, started, &e);
    if (rank == 0 && cfg)
        for (size_t i = 0; i < cfg_warning_count(cfg); i++)
            pt_log_printf(&log, "%s\n", cfg_warning(cfg, i));

    int failed = -1;
    struct pt_err agree;
    pt_err_clear(&agree);
    int status = comm_agree(comm, rc, &failed, &agree);
    if (agree.code)
        agreement_failed(&log, &agree, comm);
    if (status == 0 && !cl.print_config) {
        struct pt_ctx ctx = {.cfg = cfg, .comm = comm, .log = &log};
        /* cpuGemm=avx512 can fail on some nodes only: agree before the actions' collectives */
        status = comm_agree(comm, start_up(cfg, comm, &log, &e), &failed, &agree);
        if (agree.code)
            agreement_failed(&log, &agree, comm);
        rc = 0;
        if (status == 0)
            train_remove_stale(cmds, ncmds, &log);
        for (size_t i = 0; i < ncmds && rc == 0 && status == 0; i++)
            rc = run_command(&ctx, &cmds[i], &e);
        if (status == 0 && rc == 0 && (rank == 0 || log.own))
            train_print_completed(&log);
        if (status == 0 && rc == 0) /* a log that could not be written (disk full) fails the run */
            rc = pt_log_check(&log, &e);
        if (status == 0)
            status = comm_agree(comm, rc, &failed, &agree);
        if (agree.code)
            agreement_failed(&log, &agree, comm);
    }
    int code = status ? report(comm, &log, status, failed, &e) : 0;
    cfg_free(cfg);
    pt_log_close(&log);
    comm_finalize(comm);
    return code;
}
