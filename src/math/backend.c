/* Backend descriptions and probes; see backend.h. */
#include "math/backend.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"

const char *backend_cpu_describe(char *buf, size_t size)
{
    const char *config = "OpenBLAS", *core = "unknown";
    int threads = -1;
#ifdef HAVE_OPENBLAS_GET_CONFIG
    config = openblas_get_config();
#endif
#ifdef HAVE_OPENBLAS_GET_CORENAME
    core = openblas_get_corename();
#endif
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
    threads = openblas_get_num_threads();
#endif
    if (threads > 0)
        snprintf(buf, size, "%s (kernel %s, %d thread%s)", config, core, threads,
                 threads == 1 ? "" : "s");
    else
        snprintf(buf, size, "%s (kernel %s)", config, core);
    return buf;
}

int backend_cpu_set_threads(int requested, int ranks_on_node)
{
    int n = requested;
    if (n <= 0) {
        const char *env = getenv("OPENBLAS_NUM_THREADS");
        n = env && atoi(env) > 0 ? atoi(env) : 0;
    }
    if (n <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n = (int)(cores / (ranks_on_node > 0 ? ranks_on_node : 1));
        if (n < 1)
            n = 1;
    }
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
    openblas_set_num_threads(n);
    return openblas_get_num_threads();
#else
    return n;
#endif
}

int backend_cuda_probe(char *name, size_t name_size, char *why, size_t why_size)
{
    if (name_size)
        name[0] = '\0';
#ifdef PT_HAVE_CUDA
    return backend_cuda_probe_impl(name, name_size, why, why_size);
#else
    snprintf(why, why_size, "built without CUDA (configure --with-cuda)");
    return 0;
#endif
}

int backend_cuda_new(struct backend **out, int device, char *name, size_t name_size,
                     struct pt_err *e)
{
    *out = NULL;
    if (name_size)
        name[0] = '\0';
#ifdef PT_HAVE_CUDA
    return backend_cuda_new_impl(out, device, name, name_size, e);
#else
    (void)device;
    return pt_err_set(e, PT_EUSER,
                      "error: deviceId=%d: this trainer was built without CUDA (configure "
                      "--with-cuda)",
                      device);
#endif
}
