/* File-system helpers: parent directories, safe writes, and the identity of input files.
 *
 * How partrain writes a file (models, checkpoints):
 *   - nothing is written through a symbolic link: a target that is a symlink is refused, and
 *     so is a target that exists but is not a regular file;
 *   - the bytes go to a new temporary in the target's directory, created with
 *     O_CREAT|O_EXCL|O_NOFOLLOW (so it can be neither an existing file nor a planted link)
 *     and named `.<base>.tmp.<host>.<pid>.<6 random chars>`, mode 0644 less the umask;
 *   - the temporary is fsync'd, renamed over the target, and the directory is fsync'd: a
 *     crash leaves the old file or the new one, never a torn one.
 * Temporaries left by killed runs are removed by pt_fs_remove_stale (only those of this
 * host whose process is gone: a temporary of another host, or of a live process, is never
 * touched). Streams (the log, perfStatsFile) are opened with pt_fs_open_stream. */
#ifndef PT_CORE_FS_H
#define PT_CORE_FS_H

#include <stdio.h>
#include <sys/types.h>

#include "core/err.h"

/* Create the directories leading to `file` (like mkdir -p of its dirname), as CNTK does
 * for log and model files. Existing directories are fine. */
int pt_make_parent_dirs(const char *file, struct pt_err *e);

/* A file being replaced atomically. */
struct pt_file_out {
    int fd; /* the temporary, open for reading and writing; -1 once closed */
    char path[4096];
    char tmp[4400];
};

/* Refuse path if it is a symlink or exists as anything but a regular file, then create
 * its temporary (make_dirs: create the parent directories first). what ("model file",
 * "checkpoint") names the file in messages. */
int pt_file_begin(struct pt_file_out *o, const char *path, int make_dirs, const char *what,
                  struct pt_err *e);
/* fsync and close the temporary (unless the caller closed it and set fd = -1 after its own
 * fsync), check the target again, rename, fsync the directory. On failure the temporary is
 * removed and the old file is untouched. */
int pt_file_commit(struct pt_file_out *o, const char *what, struct pt_err *e);
/* Give up: close and remove the temporary. Safe after a failed call and twice. */
void pt_file_abort(struct pt_file_out *o);
/* The whole of a text file written so: fill(f, arg, e) writes it to the temporary's stream,
 * which is then flushed, fsync'd and committed; on any failure nothing is left. */
int pt_file_write_text(const char *path, int make_dirs, const char *what,
                       int (*fill)(FILE *f, void *arg, struct pt_err *e), void *arg,
                       struct pt_err *e);

/* The whole of file path, at most max bytes, into *out (malloc'd, NUL-terminated) and *len:
 * 0; -1 when it cannot be opened (errno says why); -2 when it is larger than max, a read
 * fails, or memory runs out. */
int pt_file_read_all(const char *path, size_t max, char **out, size_t *len);

/* Open a stream for writing (the log, perfStatsFile): a regular file is created or
 * truncated, never through a symlink; a character device, FIFO or socket (/dev/null,
 * /dev/stderr, a pipe) is written as is, also when reached through a symlink. Anything
 * else is refused. *out is line-buffered by the caller's choice. */
int pt_fs_open_stream(const char *path, FILE **out, struct pt_err *e);

/* Remove the temporaries of dead runs of this host for targets in path's directory whose
 * name begins with path's base name (path itself, path.3, path.3.ckp, ...). Calls
 * note(arg, name) for each one removed. Returns how many were removed. */
int pt_fs_remove_stale(const char *path, void (*note)(void *arg, const char *name), void *arg);

/* ------------------------------------------------------------------ inputs */

/* A file the run reads: nothing it writes may be that file. */
struct pt_input {
    dev_t dev;
    ino_t ino;
    char *real; /* realpath */
    char *what; /* "the data file of train.reader (t.cfg:20:9)" */
};

struct pt_inputs {
    struct pt_input *v;
    size_t n;
};

/* Note path as an input described by what. A path that does not exist is skipped (its
 * reader reports it). */
int pt_inputs_add(struct pt_inputs *ins, const char *path, const char *what, struct pt_err *e);
/* The input that path is (same device and inode, following links), or NULL. */
const struct pt_input *pt_inputs_find(const struct pt_inputs *ins, const char *path);
void pt_inputs_free(struct pt_inputs *ins);

/* realpath of path's directory joined with its base name (the base itself is not
 * resolved): where a write to path lands. NULL when the directory does not exist. The
 * caller frees. */
char *pt_fs_canonical(const char *path);

#endif
