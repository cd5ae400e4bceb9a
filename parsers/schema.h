/* Schemas: each component declares its config keys once, in a table of struct cfg_key.
 * The same table validates a block (types, ranges, choices, exclusive keys, unknown keys
 * with "did you mean"), reads typed values with their defaults, prints `--help` and writes
 * the key reference of trainer.cfg(5).
 */
#ifndef PT_PARSERS_SCHEMA_H
#define PT_PARSERS_SCHEMA_H

#include <stdio.h>

#include "parsers/cfg.h"

enum cfg_type {
    CFG_BOOL,
    CFG_INT,
    CFG_REAL,
    CFG_STRING,
    CFG_PATH,
    CFG_ENUM,        /* one of .choices */
    CFG_INT_SCHED,   /* per-epoch schedule a:b*n:c of integers */
    CFG_REAL_SCHED,  /* per-epoch schedule of reals */
    CFG_INT_LIST,    /* array of integers */
    CFG_STRING_LIST, /* array of words (each one of .choices when given) */
    CFG_BLOCK,       /* sub-block checked against .sub */
    CFG_BLOCK_MAP,   /* block of named sub-blocks, each checked against .sub */
    CFG_TEXT,        /* block kept as text, never parsed (e.g. BrainScript) */
    CFG_UNSUPPORTED  /* a CNTK key whose feature partrain lacks: always an error (.help says why) */
};

enum {
    CFG_REQUIRED = 1u << 0,
    CFG_HAS_MIN = 1u << 1,
    CFG_HAS_MAX = 1u << 2,
    CFG_MIN_EXCL = 1u << 3,  /* value > min */
    CFG_MAX_EXCL = 1u << 4,  /* value < max */
    CFG_DEPRECATED = 1u << 5, /* an alias that draws a warning */
    CFG_LOCAL = 1u << 6       /* looked up in its own block only, not in enclosing ones */
};

struct cfg_schema;
struct cfg_val;

struct cfg_key {
    const char *name;
    enum cfg_type type;
    const char *def; /* default, as config text; NULL: none (or "derived", see help) */
    unsigned flags;
    double min, max;
    const char *choices;     /* "a|b|c", case-insensitive; CFG_ENUM and CFG_STRING_LIST */
    const char *unsupported; /* "x|y": CNTK values we refuse with "not supported" */
    const struct cfg_schema *sub;
    const char *alias_of; /* another name for key alias_of */
    int group;            /* keys sharing a non-zero group exclude each other */
    const char *help;
    /* Optional extra check of a parsed value: 0 when fine, else fill why (a phrase). */
    int (*valid)(const struct cfg_val *v, char *why, size_t size);
};

struct cfg_schema {
    const char *name;  /* block name as users write it, e.g. "SGD" */
    const char *where; /* where the block lives, e.g. "inside a command block" */
    const char *help;
    const struct cfg_key *keys; /* ends with an entry whose name is NULL */
    int open;                   /* unknown keys allowed (top level, command blocks) */
};

/* A typed value read through a schema. Lists and schedules are heap-allocated: release
 * with cfg_val_free. */
struct cfg_val {
    struct cfg_node *node; /* where it was set; NULL when the default applies */
    int b;
    long long i;
    double d;
    const char *s; /* strings and paths (owned by the config, or the schema's default) */
    int choice;    /* CFG_ENUM: index into .choices */
    size_t n;      /* lists and schedules */
    long long *ilist;
    double *dlist;
    struct cfg_list slist;
};

/* Validation context: what to report and which schemas exist (for "belongs in" hints). */
struct cfg_check {
    struct cfg *cfg;
    int strict;                          /* unknown keys are errors, not warnings */
    const struct cfg_schema *const *all; /* NULL-terminated, may be NULL */
    struct cfg_node *visited[64];        /* blocks already checked (shared blocks) */
    int nvisited;
};

/* Check `block` and its sub-blocks against schema s (see the file comment). Required keys
 * and sub-blocks are looked up climbing enclosing blocks, as the trainer will read them. */
int cfg_schema_check(struct cfg_check *ck, struct cfg_node *block, const struct cfg_schema *s,
                     struct pt_err *e);

/* The schema entry for name (aliases included), or NULL. */
const struct cfg_key *cfg_schema_key(const struct cfg_schema *s, const char *name);

/* Read key `name` of schema s from block (climbing; aliases; "default"; range checks).
 * out->node is NULL when the default applies. A missing key without default leaves *out
 * zeroed (test out->node); a missing CFG_REQUIRED key is an error naming the block. */
int cfg_schema_get(struct cfg_node *block, const struct cfg_schema *s, const char *name,
                   struct cfg_val *out, struct pt_err *e);
void cfg_val_free(struct cfg_val *v);
/* Element of a schedule for 0-based epoch (the last element repeats). */
double cfg_sched_real(const struct cfg_val *v, size_t epoch);
long long cfg_sched_int(const struct cfg_val *v, size_t epoch);

/* Reference text for one block: plain text for --help, troff for the man page. */
void cfg_schema_print_help(FILE *out, const struct cfg_schema *s);
void cfg_schema_print_man(FILE *out, const struct cfg_schema *s);

/* Edit distance (case-insensitive) used for "did you mean". */
size_t cfg_edit_distance(const char *a, const char *b);

#endif
