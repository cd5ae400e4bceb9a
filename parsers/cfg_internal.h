/* Private to parsers/cfg_*.c: the tree's representation. */
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
    char *value;    /* raw, quotes stripped; NULL for a block */
    char *resolved; /* cache for cfg_value */
    int resolving;  /* cycle guard */

    /* block */
    int is_block;
    char open; /* '[' or '{' */
    struct cfg_node *first, *last;
    struct cfg_seg *pending; /* not yet parsed, in order */
    struct cfg_seg *parsed;  /* parsed (kept for raw printing) */
    char *parse_error;       /* set when parsing the text failed */
};

struct cfg {
    struct cfg_node root;
    char **strings; /* interned file names and directories */
    size_t nstrings;
    char **loaded; /* real paths of files read (configFile= and include=) */
    size_t nloaded;
    char **warnings;
    size_t nwarnings;
};

/* Intern a string in c (file names, directories); NULL on out of memory. */
const char *cfg_intern(struct cfg *c, const char *s);

/* New node under parent (not linked). */
struct cfg_node *cfg_node_new(struct cfg *c, struct cfg_node *parent, const char *key,
                              size_t keylen, const struct cfg_origin *at, struct pt_err *e);
/* Free a node, its children and segments (not unlinking it). */
void cfg_node_free(struct cfg_node *n);
/* Put `n` (a new, unlinked node) into block under its key: append, replace, or merge. n
 * is consumed. */
int cfg_insert(struct cfg_node *block, struct cfg_node *n, struct pt_err *e);
/* Insert with CNTK's dotted-path extension: "a.b.c" descends into (or creates) blocks. */
int cfg_insert_path(struct cfg_node *block, const char *key, size_t keylen,
                    const struct cfg_origin *at, struct cfg_node *value, struct pt_err *e);
/* Append text (copied) as a pending segment of block. */
int cfg_add_segment(struct cfg_node *block, const char *text, size_t len,
                    const struct cfg_origin *at, const char *dir, struct pt_err *e);

/* Parse one segment into block (cfg_parse.c). */
int cfg_parse_segment(struct cfg_node *block, struct cfg_seg *seg, struct pt_err *e);
/* Read a file into block (configFile= when include == 0, include= otherwise). */
int cfg_read_file(struct cfg_node *block, const char *path, const char *dir, int include,
                  const struct cfg_origin *at, struct pt_err *e);
/* .ini front end (cfg_ini.c): text already validated. */
int cfg_parse_ini(struct cfg_node *block, const char *name, const char *text, size_t len,
                  const char *dir, struct pt_err *e);
/* Check text for NUL bytes and invalid UTF-8; error names name:line:col. */
int cfg_check_text(const char *name, const char *text, size_t len, struct pt_err *e);

/* Case-insensitive ASCII equality of a NUL-terminated key and a counted one. */
int cfg_key_eq(const char *a, const char *b, size_t blen);

#endif
