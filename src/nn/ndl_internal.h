/* CNTK's NDL read as BrainScript, internal to src/nn/ndl.c (the files and sections, their
 * members gathered, the text written out) and src/nn/ndl_write.c (NDL's expressions and
 * members written as BrainScript). */
#ifndef PT_NN_NDL_INTERNAL_H
#define PT_NN_NDL_INTERNAL_H

#include <stddef.h>

#include "parsers/bs.h"

#define NDL_MAX_UNITS 16
#define NDL_MAX_FILE  (4 << 20)

struct unit {
    struct bs_tree *tree;
    char *file; /* the name its nodes carry */
    int is_macros;
};

struct out {
    char *p;
    size_t n, cap;
    int oom;
};

struct names {
    const char **v;
    size_t n, cap;
};

struct ndl {
    struct unit u[NDL_MAX_UNITS];
    int nu;
    /* the members written at the top: macros first, then the sections' lines */
    const struct bs_node **top;
    size_t ntop, captop;
    struct names defined; /* every name the NDL defines (members, parameters, macros) */
    struct names vars;    /* the same but the macros: NDL calls a macro, whatever the case of
                           * a variable called alike (logPrior = LogPrior (labels)) */
    struct names macros;  /* the macros, by name (their BS_DEF in macro_def) */
    const struct bs_node **macro_def;
    char **macro_out; /* a macro's name as written out: its first spelling, or that and
                       * "_macro" where a variable is spelled the same */
    struct pt_err *e;
};

/* Text appended to o (o->oom on out of memory). */
void ndl_put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The index of name in s, any case; -1 when absent. */
int ndl_names_find(const struct names *s, const char *name);
/* NDL's names have no case (DnnLastLayer is DNNLastLayer): name as its first definition in
 * s spells it. */
const char *ndl_canon(const struct names *s, const char *name);
/* A member of the NDL (top: of the network's scope, where NDL's node groups take
 * BrainScript's names) written out as BrainScript, after its "#@at" line; named `as`
 * where that is not NULL (a definition that an alias renames, below). */
void ndl_write_member(struct ndl *d, struct out *o, const struct bs_node *m, int top,
                      const char *as);
/* CNTK's NDL renames a node by its alias: after Y = Call (...) and X = Y, the node (a
 * macro's nodes: X.W, X.z) is named X. Y's definition is written as X's (ndl_write_member
 * with as = X); this writes the alias' line: Y = X, and where X is a node group (OutputNodes
 * = ol) the group's BrainScript member too (outputNodes = OutputNodes). */
void ndl_write_rename(struct ndl *d, struct out *o, const struct bs_node *alias,
                      const struct bs_node *def);

#endif
