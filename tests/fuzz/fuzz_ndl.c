/* Fuzz target for CNTK's NDL (src/nn/ndl.c): an NDL text written out as BrainScript, which
 * must then parse (the writer's text is BrainScript whatever the NDL was: a text that does
 * not parse is a bug, and aborts), and be evaluated into a node graph with its shapes. An
 * error is a fine outcome; a crash, leak, hang, sanitizer report or abort is not. Built by
 * scripts/fuzz.sh with libFuzzer; tests/fuzz_regress.sh replays kept inputs under
 * `make check`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_graph.h"
#include "nn/nn_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pt_err e;
    pt_err_clear(&e);
    char *text = NULL;
    if (nn_ndl_translate((const char *)data, size, "fuzz.ndl", &text, &e) != 0)
        return 0;
    struct bs_tree *t = NULL;
    if (bs_parse(text, strlen(text), "fuzz.ndl", 1, 1, &t, &e) != 0) {
        fprintf(stderr, "fuzz_ndl: the BrainScript written does not parse: %s\n%s\n", e.msg, text);
        abort();
    }
    fuzz_graph(t, text);
    free(text);
    return 0;
}
