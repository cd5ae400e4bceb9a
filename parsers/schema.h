/* Schemas: each component declares its config keys once, in a table of struct cfg_key.
 * The same table validates a block (types, ranges, choices, exclusive keys, unknown keys
 * with "did you mean"), reads typed values with their defaults, prints `--help` and writes
 * the key reference of trainer.cfg(5).
 */
#ifndef PT_PARSERS_SCHEMA_H
#define PT_PARSERS_SCHEMA_H

#include <stddef.h>
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
    CFG_MIN_EXCL = 1u << 3,    /* value > min */
    CFG_MAX_EXCL = 1u << 4,    /* value < max */
    CFG_DEPRECATED = 1u << 5,  /* an alias that draws a warning */
    CFG_LOCAL = 1u << 6,       /* looked up in its own block only, not in enclosing ones */
    CFG_ALLOW_INF = 1u << 7,   /* CFG_REAL(_SCHED): +-infinity (1#INF) is a value; without it
                                  every real must be finite and within float range */
    CFG_INNER_BLOCK = 1u << 8, /* CFG_BLOCK: a plain value of that name in an enclosing block
                                  is another key, not this block (cfg_find_inner_block) */
    CFG_FIRST = 1u << 9        /* CFG_INT: an integer array (a:b*n:c, CNTK's intargvector) whose
                                  first element is the value, every element checked (CNTK's test,
                                  cross-validation and write actions read minibatchSize so) */
};

struct cfg_schema;
struct cfg_val;

/* The C type of the struct member a key's value is stored in (cfg_schema_read): CFG_OUT
 * picks it from the member's declared type. */
enum cfg_out_kind {
    CFG_OUT_NONE,
    CFG_OUT_INT,    /* int or an enum: BOOL (0/1), ENUM (index into .choices), INT */
    CFG_OUT_LLONG,  /* long long: INT */
    CFG_OUT_ULONG,  /* size_t, uint64_t: INT (never negative where used) */
    CFG_OUT_DOUBLE, /* double: REAL */
    CFG_OUT_STR,    /* const char *: STRING, PATH, ENUM (the text as written) */
    CFG_OUT_CHARS,  /* char[N]: STRING, PATH (too long is an error naming the origin) */
    CFG_OUT_VAL,    /* struct cfg_val: schedules and lists (owned by the struct) */
    CFG_OUT_BLOCK   /* a nested struct read with .sub (CFG_BLOCK keys) */
};

/* Where cfg_schema_read stores key k's value: member m of struct T. The offset is stored
 * plus one, so that 0 means "not stored". */
#define CFG_OUT(T, m)                                                                              \
    .out = offsetof(T, m) + 1, .out_size = sizeof(((T *)0)->m),                                    \
    .out_kind = _Generic((((T *)0)->m),                                                            \
        int: CFG_OUT_INT,                                                                          \
        unsigned: CFG_OUT_INT,                                                                     \
        long long: CFG_OUT_LLONG,                                                                  \
        unsigned long: CFG_OUT_ULONG,                                                              \
        double: CFG_OUT_DOUBLE,                                                                    \
        const char *: CFG_OUT_STR,                                                                 \
        char *: CFG_OUT_CHARS,                                                                     \
        struct cfg_val: CFG_OUT_VAL,                                                               \
        default: CFG_OUT_BLOCK)
/* An int member set to 1 when the key was given in the config (0: the default applies). */
#define CFG_GIVEN(T, m) .given = offsetof(T, m) + 1

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
    /* cfg_schema_read: where the value goes (CFG_OUT), whether it was given (CFG_GIVEN),
     * and an optional setter for derived values, called after the store with the value
     * (v->node NULL: the default; block: where the read started, for origins). A setter
     * may take a list or schedule over (then it zeroes *v). */
    size_t out, out_size, given;
    enum cfg_out_kind out_kind;
    int (*set)(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e);
};

struct cfg_schema {
    const char *name;  /* block name as users write it, e.g. "SGD" */
    const char *where; /* where the block lives, e.g. "inside a command block" */
    const char *help;
    const struct cfg_key *keys; /* ends with an entry whose name is NULL */
    /* Further key tables (each ending with a NULL name), NULL-terminated, or NULL: the
     * schema's keys are keys followed by these, in order. A layer above composes a block
     * from the tables of the layers below this way (the trainer's SGD block is learn's
     * keys plus the ParallelTrain block). */
    const struct cfg_key *const *more;
    int open; /* unknown keys allowed (top level, command blocks) */
    /* Optional: 1 when node n, a key of none of the tables, is block's all the same (a
     * reader's streams, named by the config: CNTK's ImageReader's features = [ ... ]) */
    int (*owns)(struct cfg_node *block, struct cfg_node *n);
};

/* Iterate over every key of a schema (keys, then the tables of more). */
struct cfg_key_iter {
    const struct cfg_schema *s;
    const struct cfg_key *k;
    size_t table; /* 0: keys, i > 0: more[i - 1] */
};
const struct cfg_key *cfg_key_first(const struct cfg_schema *s, struct cfg_key_iter *it);
const struct cfg_key *cfg_key_next(struct cfg_key_iter *it);

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
 * zeroed (test out->node); a missing CFG_REQUIRED key is an error naming the block.
 * block NULL: the default (no block to look in). */
int cfg_schema_get(struct cfg_node *block, const struct cfg_schema *s, const char *name,
                   struct cfg_val *out, struct pt_err *e);
void cfg_val_free(struct cfg_val *v);

/* Read every key of s that has a destination (CFG_OUT, CFG_GIVEN or a setter) from block
 * into the struct at out, as cfg_schema_get reads one (climbing, aliases, "default",
 * defaults, range and .valid checks, CFG_REQUIRED), in table order. A key without a
 * default that is not given stores 0 (char arrays stay as they are). CFG_BLOCK keys with
 * CFG_OUT read their sub-block into the nested struct with .sub (absent: from block
 * itself, so keys set further out and the defaults apply); CFG_GIVEN on them says whether
 * the sub-block exists. block NULL: only the defaults. Callers zero the struct first and
 * release it with cfg_schema_free (also after a failure). */
int cfg_schema_read(struct cfg_node *block, const struct cfg_schema *s, void *out,
                    struct pt_err *e);
/* Free the lists and schedules (CFG_OUT_VAL members) cfg_schema_read stored in out. */
void cfg_schema_free(const struct cfg_schema *s, void *out);
/* Element of a schedule for 0-based epoch (the last element repeats). */
double cfg_sched_real(const struct cfg_val *v, size_t epoch);
long long cfg_sched_int(const struct cfg_val *v, size_t epoch);

/* Reference text for one block: plain text for --help, troff for the man page. */
void cfg_schema_print_help(FILE *out, const struct cfg_schema *s);
void cfg_schema_print_man(FILE *out, const struct cfg_schema *s);

/* Edit distance (case-insensitive) used for "did you mean". */
size_t cfg_edit_distance(const char *a, const char *b);

#endif
