/* Private to parsers/cfg_*.c: the .ini front end (see the map in cfg_internal.h). */
#ifndef PT_PARSERS_CFG_INI_H
#define PT_PARSERS_CFG_INI_H

#include "parsers/cfg_internal.h"

/* Parse .ini text (len bytes, already checked with cfg_check_text) from the file `name`
 * (interned) into block: sections become blocks, values are typed as everywhere else, and
 * block values keep `dir` for their include= paths. */
int cfg_parse_ini(struct cfg_node *block, const char *name, const char *text, size_t len,
                  const char *dir, struct pt_err *e);

#endif
