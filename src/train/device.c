/* deviceId (SPEC §3): the backend a command computes on.
 *
 *   cpu, -1   the CPU backend (OpenBLAS)
 *   auto      a GPU when this build has CUDA (its plugin loads: said in the log when not)
 *             and the machine has one, else the CPU; the ranks of one node take the
 *             node's GPUs in turn (local rank mod GPUs), as CNTK's auto spreads its
 *             workers; the CPU after all when the network has nodes the GPU backend
 *             does not run (convolution, pooling), said in the log
 *   N         GPU N, on every rank that reads it (ranks may share a GPU); an error when
 *             there is no GPU N or the build has no CUDA
 *
 * The models are the same on either: parameters are downloaded before they are written,
 * so a checkpoint written on a GPU resumes on the CPU and back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "comm/comm.h"
#include "core/log.h"
#include "math/backend.h"
#include "train/train_internal.h"

int train_device_read(struct cfg_node *command, struct train_device *d, struct pt_err *e)
{
    struct cfg_val v;
    memset(d, 0, sizeof *d);
    d->id = TRAIN_DEVICE_AUTO;
    int rc = cfg_schema_get(command, &train_top_schema, "deviceId", &v, e);
    if (rc)
        return rc;
    d->origin = v.node ? cfg_value_origin(v.node) : NULL;
    if (strcasecmp(v.s, "auto") == 0)
        d->id = TRAIN_DEVICE_AUTO;
    else if (strcasecmp(v.s, "cpu") == 0)
        d->id = TRAIN_DEVICE_CPU;
    else
        d->id = atoi(v.s) < 0 ? TRAIN_DEVICE_CPU : atoi(v.s); /* the schema checked it */
    return 0;
}

int train_backend_fallback(const struct train_device *d, struct pt_log *log, struct backend **be,
                           int rc, struct pt_err *e)
{
    if (rc != PT_EDEVICE || d->id != TRAIN_DEVICE_AUTO)
        return rc;
    if (log) {
        const char *at = strstr(e->msg, "error: ");
        size_t head = at ? (size_t)(at - e->msg) : 0;
        pt_log_printf(log, "deviceId=auto: %.*s%s; computing on the CPU instead.\n", (int)head,
                      e->msg, at ? at + 7 : e->msg);
    }
    backend_free(*be);
    *be = NULL;
    pt_err_clear(e);
    return backend_cpu_new(be, e);
}

int train_backend_open(const struct train_device *d, struct comm *comm, struct pt_log *log,
                       struct backend **out, struct pt_err *e)
{
    *out = NULL;
    int device = d->id;
    if (device == TRAIN_DEVICE_AUTO) {
        char name[256], why[1024];
        int n = backend_cuda_probe(name, sizeof name, why, sizeof why);
        device = n > 0 ? comm_local_rank(comm) % n : TRAIN_DEVICE_CPU;
        if (n > 0 && !backend_cuda_available(why, sizeof why)) { /* a GPU, no cuBLAS backend */
            if (log)
                pt_log_printf(log, "deviceId=auto: %s; computing on the CPU instead.\n", why);
            device = TRAIN_DEVICE_CPU;
        }
    }
    if (device == TRAIN_DEVICE_CPU)
        return backend_cpu_new(out, e);
    char name[256];
    struct pt_err ce = {0};
    int rc = backend_cuda_new(out, device, name, sizeof name, &ce);
    if (rc) {
        const char *msg = strncmp(ce.msg, "error: ", 7) == 0 ? ce.msg + 7 : ce.msg;
        if (!d->origin)
            return pt_err_set(e, rc, "error: %s", msg);
        char where[512];
        cfg_origin_str(d->origin, where, sizeof where);
        return pt_err_set(e, rc, "%s: error: %s", where, msg);
    }
    if (log)
        pt_log_printf(log, "Computing on GPU %d (%s) with cuBLAS%s.\n", device, name,
                      comm_size(comm) > 1 ? " (this rank)" : "");
    return 0;
}
