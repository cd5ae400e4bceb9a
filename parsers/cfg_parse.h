/* Private to parsers/cfg_*.c: the legacy text parser (see the map in cfg_internal.h).
 *
 * Grammar (CNTK's "configFile=" dialect):
 *   text   := { sep | comment | entry }
 *   sep    := newline | ';' | ','
 *   entry  := key [ '=' value ]          (a bare key means key=true)
 *   value  := '[' balanced-text ']' | '{' balanced-text '}' | scalar
 *   scalar := text up to a separator at bracket depth 0; "..." and (...) protect separators
 * A comment is '#' (or '//') that starts an entry or follows a blank, ';', ',', '[' or '{';
 * so "1#INF" is a value. Block bodies are not parsed here: their text is kept as a pending
 * segment of the block node and parsed on first lookup (cfg_parse_block). */
#ifndef PT_PARSERS_CFG_PARSE_H
#define PT_PARSERS_CFG_PARSE_H

#include "parsers/cfg_internal.h"

/* Parse one segment of text into block: each entry is assigned with cfg_insert_path, and
 * `include = a+b` reads the files through block's config reader, relative to seg->dir. The
 * segment is only read. Stops at the first error (entries before it stay). */
int cfg_parse_segment(struct cfg_node *block, struct cfg_seg *seg, struct pt_err *e);

#endif
