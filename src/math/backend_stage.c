/* Staging of device buffers for the communicator, host memory for transfers, and zeroed
 * allocation; see backend.h.
 * Written once over ops->upload / ops->download, so every backend has them; on a
 * host-memory backend they cost nothing. */
#include <stdlib.h>
#include <string.h>

#include "math/backend.h"

/* Make the stage's mirror hold at least n floats, keeping what it held: host memory from
 * the backend's host_alloc (pinned on a device), else malloc. */
static int stage_reserve(struct backend *b, struct bk_stage *s, size_t n, struct pt_err *e)
{
    if (s->cap >= n && s->host)
        return 0;
    size_t bytes = (n ? n : 1) * sizeof(float);
    float *h = b->ops->host_alloc ? b->ops->host_alloc(b, bytes) : malloc(bytes);
    if (!h)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (a transfer buffer of %zu floats)",
                          n);
    if (s->host && s->cap)
        memcpy(h, s->host, s->cap * sizeof *h);
    bk_stage_free(s);
    s->host = h;
    s->cap = n;
    s->bk = b->ops->host_alloc ? b : NULL;
    return 0;
}

int bk_stage_out(struct backend *b, struct bk_stage *s, float *x, size_t first, size_t n, float **h,
                 struct pt_err *e)
{
    *h = x;
    if (b->host_memory)
        return 0;
    *h = NULL;
    int rc = stage_reserve(b, s, first + n, e);
    if (rc == 0)
        rc = b->ops->download(b, s->host + first, x + first, n, e);
    if (rc == 0)
        *h = s->host;
    return rc;
}

int bk_stage_in(struct backend *b, float *x, const float *h, size_t first, size_t n,
                struct pt_err *e)
{
    if (b->host_memory || h == x)
        return 0;
    return b->ops->upload(b, x + first, h + first, n, e);
}

int bk_stage_for_write(struct backend *b, struct bk_stage *s, float *x, size_t n, float **h,
                       struct pt_err *e)
{
    *h = x;
    if (b->host_memory)
        return 0;
    *h = NULL;
    int rc = stage_reserve(b, s, n, e);
    if (rc == 0)
        *h = s->host;
    return rc;
}

void bk_stage_free(struct bk_stage *s)
{
    if (s->bk && s->bk->ops->host_free)
        s->bk->ops->host_free(s->bk, s->host);
    else
        free(s->host);
    s->host = NULL;
    s->cap = 0;
    s->bk = NULL;
}

int bk_alloc_zero(struct backend *b, size_t n, float **out, struct pt_err *e)
{
    int rc = b->ops->alloc(b, n, out, e);
    if (rc == 0)
        b->ops->fill(b, *out, n, 0.0f);
    return rc;
}

void *bk_host_malloc(struct backend *b, size_t bytes)
{
    return b->ops->host_alloc ? b->ops->host_alloc(b, bytes) : malloc(bytes);
}

void bk_host_release(struct backend *b, void *p)
{
    if (p && b->ops->host_alloc)
        b->ops->host_free(b, p);
    else
        free(p);
}

void *bk_host_malloc_cb(void *ctx, size_t bytes)
{
    return bk_host_malloc(ctx, bytes);
}

void bk_host_release_cb(void *ctx, void *p)
{
    bk_host_release(ctx, p);
}
