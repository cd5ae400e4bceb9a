/* The end the BrainScript fuzz targets share (fuzz_bs.c, fuzz_ndl.c): a parsed network
 * description evaluated into a node graph with its shapes, its "#@edit" lines (a MEL-edited
 * model's SetInput, src/nn/bs_edit.c) carried out, then everything freed. An error is a
 * fine outcome. */
#ifndef PT_TESTS_FUZZ_GRAPH_H
#define PT_TESTS_FUZZ_GRAPH_H

#include <stdlib.h>

#include "nn/bs_eval.h"
#include "parsers/bs.h"

static inline void fuzz_graph(struct bs_tree *t, const char *text)
{
    struct pt_err e;
    pt_err_clear(&e);
    struct nn_graph *g = calloc(1, sizeof *g);
    struct bs_build_opts o = {.edits = text};
    if (g) {
        bs_build_graph(t, &o, g, &e);
        g_free(g);
    }
    bs_tree_free(t);
}

#endif
