/* DataParallelASGD's configuration (asgd_config.c): its block's keys, how it is read and
 * described in the training loop's line; internal to src/parallel (asgd.c's method row). */
#ifndef PT_PARALLEL_ASGD_CONFIG_H
#define PT_PARALLEL_ASGD_CONFIG_H

#include <stddef.h>

#include "core/err.h"
#include "parallel/parallel.h"

/* The DataParallelASGD block's keys. */
extern const struct cfg_schema parallel_asgd_schema;
/* The DataParallelASGD block of ParallelTrain pt into config (a struct asgd_config). */
int asgd_config_read(struct cfg_node *pt, void *config, struct pt_err *e);
/* The method's words in the training loop's line. */
void asgd_config_describe(const struct parallel_config *pc, size_t epoch, int rank, int workers,
                          char *buf, size_t size);

#endif
