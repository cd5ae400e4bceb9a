/* Parallel SGD engines (SPEC §7). This issue provides the ParallelTrain schemas; the
 * engines arrive with the communicator issues. */
#ifndef PT_PARALLEL_PARALLEL_H
#define PT_PARALLEL_PARALLEL_H

#include "parsers/schema.h"

extern const struct cfg_schema parallel_train_schema;       /* SGD.ParallelTrain */
extern const struct cfg_schema parallel_dpsgd_schema;       /* ...DataParallelSGD */
extern const struct cfg_schema parallel_ma_schema;          /* ...ModelAveragingSGD */
extern const struct cfg_schema parallel_bmuf_schema;        /* ...BlockMomentumSGD */
extern const struct cfg_schema parallel_asgd_schema;        /* ...DataParallelASGD */
extern const struct cfg_schema parallel_asgd_adjust_schema; /* ...AdjustLearningRateAtBeginning */

#endif
