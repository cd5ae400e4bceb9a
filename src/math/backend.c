/* Backend descriptions and probes; see backend.h. */
#include "math/backend.h"

#include <cblas.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* ------------------------------------------------------------------ the CUDA backend
 *
 * The cuBLAS backend is a plugin, partrain-cuda.so (built with --with-cuda; see
 * cuda_backend.cu), opened only when a GPU is asked for: a run on the CPU maps neither
 * cuBLAS nor the CUDA runtime (170 MiB of resident memory at start-up when linked in).
 * The probe asks the driver (libcuda.so.1) alone. */

#ifdef PT_HAVE_CUDA
/* The driver API's few calls the probe needs (cuda.h's types: CUresult and CUdevice are
 * ints), looked up in libcuda.so.1, which the NVIDIA driver installs. */
typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_count_fn)(int *n);
typedef int (*cu_get_fn)(int *dev, int ordinal);
typedef int (*cu_name_fn)(char *name, int len, int dev);
typedef int (*cu_errstr_fn)(int rc, const char **s);

int backend_cuda_probe(char *name, size_t name_size, char *why, size_t why_size)
{
    if (name_size)
        name[0] = '\0';
    static void *drv; /* kept open: the plugin opens it again */
    if (!drv && !(drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))) {
        snprintf(why, why_size, "no usable CUDA device: no NVIDIA driver (%s)", dlerror());
        return 0;
    }
    cu_init_fn init = (cu_init_fn)dlsym(drv, "cuInit");
    cu_count_fn count = (cu_count_fn)dlsym(drv, "cuDeviceGetCount");
    cu_get_fn get = (cu_get_fn)dlsym(drv, "cuDeviceGet");
    cu_name_fn dname = (cu_name_fn)dlsym(drv, "cuDeviceGetName");
    cu_errstr_fn errstr = (cu_errstr_fn)dlsym(drv, "cuGetErrorString");
    if (!init || !count || !get || !dname) {
        snprintf(why, why_size, "no usable CUDA device: libcuda.so.1 lacks the driver API");
        return 0;
    }
    int n = 0, rc = init(0);
    if (rc == 0)
        rc = count(&n);
    if (rc == 100 /* CUDA_ERROR_NO_DEVICE */ || (rc == 0 && n == 0)) {
        snprintf(why, why_size, "no CUDA device present");
        return 0;
    }
    if (rc != 0) {
        const char *s = NULL;
        if (!errstr || errstr(rc, &s) != 0 || !s)
            s = "unknown driver error";
        snprintf(why, why_size, "no usable CUDA device: %s (CUresult %d)", s, rc);
        return 0;
    }
    int dev = 0;
    if (name_size && get(&dev, 0) == 0 && dname(name, (int)name_size, dev) != 0)
        name[0] = '\0';
    snprintf(why, why_size, "%d CUDA device%s", n, n == 1 ? "" : "s");
    return n;
}

/* The plugin's path into buf: PT_CUDA_PLUGIN, else partrain-cuda.so beside the running
 * program (a build tree, a bundle), else in PT_PKGLIBDIR (installed). */
static const char *plugin_path(char *buf, size_t size, char *tried, size_t tried_size)
{
    const char *env = getenv("PT_CUDA_PLUGIN");
    if (env && *env) {
        snprintf(tried, tried_size, "PT_CUDA_PLUGIN=%s", env);
        return env;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    tried[0] = '\0';
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(buf, size, "%s/%s", exe, PT_CUDA_PLUGIN_NAME);
            if (access(buf, F_OK) == 0)
                return buf;
            snprintf(tried, tried_size, "%s, ", buf);
        }
    }
    snprintf(buf, size, "%s/%s", PT_PKGLIBDIR, PT_CUDA_PLUGIN_NAME);
    size_t used = strlen(tried);
    snprintf(tried + used, tried_size - used, "%s", buf);
    return buf;
}

/* The plugin's entry point, opened once (NULL with the reason in why). */
static backend_cuda_plugin_fn plugin_entry(char *why, size_t why_size)
{
    static backend_cuda_plugin_fn entry;
    static void *handle;
    if (entry)
        return entry;
    char buf[4200], tried[8600];
    const char *path = plugin_path(buf, sizeof buf, tried, sizeof tried);
    if (access(path, F_OK) != 0) {
        snprintf(why, why_size,
                 "the CUDA backend %s is not installed (looked for %s; PT_CUDA_PLUGIN=PATH names "
                 "it)",
                 PT_CUDA_PLUGIN_NAME, tried);
        return NULL;
    }
    if (!handle && !(handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        snprintf(why, why_size, "cannot load the CUDA backend: %s", dlerror());
        return NULL;
    }
    backend_cuda_abi_fn abi = (backend_cuda_abi_fn)dlsym(handle, "pt_cuda_plugin_abi");
    backend_cuda_plugin_fn fn = (backend_cuda_plugin_fn)dlsym(handle, "pt_cuda_plugin_new");
    if (!abi || !fn || abi() != PT_CUDA_PLUGIN_ABI) {
        snprintf(why, why_size,
                 "the CUDA backend %s was built for another trainer (interface %ld, this "
                 "trainer's %ld): install the two from one build",
                 path, abi ? abi() : -1L, (long)PT_CUDA_PLUGIN_ABI);
        return NULL; /* left open: a mismatched plugin stays refused */
    }
    return entry = fn;
}

int backend_cuda_available(char *why, size_t why_size)
{
    return plugin_entry(why, why_size) != NULL;
}

int backend_cuda_new(struct backend **out, int device, char *name, size_t name_size,
                     struct pt_err *e)
{
    *out = NULL;
    if (name_size)
        name[0] = '\0';
    char why[1024];
    backend_cuda_plugin_fn fn = plugin_entry(why, sizeof why);
    if (!fn)
        return pt_err_set(e, PT_ESYS, "error: deviceId=%d: %s", device, why);
    return fn(out, device, name, name_size, e);
}
#else
int backend_cuda_probe(char *name, size_t name_size, char *why, size_t why_size)
{
    if (name_size)
        name[0] = '\0';
    snprintf(why, why_size, "built without CUDA (configure --with-cuda)");
    return 0;
}

int backend_cuda_available(char *why, size_t why_size)
{
    snprintf(why, why_size, "built without CUDA (configure --with-cuda)");
    return 0;
}

int backend_cuda_new(struct backend **out, int device, char *name, size_t name_size,
                     struct pt_err *e)
{
    *out = NULL;
    if (name_size)
        name[0] = '\0';
    return pt_err_set(e, PT_EUSER,
                      "error: deviceId=%d: this trainer was built without CUDA (configure "
                      "--with-cuda)",
                      device);
}
#endif
