/* Fuzz target for model files (SPEC 8; src/nn/model_io.c): the bytes are written to a file
 * and loaded as `action=test` loads a model, network and values. So that mutations reach
 * past the checksum, an input whose first byte is odd is made self-consistent first: its
 * payload length set to what follows the header and its FNV-1a checksum recomputed (the
 * rest of the input is the file); an even first byte leaves the file as it is. An error is
 * a fine outcome; a crash, leak, hang or sanitizer report is not. Built by scripts/fuzz.sh
 * with libFuzzer; tests/fuzz_regress.sh replays kept inputs with the same harness. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "math/backend.h"
#include "nn/nn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void make_consistent(unsigned char *p, size_t n)
{
    enum { HEADER = 24, SUM = 8 };
    if (n < HEADER + SUM)
        return;
    uint64_t payload = n - HEADER - SUM, h = 0xcbf29ce484222325ull;
    memcpy(p + 16, &payload, sizeof payload);
    for (size_t i = 0; i < n - SUM; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    memcpy(p + n - SUM, &h, sizeof h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct backend *be;
    static char path[64];
    struct pt_err e;
    pt_err_clear(&e);
    if (!be && backend_cpu_new(&be, &e) != 0)
        return 0;
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/fuzz_model.%ld", (long)getpid());
    if (size == 0)
        return 0;
    unsigned char *p = malloc(size);
    if (!p)
        return 0;
    memcpy(p, data + 1, size - 1);
    if (data[0] & 1)
        make_consistent(p, size - 1);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(p, 1, size - 1, f) == size - 1;
    if (f)
        ok &= fclose(f) == 0;
    free(p);
    struct nn *net = NULL;
    int rc = ok ? nn_load(path, be, &net, &e) : -1;
    if (getenv("FUZZ_VERBOSE")) /* what a seed does: "loaded", or the error */
        fprintf(stderr, "%s\n", rc ? e.msg : "loaded");
    if (rc == 0)
        nn_free(net);
    unlink(path);
    return 0;
}
