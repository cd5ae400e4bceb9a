/* Fuzz target for BrainScript networks: parse a network description and evaluate it into
 * a node graph with its shapes (what `BrainScriptNetworkBuilder = [ ... ]` makes before any
 * memory for values is taken). An error is a fine outcome; a crash, leak, hang or
 * sanitizer report is not. Built by scripts/fuzz.sh with libFuzzer; tests/fuzz_regress.sh
 * replays kept inputs with the same harness under `make check`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pt_err e;
    pt_err_clear(&e);
    struct bs_tree *t = NULL;
    if (bs_parse((const char *)data, size, "fuzz.bs", 1, 1, &t, &e) != 0)
        return 0;
    char *text = malloc(size + 1); /* the "#@edit" lines are read from a string */
    if (text) {
        memcpy(text, data, size);
        text[size] = '\0';
    }
    fuzz_graph(t, text);
    free(text);
    return 0;
}
