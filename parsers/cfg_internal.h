/* Private to parsers/cfg_*.c: the tree's representation, and the map of the language's files.
 *
 * Bottom up; a file calls only files listed before it (and includes only their headers):
 *
 *   file           responsibility                                   uses
 *   cfg_origin.c   origins as text, cfg_error                       -
 *   cfg_lex.c      cursor, comments, strings, brackets; UTF-8 check origin
 *   cfg_tree.c     struct cfg, nodes (new/free/clear), segments,    origin
 *                  warnings, accessors, paths, cfg_parse_block
 *   cfg_merge.c    assigning a key: append, replace, merge blocks;  tree
 *                  dotted paths
 *   cfg_lookup.c   cfg_find_local, cfg_find (climbing blocks),      tree
 *                  cfg_find_block
 *   cfg_resolve.c  cfg_value: `$name$` expansion, cycle checks      lookup tree
 *   cfg_value.c    typed views of scalars: bool, int, real, array   tree
 *   cfg_parse.c    legacy text -> entries of a block; include=;     lex merge tree
 *                  arrays of blocks in a scalar (cfg_block_array)
 *   cfg_ini.c      .ini text (through inih) -> entries              lookup merge tree
 *   cfg_load.c     cfg_new; files (configFile=, include=), strings, parse ini lex tree
 *                  command-line arguments
 *   cfg_print.c    --print-config                                   resolve tree
 *
 * Every file after cfg_origin.c also reports through cfg_error. Private headers: cfg_lex.h,
 * this one (tree), cfg_merge.h, cfg_parse.h, cfg_ini.h; the other files implement cfg.h.
 *
 * The language is recursive where these files meet: a block's text is parsed only when the
 * block is first looked up or merged into (tree and merge need parse), and include= inside
 * text reads a file (parse needs load). Those two calls go up through the struct cfg_reader
 * that cfg_new (cfg_load.c) installs in every config, so no file names one after it.
 */
#ifndef PT_PARSERS_CFG_INTERNAL_H
#define PT_PARSERS_CFG_INTERNAL_H

#include "parsers/cfg.h"

/* A piece of block text waiting to be parsed (a block can have several after merges). */
struct cfg_seg {
    char *text; /* owned, NUL-terminated, len bytes */
    size_t len;
    struct cfg_origin at; /* position of text[0] */
    const char *dir;      /* directory for relative include= paths (interned) */
    struct cfg_seg *next;
};

struct cfg_node {
    struct cfg *cfg;
    struct cfg_node *parent;
    struct cfg_node *next;     /* sibling, in first-definition order */
    char *key;                 /* as written */
    struct cfg_origin origin;  /* of the key */
    struct cfg_origin vorigin; /* of the value */
    int depth;                 /* root = 0 */
    int used;

    /* scalar */
    char *value;            /* raw, quotes stripped; NULL for a block */
    char *resolved;         /* cache for cfg_value */
    int resolving;          /* cycle guard */
    struct cfg_node *array; /* cfg_block_array's blocks of the value, linked by next (owned) */

    /* block */
    int is_block;
    char open; /* '[' or '{' */
    struct cfg_node *first, *last;
    struct cfg_seg *pending; /* not yet parsed, in order */
    struct cfg_seg *parsed;  /* parsed (kept for raw printing) */
    char *parse_error;       /* set when parsing the text failed */
};

/* How text gets into a config, for the tree (lazy block parsing) and the parser (include=),
 * which must not call the files that implement it by name. Both return 0 or an error. */
struct cfg_reader {
    /* Parse one segment of legacy text into block, in order after its earlier entries. */
    int (*parse_segment)(struct cfg_node *block, struct cfg_seg *seg, struct pt_err *e);
    /* Read the file `path` (relative to dir unless absolute) into block for include=,
     * named at `at`. */
    int (*include_file)(struct cfg_node *block, const char *path, const char *dir,
                        const struct cfg_origin *at, struct pt_err *e);
};

struct cfg {
    struct cfg_node root;
    const struct cfg_reader *reader; /* not owned; set by cfg_new */
    char **strings;                  /* interned file names and directories */
    size_t nstrings;
    char **loaded; /* real paths of files read (configFile= and include=) */
    size_t nloaded;
    char **warnings;
    size_t nwarnings;
    unsigned options; /* CFG_LOAD_* (cfg_load_string_opts) */
};

/* New, empty config whose text is read by `reader` (which must outlive it). NULL on out of
 * memory. cfg_new (cfg_load.c) calls this with the language's reader; cfg_free frees. */
struct cfg *cfg_tree_new(const struct cfg_reader *reader);

/* Intern a string in c (file names, directories); NULL on out of memory. */
const char *cfg_intern(struct cfg *c, const char *s);

/* Case-insensitive ASCII equality of a NUL-terminated key and a counted one. */
int cfg_key_eq(const char *a, const char *b, size_t blen);

/* New node under parent (not linked): a scalar with no value yet, its key a copy of
 * key[0..keylen). Error when parent is already CFG_MAX_DEPTH deep. */
struct cfg_node *cfg_node_new(struct cfg *c, struct cfg_node *parent, const char *key,
                              size_t keylen, const struct cfg_origin *at, struct pt_err *e);
/* Free a node, its children and segments (not unlinking it). NULL is a no-op. */
void cfg_node_free(struct cfg_node *n);
/* Drop a node's value (scalar or block: children, segments, caches) but keep its key,
 * links and origins; it is left a scalar with no value. */
void cfg_node_clear(struct cfg_node *n);
/* The child of block whose key equals key[0..len) (case-insensitively), or NULL. Looks only
 * at entries already parsed. */
struct cfg_node *cfg_node_child(const struct cfg_node *block, const char *key, size_t len);

/* Append text (copied) as a pending segment of block. */
int cfg_add_segment(struct cfg_node *block, const char *text, size_t len,
                    const struct cfg_origin *at, const char *dir, struct pt_err *e);

#endif
