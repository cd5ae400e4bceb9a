/* CNTK text-format reader (SPEC §6). This issue provides the reader block's schema; the
 * reader arrives with single-worker training. */
#ifndef PT_READER_READER_H
#define PT_READER_READER_H

#include "parsers/schema.h"

extern const struct cfg_schema reader_schema;       /* reader = [ ... ] */
extern const struct cfg_schema reader_input_schema; /* reader.input.<stream> = [ ... ] */

#endif
