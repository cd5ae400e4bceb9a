/* Atomic, checksummed section files; see blob.h. */
#include "core/blob.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"

uint64_t blob_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static int put(struct blob_writer *w, const void *data, size_t len, struct pt_err *e)
{
    if (len && fwrite(data, 1, len, w->f) != len)
        return pt_err_set(e, PT_ESYS, "error: writing '%s': %s", w->out.path, strerror(errno));
    return 0;
}

static void le32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static void le64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

int blob_write_begin(struct blob_writer *w, const char *path, const char magic[8], uint32_t version,
                     struct pt_err *e)
{
    memset(w, 0, sizeof *w);
    int rc = pt_file_begin(&w->out, path, 1, "checkpoint", e);
    if (rc)
        return rc;
    w->f = fdopen(w->out.fd, "w+b");
    if (!w->f) {
        rc = pt_err_set(e, PT_ESYS, "error: cannot create '%s': %s", path, strerror(errno));
        pt_file_abort(&w->out);
        return rc;
    }
    unsigned char head[16];
    memcpy(head, magic, 8);
    le32(head + 8, version);
    le32(head + 12, 0); /* section count, patched at commit */
    w->count_at = 12;
    return put(w, head, sizeof head, e);
}

int blob_write_section(struct blob_writer *w, const char *tag, const void *data, size_t len,
                       struct pt_err *e)
{
    unsigned char head[BLOB_TAG + 8] = {0};
    size_t tl = strlen(tag);
    memcpy(head, tag, tl < BLOB_TAG ? tl : BLOB_TAG);
    le64(head + BLOB_TAG, (uint64_t)len);
    int rc = put(w, head, sizeof head, e);
    if (rc == 0)
        rc = put(w, data, len, e);
    if (rc == 0)
        w->sections++;
    return rc;
}

/* Patch the section count, then checksum the file as it is on disk (which also proves the
 * bytes read back). */
static int finish_hash(struct blob_writer *w, struct pt_err *e)
{
    unsigned char cnt[4];
    le32(cnt, w->sections);
    if (fflush(w->f) != 0 || fseek(w->f, w->count_at, SEEK_SET) != 0 ||
        fwrite(cnt, 1, 4, w->f) != 4 || fflush(w->f) != 0 || fseek(w->f, 0, SEEK_SET) != 0)
        return pt_err_set(e, PT_ESYS, "error: writing '%s': %s", w->out.path, strerror(errno));
    uint64_t h = BLOB_FNV_START;
    unsigned char buf[1 << 16];
    for (size_t got; (got = fread(buf, 1, sizeof buf, w->f)) > 0;)
        h = blob_fnv1a(h, buf, got);
    if (ferror(w->f) || fseek(w->f, 0, SEEK_END) != 0)
        return pt_err_set(e, PT_ESYS, "error: reading back '%s'", w->out.path);
    unsigned char tail[8];
    le64(tail, h);
    if (fwrite(tail, 1, 8, w->f) != 8)
        return pt_err_set(e, PT_ESYS, "error: writing '%s': %s", w->out.path, strerror(errno));
    return 0;
}

int blob_write_commit(struct blob_writer *w, struct pt_err *e)
{
    int rc = finish_hash(w, e);
    if (rc == 0 && (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0))
        rc = pt_err_set(e, PT_ESYS, "error: flushing '%s': %s", w->out.path, strerror(errno));
    if (fclose(w->f) != 0 && rc == 0)
        rc = pt_err_set(e, PT_ESYS, "error: closing '%s': %s", w->out.path, strerror(errno));
    w->f = NULL;
    w->out.fd = -1; /* closed with w->f, after its fsync */
    if (rc == 0)
        rc = pt_file_commit(&w->out, "checkpoint", e);
    if (rc)
        blob_write_abort(w);
    return rc;
}

void blob_write_abort(struct blob_writer *w)
{
    if (w->f) {
        fclose(w->f);
        w->out.fd = -1;
    }
    w->f = NULL;
    pt_file_abort(&w->out);
}

static uint64_t rd64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static uint32_t rd32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int slurp(const char *path, const char *what, struct blob *out, struct pt_err *e)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        int err = f ? EISDIR : errno;
        if (f)
            fclose(f);
        return pt_err_set(e, PT_EUSER, "%s: error: cannot read %s file: %s", path, what,
                          strerror(err));
    }
    out->size = (size_t)st.st_size;
    out->bytes = malloc(out->size ? out->size : 1);
    size_t got = out->bytes ? fread(out->bytes, 1, out->size, f) : 0;
    fclose(f);
    if (!out->bytes)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory reading '%s'", path);
    if (got != out->size)
        return pt_err_set(e, PT_EUSER, "%s: error: cannot read %s file", path, what);
    return 0;
}

int blob_read(const char *path, const char magic[8], uint32_t version, const char *what,
              struct blob *out, struct pt_err *e)
{
    memset(out, 0, sizeof *out);
    int rc = slurp(path, what, out, e);
    const unsigned char *b = out->bytes;
    if (rc == 0 && (out->size < 8 || memcmp(b, magic, 8) != 0))
        rc = pt_err_set(e, PT_EUSER, "%s: error: not a partrain %s file (wrong magic number)", path,
                        what);
    if (rc == 0 && out->size < 24)
        rc = pt_err_set(e, PT_EUSER, "%s: error: truncated %s file (%zu bytes)", path, what,
                        out->size);
    if (rc == 0 && (out->version = rd32(b + 8)) != version)
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: %s file format version %u; this trainer reads version %u", path,
                        what, out->version, version);
    if (rc == 0 && rd64(b + out->size - 8) != blob_fnv1a(BLOB_FNV_START, b, out->size - 8))
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: %s file is corrupted or truncated (checksum mismatch)", path,
                        what);
    uint32_t n = rc == 0 ? rd32(b + 12) : 0;
    if (rc == 0 && n > (out->size - 24) / (BLOB_TAG + 8))
        rc = pt_err_set(e, PT_EUSER, "%s: error: %s file is damaged (section count)", path, what);
    if (rc == 0 && !(out->sec = calloc(n ? n : 1, sizeof *out->sec)))
        rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    size_t pos = 16, end = out->size - 8;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        if (end - pos < BLOB_TAG + 8 || rd64(b + pos + BLOB_TAG) > end - pos - BLOB_TAG - 8) {
            rc = pt_err_set(e, PT_EUSER, "%s: error: %s file is damaged (section %u)", path, what,
                            i);
            break;
        }
        memcpy(out->sec[i].tag, b + pos, BLOB_TAG);
        out->sec[i].len = rd64(b + pos + BLOB_TAG);
        out->sec[i].data = b + pos + BLOB_TAG + 8;
        pos += BLOB_TAG + 8 + out->sec[i].len;
        out->nsec = i + 1;
    }
    if (rc)
        blob_free(out);
    return rc;
}

const struct blob_section *blob_find(const struct blob *b, const char *tag)
{
    for (uint32_t i = 0; i < b->nsec; i++)
        if (strcmp(b->sec[i].tag, tag) == 0)
            return &b->sec[i];
    return NULL;
}

void blob_free(struct blob *b)
{
    free(b->bytes);
    free(b->sec);
    memset(b, 0, sizeof *b);
}
