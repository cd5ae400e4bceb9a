// CUDA side of the backend (built with --with-cuda). Compiled by nvcc; exports C symbols.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "math/backend.h"
}

extern "C" int backend_cuda_probe_impl(char *name, size_t name_size, char *why, size_t why_size)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) {
        snprintf(why, why_size, "no usable CUDA device: %s", cudaGetErrorString(rc));
        return 0;
    }
    if (n == 0) {
        snprintf(why, why_size, "no CUDA device present");
        return 0;
    }
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess && name_size)
        snprintf(name, name_size, "%s", prop.name);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_size, "cuBLAS could not start on device 0");
        return 0;
    }
    cublasDestroy(h);
    snprintf(why, why_size, "%d CUDA device%s", n, n == 1 ? "" : "s");
    return n;
}

extern "C" int backend_cuda_new_impl(struct backend **out, int device, char *name,
                                     size_t name_size, struct pt_err *e)
{
    (void)device;
    (void)name;
    (void)name_size;
    *out = NULL;
    return pt_err_set(e, PT_ESYS, "error: the CUDA backend is being written");
}
