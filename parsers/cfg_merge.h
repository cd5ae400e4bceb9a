/* Private to parsers/cfg_*.c: assigning a key in a block (see the map in
 * cfg_internal.h), for the text and .ini parsers. Assigning a key twice replaces its value,
 * except that a block assigned onto a block is merged (its text parsed after the old). */
#ifndef PT_PARSERS_CFG_MERGE_H
#define PT_PARSERS_CFG_MERGE_H

#include "parsers/cfg_internal.h"

/* Put `n` (a new, unlinked node) into block under its key: append, replace, or merge. n
 * is consumed, also on failure. */
int cfg_insert(struct cfg_node *block, struct cfg_node *n, struct pt_err *e);
/* Insert `value` (consumed, also on failure) under key[0..keylen) with CNTK's dotted-path
 * extension: "a.b.c" descends into (or creates) blocks a and b, parsing them first. */
int cfg_insert_path(struct cfg_node *block, const char *key, size_t keylen,
                    const struct cfg_origin *at, struct cfg_node *value, struct pt_err *e);

#endif
