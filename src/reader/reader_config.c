/* The reader block -> struct reader_config: the schema stores the keys, this file walks
 * the input streams. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "reader/reader.h"

/* One stream: its name (the block's key), then its keys through the schema. */
static int read_input(struct cfg_node *n, struct reader_input *in, struct pt_err *e)
{
    snprintf(in->name, sizeof in->name, "%s", cfg_key(n));
    if (strlen(cfg_key(n)) >= sizeof in->name)
        return cfg_error(e, cfg_origin_of(n), "input name '%.40s...' is too long", cfg_key(n));
    return cfg_schema_read(n, &reader_input_schema, in, e);
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
            return cfg_error(e, cfg_origin_of(n),
                             "reader input '%s' must be a block [ dim=...; format=... ]",
                             cfg_key(n));
        struct reader_input *in = &rc->inputs[rc->ninputs];
        if ((r = read_input(n, in, e)))
            return r;
        for (int i = 0; i < rc->ninputs; i++)
            if (strcmp(rc->inputs[i].alias, in->alias) == 0)
                return cfg_error(e, cfg_origin_of(n),
                                 "reader inputs '%s' and '%s' have the same alias '%s'",
                                 rc->inputs[i].name, in->name, in->alias);
        defines += in->defines_mb;
        rc->ninputs++;
    }
    if (rc->ninputs == 0)
        return cfg_error(e, cfg_origin_of(inputs), "reader: input = [ ... ] declares no inputs");
    if (defines > 1)
        return cfg_error(e, cfg_origin_of(inputs),
                         "reader: only one input may set definesMBSize=true");
    return 0;
}

int reader_config_read(struct cfg_node *block, struct reader_config *rc, struct pt_err *e)
{
    memset(rc, 0, sizeof *rc);
    int r = cfg_schema_read(block, &reader_schema, rc, e);
    return r ? r : read_inputs(block, rc, e);
}

int reader_config_one_hot(struct reader_config *rc, const char *name, const char *why)
{
    for (int i = 0; i < rc->ninputs; i++)
        if (strcmp(rc->inputs[i].name, name) == 0) {
            snprintf(rc->inputs[i].one_hot, sizeof rc->inputs[i].one_hot, "%s", why);
            return 1;
        }
    return 0;
}
