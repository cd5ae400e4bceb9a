/* tests/test_math's backend descriptions and probes (src/math/backend.c): the CPU's
 * description, the CUDA probe, and in a --with-cuda build the plugin partrain-cuda.so:
 * nothing of CUDA mapped before it is loaded. */
#include <stdio.h>

#include "config.h"

#include "math/backend.h"
#include "testutil.h"

TCase *math_probe_tcase(void);

#ifdef PT_HAVE_CUDA
/* Whether a library whose file name contains `part` is mapped into this process. */
static int mapped(const char *part)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int found = 0;
    ck_assert_ptr_nonnull(f);
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, part) != NULL;
    fclose(f);
    return found;
}
#endif

START_TEST(describe_and_probe)
{
    char buf[256], name[64], why[1024];
    ck_assert(strlen(backend_cpu_describe(buf, sizeof buf)) > 0);
    ck_assert_ptr_nonnull(strstr(buf, "kernel"));
    int n = backend_cuda_probe(name, sizeof name, why, sizeof why);
    ck_assert_int_ge(n, 0);
    ck_assert(strlen(why) > 0);
#ifndef PT_HAVE_CUDA
    ck_assert_int_eq(n, 0);
    ck_assert_str_eq(why, "built without CUDA (configure --with-cuda)");
    ck_assert_int_eq(backend_cuda_available(why, sizeof why), 0);
    ck_assert_str_eq(why, "built without CUDA (configure --with-cuda)");
#else
    /* the probe asks the driver alone; the CPU backend runs without cuBLAS or the CUDA
     * runtime mapped: the plugin brings them (PT_CUDA_PLUGIN, set by make check) */
    ck_assert(!mapped("libcublas"));
    ck_assert(!mapped("libcudart"));
    ck_assert(!mapped("partrain-cuda.so"));
    ck_assert_msg(backend_cuda_available(why, sizeof why), "%s", why);
    ck_assert(mapped("partrain-cuda.so"));
    ck_assert(mapped("libcublas"));
    if (n == 0) { /* no GPU here: a clear error, no backend */
        struct backend *g = NULL;
        struct pt_err e = {0};
        ck_assert_int_ne(backend_cuda_new(&g, 0, name, sizeof name, &e), 0);
        ck_assert_ptr_null(g);
        ck_assert_ptr_nonnull(strstr(e.msg, "deviceId=0"));
    }
#endif
}
END_TEST

TCase *math_probe_tcase(void)
{
    TCase *tc = tcase_create("probe");
    tcase_add_test(tc, describe_and_probe);
    return tc;
}
