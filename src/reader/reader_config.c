/* The reader block -> struct reader_config. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "reader/reader.h"

static int get(struct cfg_node *b, const struct cfg_schema *s, const char *k, struct cfg_val *v,
               struct pt_err *e)
{
    return cfg_schema_get(b, s, k, v, e);
}

static int read_input(struct cfg_node *n, struct reader_input *in, struct pt_err *e)
{
    struct cfg_val v;
    snprintf(in->name, sizeof in->name, "%s", cfg_key(n));
    if (strlen(cfg_key(n)) >= sizeof in->name)
        return cfg_error(e, cfg_origin_of(n), "input name '%.40s...' is too long", cfg_key(n));
    int rc = get(n, &reader_input_schema, "dim", &v, e);
    if (rc)
        return rc;
    in->dim = v.i > 1 << 30 ? 1 << 30 : (int)v.i;
    if ((rc = get(n, &reader_input_schema, "format", &v, e)))
        return rc;
    in->sparse = v.choice == 1;
    if ((rc = get(n, &reader_input_schema, "definesMBSize", &v, e)))
        return rc;
    in->defines_mb = v.b;
    if ((rc = get(n, &reader_input_schema, "alias", &v, e))) /* CFG_LOCAL: this stream's own */
        return rc;
    const char *alias = v.node ? v.s : in->name;
    const struct cfg_node *a = v.node;
    if (alias[0] == '\0' || strlen(alias) >= sizeof in->alias || strpbrk(alias, " \t|"))
        return cfg_error(e, a ? cfg_value_origin(a) : cfg_origin_of(n),
                         "alias \"%.40s\" is not usable in a data file (no blanks, no '|')", alias);
    snprintf(in->alias, sizeof in->alias, "%s", alias);
    return 0;
}

static int read_inputs(struct cfg_node *block, struct reader_config *rc, struct pt_err *e)
{
    struct cfg_node *inputs = NULL;
    int r = cfg_find_block(block, "input", &inputs, e);
    if (r)
        return r;
    if (!inputs)
        return cfg_error(e, cfg_origin_of(block), "reader: no input = [ ... ] block");
    if ((r = cfg_parse_block(inputs, e)))
        return r;
    rc->ninputs = 0;
    int defines = 0;
    for (struct cfg_node *n = cfg_first(inputs); n; n = cfg_next(n)) {
        if (rc->ninputs == CTF_MAX_INPUTS)
            return cfg_error(e, cfg_origin_of(n), "reader: more than %d inputs", CTF_MAX_INPUTS);
        if (!cfg_is_block(n))
            return cfg_error(e, cfg_origin_of(n), "reader input '%s' must be a block [ dim=...; format=... ]",
                             cfg_key(n));
        struct reader_input *in = &rc->inputs[rc->ninputs];
        if ((r = read_input(n, in, e)))
            return r;
        for (int i = 0; i < rc->ninputs; i++)
            if (strcmp(rc->inputs[i].alias, in->alias) == 0)
                return cfg_error(e, cfg_origin_of(n), "reader inputs '%s' and '%s' have the same alias '%s'",
                                 rc->inputs[i].name, in->name, in->alias);
        defines += in->defines_mb;
        rc->ninputs++;
    }
    if (rc->ninputs == 0)
        return cfg_error(e, cfg_origin_of(inputs), "reader: input = [ ... ] declares no inputs");
    if (defines > 1)
        return cfg_error(e, cfg_origin_of(inputs), "reader: only one input may set definesMBSize=true");
    return 0;
}

int reader_config_read(struct cfg_node *block, struct reader_config *rc, struct pt_err *e)
{
    struct cfg_val v;
    memset(rc, 0, sizeof *rc);
    const struct cfg_schema *s = &reader_schema;
    int r = get(block, s, "file", &v, e);
    if (r)
        return r;
    if (strlen(v.s) >= sizeof rc->file)
        return cfg_error(e, cfg_value_origin(v.node), "file: path too long");
    snprintf(rc->file, sizeof rc->file, "%s", v.s);
    rc->file_origin = *cfg_value_origin(v.node);
    if ((r = get(block, s, "randomize", &v, e)))
        return r;
    /* true|false|t|f|1|0|auto|none */
    rc->randomize = !(strcasecmp(v.s, "false") == 0 || strcasecmp(v.s, "f") == 0 ||
                      strcmp(v.s, "0") == 0 || strcasecmp(v.s, "none") == 0);
    if ((r = get(block, s, "randomizationWindow", &v, e)))
        return r;
    rc->window = (size_t)v.i;
    if ((r = get(block, s, "sampleBasedRandomizationWindow", &v, e)))
        return r;
    rc->sample_window = v.b;
    if ((r = get(block, s, "chunkSizeInBytes", &v, e)))
        return r;
    rc->chunk_bytes = (size_t)v.i;
    if ((r = get(block, s, "randomizationSeed", &v, e)))
        return r;
    rc->seed = (uint64_t)v.i;
    int *flags[] = {&rc->keep_in_memory, &rc->frame_mode, &rc->skip_ids};
    const char *names[] = {"keepDataInMemory", "frameMode", "skipSequenceIds"};
    for (int i = 0; i < 3; i++) {
        if ((r = get(block, s, names[i], &v, e)))
            return r;
        *flags[i] = v.b;
    }
    if ((r = get(block, s, "distributionMode", &v, e)))
        return r;
    rc->by_sequence = v.choice == 1;
    if ((r = get(block, s, "maxErrors", &v, e)))
        return r;
    rc->max_errors = v.i;
    if ((r = get(block, s, "traceLevel", &v, e)))
        return r;
    rc->trace = (int)v.i;
    return read_inputs(block, rc, e);
}
