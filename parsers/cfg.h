/* The CNTK legacy ("configFile=") config language: text -> a tree of blocks and values that
 * remember where they came from.
 *
 * Model (as CNTK's ConfigParameters): a block maps case-insensitive keys to either a scalar
 * (raw text, `$var$` unresolved) or a nested block. A nested block keeps its TEXT and is
 * parsed only when it is first looked up, so blocks this program never reads (BrainScript,
 * NDL) may hold any balanced text. Assigning a key twice in one block replaces the value,
 * except that a block assigned onto a block is merged: the new text is appended and parsed
 * after the old (later keys win).
 *
 * Ownership: a struct cfg owns every node, string and origin it hands out; they live until
 * cfg_free(). Nothing here touches MPI or changes process state (no chdir, no printing):
 * warnings are collected and fetched with cfg_warning().
 */
#ifndef PT_PARSERS_CFG_H
#define PT_PARSERS_CFG_H

#include <stddef.h>
#include <stdio.h>

#include "core/err.h"

/* Where a key or value was written. `file` is "<command line>" for argument number `arg`
 * (then `line` and `col` are 0). Line and column are 1-based; columns count characters. */
struct cfg_origin {
    const char *file;
    int line;
    int col;
    int arg;
};

struct cfg;
struct cfg_node;

/* Deepest nesting of blocks (and of dotted path components) accepted. */
#define CFG_MAX_DEPTH 256
/* Largest config file read. */
#define CFG_MAX_FILE_BYTES (64u << 20)
/* Longest expanded array/schedule (`x*n` repeats): a per-epoch schedule of 65 536 epochs
 * is more than any config asks, and a million strings made for `x*999999` (the old limit)
 * took 0.5 GB under the fuzzers' AddressSanitizer (the CI's cfg smoke ran out of memory) */
#define CFG_MAX_LIST 65536

/* New, empty config (its root block has no keys). NULL on out of memory. */
struct cfg *cfg_new(void);
/* Free a config and everything it handed out. NULL is a no-op. */
void cfg_free(struct cfg *c);

/* Read a config file into the root block (the `configFile=` action): `.ini` files through
 * inih, anything else as legacy text. Relative `include=` paths inside are resolved
 * against `cwd` (NULL: the process's current directory). Reading the same file twice (by
 * its real path) is an error. `at` is where the file was named (NULL: none). */
int cfg_load_file(struct cfg *c, const char *path, const struct cfg_origin *at, struct pt_err *e);

/* Parse text as if it were a file called `name` (tests, fuzzing). `len` bytes, may contain
 * anything; NUL bytes and invalid UTF-8 are reported as errors. */
int cfg_load_string(struct cfg *c, const char *name, const char *text, size_t len,
                    struct pt_err *e);

/* cfg_load_string_opts options. CFG_LOAD_PLAIN: text that must not reach anything beyond
 * itself (a model file's network description): include= is an error, so is any `$` in a
 * value (no $variable$ expansion), and the text is legacy syntax whatever its name. The
 * options stay on for the whole config, blocks parsed later included. */
#define CFG_LOAD_PLAIN 1u
int cfg_load_string_opts(struct cfg *c, const char *name, const char *text, size_t len,
                         unsigned options, struct pt_err *e);
/* Whether n's config was loaded with CFG_LOAD_PLAIN. */
int cfg_node_plain(const struct cfg_node *n);

/* Real paths of the config files read so far (configFile= and include=), i in
 * [0, cfg_file_count). */
size_t cfg_file_count(const struct cfg *c);
const char *cfg_file(const struct cfg *c, size_t i);

/* Apply one command-line argument `key=value` (argument number argno, for origins):
 * same syntax as a config line, including `block=[...]` merges and dotted paths. */
int cfg_apply_arg(struct cfg *c, const char *arg, int argno, struct pt_err *e);

/* The top-level block. */
struct cfg_node *cfg_root(struct cfg *c);

/* Warnings collected so far ("file:line:col: warning: ..."), i in [0, cfg_warning_count). */
size_t cfg_warning_count(const struct cfg *c);
const char *cfg_warning(const struct cfg *c, size_t i);
/* Add a warning (used by the schema layer). */
void cfg_warn(struct cfg *c, const struct cfg_origin *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ lookup */

/* Find `key` in `block` only. *out = NULL when absent. Parses the block if needed (a parse
 * error is returned). */
int cfg_find_local(struct cfg_node *block, const char *key, struct cfg_node **out,
                   struct pt_err *e);
/* Find `key` in `block`, then in each enclosing block up to the root (CNTK's lookup). */
int cfg_find(struct cfg_node *block, const char *key, struct cfg_node **out, struct pt_err *e);
/* As cfg_find, for a key that must name a block. A scalar whose whole value is `$name$`
 * naming a block stands for that block. Error when the key holds a plain value. */
int cfg_find_block(struct cfg_node *block, const char *key, struct cfg_node **out,
                   struct pt_err *e);
/* As cfg_find_block, except that a plain value found in an enclosing block (not in block
 * itself) is another key of the same name, not this block: *out = NULL, no error. (CNTK's
 * top-level `parallelTrain = true` switch and SGD's ParallelTrain block share a name:
 * CNTK reads the switch as an empty block, so it means no ParallelTrain block.) */
int cfg_find_inner_block(struct cfg_node *block, const char *key, struct cfg_node **out,
                         struct pt_err *e);

/* The value of a scalar node with every `$name$` replaced (looked up from the node's block
 * outward, recursively; unknown names and cycles are errors naming the origin). The string
 * belongs to the node. Error when n is a block. */
int cfg_value(struct cfg_node *n, const char **out, struct pt_err *e);

/* A block's raw text (all its segments, in order, joined by newlines) with every $name$
 * replaced by the value of the config key `name`, looked up from the block's parent
 * outward, as CNTK substitutes variables before BrainScript sees the text. *text is
 * heap-allocated (free it); *at is where the text starts. Unknown variables are errors
 * naming their position. */
int cfg_block_text(struct cfg_node *block, char **text, struct cfg_origin *at, struct pt_err *e);
/* text[0..len) (a file's, starting at *at) with every $name$ replaced by the value of the
 * config key `name`, looked up from `scope` outward (CNTK's NDL files: variables of the
 * NDLNetworkBuilder block and above). *out is heap-allocated (free it). */
int cfg_subst_text(struct cfg_node *scope, const char *text, size_t len,
                   const struct cfg_origin *at, char **out, struct pt_err *e);

/* CNTK's array of blocks held by a scalar: its raw text is `( [ ... ] : { ... } )` (the
 * parentheses optional; blanks, newlines and comments around the elements), as in
 * `deserializers = ({ ... })`. Each element becomes a block as if written `key = [ ... ]` in
 * n's place: its keys keep their real file:line:col, lookups from it climb into n's block
 * (so `$var$` and enclosing keys resolve as from n), cfg_path names it as n, and its origin
 * is its opening bracket. *first is the first block (NULL for `()`); the others follow
 * through cfg_next. The blocks belong to n and are made once (later calls return the same
 * ones). Error, naming the offending character, when the text is not such an array; also
 * when n is a block. */
int cfg_block_array(struct cfg_node *n, struct cfg_node **first, struct pt_err *e);

/* Make sure a block's pending text is parsed (cfg_first() needs this). */
int cfg_parse_block(struct cfg_node *block, struct pt_err *e);

/* Children of a parsed block in first-definition order; NULL at the end. */
struct cfg_node *cfg_first(const struct cfg_node *block);
struct cfg_node *cfg_next(const struct cfg_node *n);

const char *cfg_key(const struct cfg_node *n);
int cfg_is_block(const struct cfg_node *n);
struct cfg_node *cfg_parent(const struct cfg_node *n);
/* The config that owns n (for cfg_warn). */
struct cfg *cfg_of(const struct cfg_node *n);
/* Where the key was (last) assigned; the value's own position for scalars. */
const struct cfg_origin *cfg_origin_of(const struct cfg_node *n);
const struct cfg_origin *cfg_value_origin(const struct cfg_node *n);
/* The raw (unresolved) value text of a scalar; NULL for a block. */
const char *cfg_raw(const struct cfg_node *n);
/* "SGD" for a block at train/SGD → "train.SGD"; written into buf. */
const char *cfg_path(const struct cfg_node *n, char *buf, size_t size);

/* Mark a node read / ask whether it was (for "unused key" reports). */
void cfg_mark_used(struct cfg_node *n);
int cfg_is_used(const struct cfg_node *n);

/* ------------------------------------------------------------------ origins & errors */

/* "x.cfg:12:5" or "<command line>:arg3" into buf. */
const char *cfg_origin_str(const struct cfg_origin *o, char *buf, size_t size);
/* pt_err_set with "ORIGIN: error: " in front; returns PT_EUSER. */
int cfg_error(struct pt_err *e, const struct cfg_origin *o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ values */

/* Boolean: true/false/t/f/1/0, any case. */
int cfg_to_bool(const struct cfg_node *n, const char *s, int *out, struct pt_err *e);
/* Key `key` of block as a boolean, looked up from block outward (local: in block only):
 * *out is left as it is when the key is absent; *found (may be NULL) is the node or NULL.
 * A block of that name, or a value that is no boolean, is an error naming it. */
int cfg_get_bool(struct cfg_node *block, const char *key, int local, int *out,
                 struct cfg_node **found, struct pt_err *e);
/* Integer: a whole-string decimal integer. */
int cfg_to_int(const struct cfg_node *n, const char *s, long long *out, struct pt_err *e);
/* Real: a whole-string strtod number, or a number followed by #INF (±infinity). NaN is
 * refused. */
int cfg_to_double(const struct cfg_node *n, const char *s, double *out, struct pt_err *e);

/* An array `a:b*n:c` expanded to its elements (`b` repeated n times). Elements may be
 * quoted. Empty elements are skipped, as CNTK's array parsers skip them (`64:256:` and
 * `:64::256` are 64:256); an array with no element, or `*n` with no value, is an error.
 * items[] and the strings are heap-allocated: free with cfg_list_free. */
struct cfg_list {
    size_t n;
    char **items;
};
int cfg_to_list(const struct cfg_node *n, const char *s, struct cfg_list *out, struct pt_err *e);
void cfg_list_free(struct cfg_list *l);

/* ------------------------------------------------------------------ printing */

/* Print the whole merged config, values resolved, each with its origin as a trailing
 * comment. Blocks that do not parse as config text (BrainScript, NDL) are printed raw.
 * Problems (unknown variables, ...) are printed in place and counted in *problems. */
int cfg_print(struct cfg *c, FILE *out, int *problems, struct pt_err *e);

#endif
