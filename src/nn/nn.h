/* Networks, layers and model files (SPEC §4). This issue provides the
 * SimpleNetworkBuilder schema; the network arrives with single-worker training. */
#ifndef PT_NN_NN_H
#define PT_NN_NN_H

#include "parsers/schema.h"

extern const struct cfg_schema nn_simple_builder_schema; /* SimpleNetworkBuilder = [...] */

#endif
