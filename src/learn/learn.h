/* Learners and schedules (SPEC §5). This issue provides the SGD block's schema; the
 * learners themselves arrive with single-worker training. */
#ifndef PT_LEARN_LEARN_H
#define PT_LEARN_LEARN_H

#include "parsers/schema.h"

/* Keys of the SGD = [ ... ] block. */
extern const struct cfg_schema learn_sgd_schema;

#endif
