/* Fuzz target for HTK master label files (src/reader/htk_mlf.c): the bytes after the first
 * are written to a file and read as the HTK reader's mlfFile, in CNTK's text form or its
 * binary one ("MLF" first). The first byte picks the class names: odd, a state list of
 * eight names (st0[2] ... st7[2], as tests/htk_gen writes them); even, none (the MLF gives class
 * numbers, labelDim 8). An error is a fine outcome; a crash, leak, hang or sanitizer report is not.
 * Built by scripts/fuzz.sh with libFuzzer; tests/fuzz_regress.sh replays kept inputs with
 * the same harness. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/htk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(p, 1, n, f) == n;
    if (f)
        ok &= fclose(f) == 0;
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct htk_config hc;
    static const char states[] = "st0[2]\nst1[2]\nst2[2]\nst3[2]\nst4[2]\nst5[2]\nst6[2]\nst7[2]\n";
    static char list[64];
    if (!hc.mlf[0]) {
        snprintf(hc.mlf, sizeof hc.mlf, "/tmp/fuzz_mlf.%ld", (long)getpid());
        snprintf(list, sizeof list, "/tmp/fuzz_mlf_states.%ld", (long)getpid());
        if (!write_file(list, states, sizeof states - 1))
            return 0;
    }
    if (size == 0 || !write_file(hc.mlf, data + 1, size - 1))
        return 0;
    snprintf(hc.states, sizeof hc.states, "%s", data[0] & 1 ? list : "");
    hc.label_dim = 8;
    struct htk_labels labels;
    struct pt_err e;
    pt_err_clear(&e);
    int rc = htk_labels_read(&hc, NULL, &labels, &e);
    if (getenv("FUZZ_VERBOSE") && rc) /* what a seed does: its entries, or the error */
        fprintf(stderr, "%s\n", e.msg);
    else if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "%zu entries\n", labels.n);
    htk_labels_free(&labels);
    unlink(hc.mlf);
    return 0;
}
