/* File-system helpers. */
#ifndef PT_CORE_FS_H
#define PT_CORE_FS_H

#include "core/err.h"

/* Create the directories leading to `file` (like mkdir -p of its dirname), as CNTK does
 * for log and model files. Existing directories are fine. */
int pt_make_parent_dirs(const char *file, struct pt_err *e);

#endif
