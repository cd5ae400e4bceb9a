/* Pipelined ring allreduce of floats (SUM), over point-to-point messages; see comm.h,
 * allreduce algorithm "ring".
 *
 * P ranks in ring order, r's right neighbour r+1, its left r-1 (mod P). The buffer is cut
 * into P chunks (chunk k: elements [k*n/P, (k+1)*n/P), the remainder spread over the first
 * ones) and each chunk into segments of `seg` elements. 2(P-1) steps:
 *   reduce-scatter, step t = 0..P-2:  send chunk r-t, receive chunk r-t-1 and add it
 *                                     to the own copy (own + received, in that order)
 *   allgather, step t = P-1+s:        send chunk r+1-s, receive chunk r-s and copy it
 * Whatever a step receives is what the next step sends, so segment j of step t+1 leaves as
 * soon as segment j of step t has arrived and been added: every segment travels as its own
 * message, many are in flight at once, and the links stay busy (one message of the whole
 * chunk left the TCP link idle between the rendezvous handshakes; README "Communication at
 * the wire limit"). Step t+1's receives are posted when step t starts, into the other half
 * of a two-chunk scratch buffer; a copy into buf waits for the sends that still read the
 * same elements (the reduce-scatter's send of that chunk).
 *
 * Every element's final value is computed once, by the rank that owns its chunk at the end
 * of the reduce-scatter, and copied to the others: all ranks hold the same bits. Segment j
 * uses tag j; MPI's non-overtaking order keeps the steps apart. */
#include "comm/comm_internal.h"

#include <stdlib.h>
#include <string.h>

struct ring {
    MPI_Comm mc;
    int rank, size;
    float *buf;
    size_t n, seg, nseg_max;
    float *scr[2];     /* receive scratch, one chunk each, by step parity */
    MPI_Request *rreq; /* [2][nseg_max] receives by step parity */
    MPI_Request *sreq; /* [steps][nseg_max] sends by step */
    const char *name;
    struct pt_err *e;
};

static size_t chunk_lo(const struct ring *g, int k)
{
    size_t P = (size_t)g->size, q = g->n / P, rem = g->n % P, kk = (size_t)k;
    return kk * q + (kk < rem ? kk : rem);
}

static size_t chunk_len(const struct ring *g, int k)
{
    return chunk_lo(g, k + 1) - chunk_lo(g, k);
}

static int mod(int a, int p)
{
    return ((a % p) + p) % p;
}

/* The chunk step t sends and the one it receives. */
static int send_chunk(const struct ring *g, int t)
{
    int P = g->size;
    return t < P - 1 ? mod(g->rank - t, P) : mod(g->rank + 1 - (t - (P - 1)), P);
}

static int recv_chunk(const struct ring *g, int t)
{
    int P = g->size;
    return t < P - 1 ? mod(g->rank - t - 1, P) : mod(g->rank - (t - (P - 1)), P);
}

static size_t nseg(const struct ring *g, int k)
{
    size_t len = chunk_len(g, k);
    return (len + g->seg - 1) / g->seg;
}

static size_t seg_len(const struct ring *g, int k, size_t j)
{
    size_t len = chunk_len(g, k), lo = j * g->seg;
    return len - lo < g->seg ? len - lo : g->seg;
}

static int fail(struct ring *g, int rc, const char *call)
{
    return comm_mpi_fail(g->e, rc, call, g->name);
}

/* Send segment j of step t (from buf). */
static int send_seg(struct ring *g, int t, size_t j)
{
    int k = send_chunk(g, t);
    float *p = g->buf + chunk_lo(g, k) + j * g->seg;
    int right = mod(g->rank + 1, g->size);
    int rc = MPI_Isend(p, (int)seg_len(g, k, j), MPI_FLOAT, right, (int)j, g->mc,
                       &g->sreq[(size_t)t * g->nseg_max + j]);
    return rc == MPI_SUCCESS ? 0 : fail(g, rc, "MPI_Isend");
}

/* Post every receive of step t (into the scratch half of its parity). */
static int post_recvs(struct ring *g, int t)
{
    int k = recv_chunk(g, t), left = mod(g->rank - 1, g->size);
    MPI_Request *rq = g->rreq + (size_t)(t % 2) * g->nseg_max;
    for (size_t j = 0; j < nseg(g, k); j++) {
        int rc = MPI_Irecv(g->scr[t % 2] + j * g->seg, (int)seg_len(g, k, j), MPI_FLOAT, left,
                           (int)j, g->mc, &rq[j]);
        if (rc != MPI_SUCCESS)
            return fail(g, rc, "MPI_Irecv");
    }
    return 0;
}

static int wait_sends(struct ring *g, int t)
{
    size_t cnt = nseg(g, send_chunk(g, t));
    int rc = MPI_Waitall((int)cnt, g->sreq + (size_t)t * g->nseg_max, MPI_STATUSES_IGNORE);
    return rc == MPI_SUCCESS ? 0 : fail(g, rc, "MPI_Waitall");
}

/* Take step t's segments as they arrive: add or copy, pass each on to step t+1. */
static int run_step(struct ring *g, int t, int steps)
{
    int P = g->size, k = recv_chunk(g, t);
    size_t cnt = nseg(g, k);
    if (t >= P - 1) { /* the copy overwrites what the reduce-scatter sent of this chunk */
        int rc = wait_sends(g, t - (P - 1));
        if (rc)
            return rc;
    }
    MPI_Request *rq = g->rreq + (size_t)(t % 2) * g->nseg_max;
    float *dst = g->buf + chunk_lo(g, k);
    for (size_t done = 0; done < cnt; done++) {
        int idx = MPI_UNDEFINED;
        int rc = MPI_Waitany((int)cnt, rq, &idx, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return fail(g, rc, "MPI_Waitany");
        if (idx == MPI_UNDEFINED)
            break;
        size_t j = (size_t)idx, len = seg_len(g, k, j);
        float *d = dst + j * g->seg;
        const float *s = g->scr[t % 2] + j * g->seg;
        if (t < P - 1)
            for (size_t i = 0; i < len; i++)
                d[i] = d[i] + s[i];
        else
            memcpy(d, s, len * sizeof *d);
        if (t + 1 < steps && (rc = send_seg(g, t + 1, j)))
            return rc;
    }
    return 0;
}

static int ring_run(struct ring *g)
{
    int steps = 2 * (g->size - 1), rc = post_recvs(g, 0);
    for (size_t j = 0; rc == 0 && j < nseg(g, send_chunk(g, 0)); j++)
        rc = send_seg(g, 0, j);
    for (int t = 0; rc == 0 && t < steps; t++) {
        if (t + 1 < steps)
            rc = post_recvs(g, t + 1);
        if (rc == 0)
            rc = run_step(g, t, steps);
    }
    for (int t = 0; rc == 0 && t < steps; t++)
        rc = wait_sends(g, t);
    return rc;
}

/* Open MPI's btl_tcp_eager_limit read through the MPI tool interface; 0 where the library
 * has no such variable (another MPI, the TCP transport not loaded) or it cannot be read. */
static size_t tcp_eager_limit(void)
{
    int provided = 0, idx = -1, count = 0;
    size_t limit = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return 0;
    char name[128], desc[8];
    int name_len = (int)sizeof name, desc_len = (int)sizeof desc, verbosity, bind, scope;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_T_enum et;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index("btl_tcp_eager_limit", &idx) == MPI_SUCCESS &&
        MPI_T_cvar_get_info(idx, name, &name_len, &verbosity, &dt, &et, desc, &desc_len, &bind,
                            &scope) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
        union {
            int i;
            unsigned u;
            unsigned long ul;
            unsigned long long ull;
            char room[64];
        } v;
        memset(&v, 0, sizeof v);
        if (count == 1 && MPI_T_cvar_read(h, &v) == MPI_SUCCESS) {
            if (dt == MPI_INT)
                limit = v.i > 0 ? (size_t)v.i : 0;
            else if (dt == MPI_UNSIGNED)
                limit = v.u;
            else if (dt == MPI_UNSIGNED_LONG)
                limit = v.ul;
            else if (dt == MPI_UNSIGNED_LONG_LONG)
                limit = (size_t)v.ull;
        }
        MPI_T_cvar_handle_free(&h);
    }
    MPI_T_finalize();
    return limit;
}

int comm_ring_setup(struct comm *c, struct pt_err *e)
{
    /* MPI_T_init_thread costs about 0.2 s in Open MPI 4.1 (it registers every component's
     * variables): read once per process, and only where the ranks span several nodes
     * (the only place auto sends sums through the ring, and TCP is in play) */
    static size_t eager_read;
    static int eager_known;
    if (c->node_count > 1 && !eager_known) {
        eager_read = tcp_eager_limit();
        eager_known = 1;
    }
    size_t eager = c->node_count > 1 ? eager_read : 0;
    if (eager == 0)
        eager = (size_t)64 << 10; /* Open MPI's default */
    unsigned long long seg = COMM_SEGMENT_BYTES, all = 0;
    if (eager >= COMM_EAGER_MARGIN + 1024 && eager - COMM_EAGER_MARGIN < seg)
        seg = (eager - COMM_EAGER_MARGIN) & ~(size_t)63;
    int rc = MPI_Allreduce(&seg, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, c->mc);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Allreduce", "the ring's segment size");
    c->ring_segment = (size_t)all;
    return 0;
}

size_t comm_ring_segment_bytes(const struct comm *c)
{
    return c->opt.segment_bytes ? c->opt.segment_bytes : c->ring_segment;
}

int comm_ring_sum(struct comm *c, MPI_Comm mc, float *buf, size_t n, const char *name,
                  struct pt_err *e)
{
    struct ring g = {.mc = mc, .buf = buf, .n = n, .name = name, .e = e};
    int rc = MPI_Comm_rank(mc, &g.rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(mc, &g.size);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Comm_rank/size", name);
    if (g.size < 2 || n == 0)
        return 0;
    g.seg = comm_ring_segment_bytes(c) / sizeof(float);
    if (g.seg == 0)
        g.seg = 1;
    if (g.seg > c->piece)
        g.seg = c->piece;
    size_t chunk = chunk_len(&g, 0); /* the first chunk is the largest */
    g.nseg_max = (chunk + g.seg - 1) / g.seg;
    if (g.nseg_max > (size_t)COMM_SEGMENTS_MAX) { /* few, larger segments for huge buffers */
        g.seg = (chunk + COMM_SEGMENTS_MAX - 1) / COMM_SEGMENTS_MAX;
        g.nseg_max = (chunk + g.seg - 1) / g.seg;
    }
    size_t steps = 2 * (size_t)(g.size - 1);
    if (c->ring_cap < 2 * chunk) {
        float *p = pt_realloc(c->ring_scratch, 2 * chunk * sizeof *p, e);
        if (!p)
            return PT_ENOMEM;
        c->ring_scratch = p;
        c->ring_cap = 2 * chunk;
    }
    g.scr[0] = c->ring_scratch;
    g.scr[1] = c->ring_scratch + chunk;
    g.rreq = pt_malloc((2 + steps) * g.nseg_max * sizeof *g.rreq, e);
    if (!g.rreq)
        return PT_ENOMEM;
    g.sreq = g.rreq + 2 * g.nseg_max;
    for (size_t i = 0; i < (2 + steps) * g.nseg_max; i++)
        g.rreq[i] = MPI_REQUEST_NULL;
    rc = ring_run(&g);
    if (rc) /* leave nothing pending on the way out */
        for (size_t i = 0; i < (2 + steps) * g.nseg_max; i++)
            if (g.rreq[i] != MPI_REQUEST_NULL) {
                MPI_Cancel(&g.rreq[i]);
                MPI_Request_free(&g.rreq[i]);
            }
    free(g.rreq);
    return rc;
}
