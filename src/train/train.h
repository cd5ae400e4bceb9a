/* The application layer: top-level and command-block schemas, the action table, the
 * command line. main.c drives these; everything here reports through struct pt_err. */
#ifndef PT_TRAIN_TRAIN_H
#define PT_TRAIN_TRAIN_H

#include <stdio.h>

#include "core/log.h"
#include "parsers/schema.h"

struct comm;

extern const struct cfg_schema train_top_schema;     /* top level (open) */
extern const struct cfg_schema train_command_schema; /* a command block with action=train */
extern const struct cfg_schema test_command_schema;  /* a command block with action=test */
extern const struct cfg_schema cv_command_schema;    /* a command block with action=cv */
extern const struct cfg_schema write_command_schema; /* a command block with action=write */
extern const struct cfg_schema dump_command_schema;  /* action=dumpNode */
extern const struct cfg_schema plot_command_schema;  /* action=plot */
extern const struct cfg_schema edit_command_schema;  /* action=edit */
extern const struct cfg_schema wc_command_schema;    /* action=writeWordAndClass */
extern const struct cfg_schema svd_command_schema;   /* action=SVD */
extern const struct cfg_schema train_sgd_schema;     /* SGD: learn's keys + ParallelTrain */
/* Every schema, NULL-terminated: the top level and the command blocks, then every block
 * they contain (depth first, each once), for --help, the man page and "belongs in" hints. */
const struct cfg_schema *const *train_all_schemas(void);

/* CNTK's top-level parallelTrain switch (CNTK.cpp): true or false as given; auto, the
 * default, is whether the MPI world has more than one rank. */
int train_parallel_switch(struct cfg *cfg, int workers);
/* parallelTrain=false given: SGD's ParallelTrain block is ignored, as CNTK ignores it. (On
 * one process without the key CNTK ignores the block too; partrain runs the method on one
 * worker, SPEC 7.1.) */
int train_parallel_off(struct cfg *cfg);

/* What a command block says besides its sub-blocks: the rows of train_command_schema,
 * test_command_schema and train_top_schema (a command block may override top-level keys)
 * store into it through cfg_schema_read. */
struct train_settings {
    char model[4096];           /* modelPath */
    long long mb_size;          /* action=test: minibatchSize */
    long long epoch_size;       /* action=test: epochSize */
    long long trace;            /* traceLevel */
    long long seed;             /* randomSeed */
    int make_mode;              /* makeMode */
    struct cfg_val eval_nodes;  /* action=test: evalNodeNames (node NULL: not given) */
    struct cfg_val cv_interval; /* action=cv: crossValidationInterval, start:step:end */
    long long cv_sleep;         /* action=cv: sleepTimeBetweenRuns, seconds */
};

/* What a running action gets. */
struct pt_ctx {
    struct cfg *cfg;
    struct comm *comm;
    struct pt_log *log;
};

struct train_action {
    const char *name;
    const struct cfg_schema *schema; /* of the command block */
    int (*run)(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);
    const char *help;
};

/* The action table entry for name (case-insensitive), or NULL. */
const struct train_action *train_action_find(const char *name);
/* "train, test, eval" for messages. */
const char *train_action_names(void);

/* One command to run: its block and action. */
struct train_command {
    struct cfg_node *block;
    const struct train_action *action;
};

/* Validate the whole config for the commands it runs: top-level keys, `command`, each
 * command block's action and keys (unknown keys: warnings, or errors with
 * strictConfig=true). Fills cmds (up to max) and *n. */
int train_check_config(struct cfg *cfg, struct train_command *cmds, size_t max, size_t *n,
                       struct pt_err *e);

/* Before the log opens (every rank): refuse a run that would write over a file it reads
 * (config files, the readers' data files, the model a test evaluates) with the log
 * (stderr=, this rank's name), modelPath (and modelPath.E, .ckp, .rank<k>) or perfStatsFile,
 * or that would write the log as one of the other files. */
int train_check_files(struct cfg *cfg, const struct train_command *cmds, size_t n, int rank,
                      int workers, struct pt_err *e);
/* The log file that stderr= names for this rank (logfmt_log_name: CNTK's names, with
 * timestamping PATH_<commands>.log[rank<k>]), into buf: 1, and *node the stderr value; 0
 * when there is no stderr=. The config was checked before. */
int train_log_name(struct cfg *cfg, int rank, int workers, char *buf, size_t size,
                   struct cfg_node **node);
/* Remove the temporaries that killed runs of this host left next to the model files the
 * commands write (core/fs.h's rule), one log line each. */
void train_remove_stale(const struct train_command *cmds, size_t n, struct pt_log *log);

/* Command-line flags (everything else becomes config). */
struct cmdline {
    int help;
    const char *help_topic; /* --help BLOCK */
    int version;
    int print_config;
    int man_keys;
    int config_files; /* how many configFile= were read */
};

/* Apply argv[1..argc) in order: flags, configFile=a+b, currentDirectory=DIR (changes the
 * process's directory, as CNTK does), and key=value overrides. */
int cmdline_apply(int argc, char **argv, struct cfg *cfg, struct cmdline *out, struct pt_err *e);
/* Only the flags (no config, no side effects): for --help/--version before MPI starts. */
void cmdline_flags(int argc, char **argv, struct cmdline *out);
/* A usage error (an unknown option) in argv, found before MPI starts: the error (PT_EUSER,
 * "<command line>:argN: error: unknown option ..."), or 0. main exits 2 on it. */
int cmdline_usage_error(int argc, char **argv, struct pt_err *e);

/* CNTK's start and end of a run (banner.c): the start time as CNTK prints it
 * ("2026/11/24 21:30:00"), the banner (name, build time, start time, the arguments), the
 * build info, the box before each action, the lines after it, and COMPLETED. (or
 * __COMPLETED__ in a timestamped log). */
void train_started(char *buf, size_t size);
void train_print_banner(struct pt_log *log, int argc, char **argv, const char *started);
void train_print_build_info(struct pt_log *log);
void train_print_action_start(struct pt_log *log, const char *command, const char *action);
void train_print_action_end(struct pt_log *log, const char *action, int trace);
void train_print_completed(struct pt_log *log);

/* Texts for --help, --version and the man page's key reference. */
void train_print_usage(FILE *out);
int train_print_help(FILE *out, const char *topic);
void train_print_version(FILE *out);
void train_print_man_keys(FILE *out);

#endif
