/* Sectioned binary files written atomically and read back verified (checkpoints; SPEC 8).
 *
 * Layout (little-endian):  magic[8] | u32 version | u32 sections |
 *                          { tag[16] (NUL-padded) | u64 length | bytes } ... |
 *                          u64 FNV-1a-64 of everything before it
 * Writing goes through pt_file_begin/commit (core/fs.h): a unique temporary in PATH's
 * directory, never through a symlink, fsync'd, renamed over PATH, and the directory is
 * fsync'd: a crash leaves either the old file or the new one, never a torn one. Reading
 * refuses a foreign magic, another version, a truncated file or a checksum mismatch, with
 * a message naming the file. */
#ifndef PT_CORE_BLOB_H
#define PT_CORE_BLOB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/err.h"
#include "core/fs.h"

#define BLOB_TAG 16

struct blob_writer {
    FILE *f;                /* over out.fd */
    struct pt_file_out out; /* the target and its temporary */
    uint32_t sections;
    long count_at; /* file offset of the section count */
};

/* Start writing path (creating its directory). magic: exactly 8 bytes. */
int blob_write_begin(struct blob_writer *w, const char *path, const char magic[8], uint32_t version,
                     struct pt_err *e);
int blob_write_section(struct blob_writer *w, const char *tag, const void *data, size_t len,
                       struct pt_err *e);
/* Finish: checksum, fsync, rename into place. On failure the old file is untouched. */
int blob_write_commit(struct blob_writer *w, struct pt_err *e);
/* Give up: remove the temporary file. Safe after a failed call. */
void blob_write_abort(struct blob_writer *w);

struct blob_section {
    char tag[BLOB_TAG + 1];
    const unsigned char *data;
    uint64_t len;
};

struct blob {
    unsigned char *bytes; /* the whole file */
    size_t size;
    uint32_t version;
    struct blob_section *sec;
    uint32_t nsec;
};

/* Read and verify path; what = "checkpoint" or "model" for messages. */
int blob_read(const char *path, const char magic[8], uint32_t version, const char *what,
              struct blob *out, struct pt_err *e);
/* The section called tag, or NULL. */
const struct blob_section *blob_find(const struct blob *b, const char *tag);
void blob_free(struct blob *b);

/* FNV-1a 64 of data, continuing from h (start with BLOB_FNV_START). */
#define BLOB_FNV_START 0xcbf29ce484222325ull
uint64_t blob_fnv1a(uint64_t h, const void *data, size_t len);

#endif
