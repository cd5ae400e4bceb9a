/* The reader block -> struct reader_config: the schema stores the keys, this file walks
 * the input streams. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reader/htk.h"
#include "reader/image.h"
#include "reader/lm.h"
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

int reader_ctf_deserializer_read(struct cfg_node *d, struct reader_config *rc, struct pt_err *e)
{
    memset(rc, 0, sizeof *rc);
    int r = cfg_schema_read(d, &reader_deserializer_schema, rc, e);
    if (r == 0 && rc->file[0] == '\0')
        r = cfg_error(e, cfg_origin_of(d), "%s: file is not set (the text-format file)",
                      reader_deserializer_schema.name);
    return r ? r : read_inputs(d, rc, e);
}

/* "PATH: required key 'KEY' is not set (HELP)", as the schema check words it. */
static int missing(struct cfg_node *block, const struct cfg_schema *s, const char *key,
                   struct pt_err *e)
{
    char path[512];
    return cfg_error(e, cfg_origin_of(block), "%s: required key '%s' is not set (%s)",
                     cfg_path(block, path, sizeof path), key, cfg_schema_key(s, key)->help);
}

/* strictConfig as the top level sets it (unknown keys inside a deserializer are then errors,
 * as everywhere else); false when it is not a boolean (the config check reports that). */
static int strict_config(struct cfg_node *block)
{
    struct cfg_node *n = NULL;
    const char *v = NULL;
    int b = 0;
    struct pt_err ignored;
    pt_err_clear(&ignored);
    if (cfg_find(block, "strictConfig", &n, &ignored) == 0 && n && !cfg_is_block(n) &&
        cfg_value(n, &v, &ignored) == 0 && cfg_to_bool(n, v, &b, &ignored) != 0)
        b = 0;
    return b;
}

/* Check the deserializer d of reader block `reader`: its keys against the deserializer
 * schema (unknown ones warned about, or refused with strictConfig=true, naming the reader
 * block when they belong there), type or module given, file and input its own. `once`: d
 * is a block of cfg_block_array's, marked used once checked (nothing else marks it), so that
 * later reads of the reader do not warn again. */
static int check_deserializer(struct cfg_node *reader, struct cfg_node *d, int once,
                              struct pt_err *e)
{
    char path[512];
    if (once && cfg_is_used(d)) /* checked by an earlier read of this reader */
        return 0;
    struct cfg_node *type = NULL, *module = NULL, *input = NULL;
    int rc = cfg_find_local(d, "type", &type, e);
    if (rc == 0)
        rc = cfg_find_local(d, "module", &module, e);
    if (rc)
        return rc;
    if (!type && !module)
        return cfg_error(e, cfg_origin_of(d),
                         "%s: which deserializer? expected type = \"CNTKTextFormatDeserializer\" "
                         "(or module = \"CNTKTextFormatReader\"): partrain reads CNTK text format",
                         cfg_path(d, path, sizeof path));
    static const struct cfg_schema *const others[] = {&reader_schema, NULL};
    struct cfg_check ck = {.cfg = cfg_of(reader), .strict = strict_config(reader), .all = others};
    if (image_deserializer(d) || htk_deserializer(d)) /* their own keys, checked as read */
        return 0;
    rc = cfg_schema_check(&ck, d, &reader_deserializer_schema, e);
    if (rc == 0) /* its own, not one found further out */
        rc = cfg_find_local(d, "input", &input, e);
    if (rc == 0 && !input)
        rc = missing(d, &reader_deserializer_schema, "input", e);
    if (rc == 0 && once)
        cfg_mark_used(d);
    return rc;
}

/* The deserializers of the reader block's `deserializers = ({ ... })` (node ds): one, or two
 * (*second: a CNTKTextFormatDeserializer after an image or text one), each with its file and
 * input, none in the reader block. */
static int find_deserializer(struct cfg_node *block, struct cfg_node *ds, struct cfg_node **out,
                             struct cfg_node **second, struct pt_err *e)
{
    *second = NULL;
    char path[512];
    static const char *const own[] = {"file", "input"};
    for (int i = 0; i < 2; i++) {
        struct cfg_node *n = NULL;
        int rc = cfg_find_local(block, own[i], &n, e);
        if (rc)
            return rc;
        if (n)
            return cfg_error(e, cfg_origin_of(n),
                             "%s: the reader has deserializers, so %s= belongs inside the "
                             "deserializer: deserializers = ({ type = "
                             "\"CNTKTextFormatDeserializer\"; file = ...; input = [ ... ] })",
                             cfg_path(n, path, sizeof path), own[i]);
    }
    struct cfg_node *d = ds;
    if (!cfg_is_block(ds)) { /* ({ ... }), CNTK's array of one block; a bare block is one too */
        int rc = cfg_block_array(ds, &d, e);
        if (rc)
            return rc;
        if (!d)
            return cfg_error(e, cfg_value_origin(ds),
                             "%s: no deserializer: expected ({ type = "
                             "\"CNTKTextFormatDeserializer\"; file = ...; input = [ ... ] })",
                             cfg_path(ds, path, sizeof path));
        if (cfg_next(d) && cfg_next(cfg_next(d))) {
            size_t count = 0;
            for (struct cfg_node *x = d; x; x = cfg_next(x))
                count++;
            return cfg_error(e, cfg_origin_of(cfg_next(cfg_next(d))),
                             "%s: %zu deserializers: partrain composes at most two (an image or "
                             "text deserializer, then a CNTKTextFormatDeserializer)",
                             cfg_path(ds, path, sizeof path), count);
        }
        *second = cfg_next(d);
    }
    *out = d;
    int rc = check_deserializer(block, d, d != ds, e);
    if (rc == 0 && *second && image_deserializer(*second))
        rc = cfg_error(e, cfg_origin_of(*second),
                       "%s: the second deserializer is an ImageDeserializer: partrain composes "
                       "an image or text deserializer with a CNTKTextFormatDeserializer after "
                       "it, not images after something else",
                       cfg_path(ds, path, sizeof path));
    if (rc == 0 && *second)
        rc = check_deserializer(block, *second, 1, e);
    return rc;
}

/* The second deserializer (d2: text format) of a composite reader: its inputs after the
 * first's, its file and text-format keys into rc->aux. */
static int read_second(struct cfg_node *d2, struct reader_config *rc, struct pt_err *e)
{
    struct reader_config *t = malloc(sizeof *t);
    if (!t)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    *t = *rc;
    int r = cfg_schema_read(d2, &reader_deserializer_schema, t, e);
    if (r == 0)
        r = read_inputs(d2, t, e);
    if (r == 0 && rc->ninputs + t->ninputs > CTF_MAX_INPUTS)
        r = cfg_error(e, cfg_origin_of(d2), "reader: more than %d inputs in all", CTF_MAX_INPUTS);
    for (int i = 0; r == 0 && i < t->ninputs; i++)
        for (int k = 0; r == 0 && k < rc->ninputs; k++)
            if (!strcmp(t->inputs[i].name, rc->inputs[k].name))
                r = cfg_error(e, cfg_origin_of(d2),
                              "reader: input '%s' is declared by both deserializers (each "
                              "stream comes from one of them)",
                              t->inputs[i].name);
    if (r == 0) {
        rc->aux = (struct reader_aux){.first = rc->ninputs,
                                      .file_origin = t->file_origin,
                                      .chunk_bytes = t->chunk_bytes,
                                      .keep_in_memory = t->keep_in_memory,
                                      .skip_ids = t->skip_ids,
                                      .max_errors = t->max_errors};
        snprintf(rc->aux.file, sizeof rc->aux.file, "%s", t->file);
        memcpy(rc->inputs + rc->ninputs, t->inputs, (size_t)t->ninputs * sizeof *t->inputs);
        rc->ninputs += t->ninputs;
    }
    free(t);
    return r;
}

/* truncated = true in a text or image reader's block (or its deserializer's): refused, as
 * only the HTK readers cut utterances into segments. */
static int refuse_truncated(struct cfg_node *block, struct cfg_node *d, struct pt_err *e)
{
    struct cfg_node *where[2] = {block, d};
    for (int i = 0; i < 2 && where[i]; i++) {
        struct cfg_node *t = NULL;
        int on = 0, r = cfg_get_bool(where[i], "truncated", 1, &on, &t, e);
        if (r)
            return r;
        if (on)
            return cfg_error(e, cfg_value_origin(t),
                             "truncated = true: truncated back-propagation through time is "
                             "implemented for the HTK readers (frameMode = false); this "
                             "reader's sequences are trained whole");
    }
    return 0;
}

int reader_config_read(struct cfg_node *block, struct reader_config *rc, struct pt_err *e)
{
    memset(rc, 0, sizeof *rc);
    struct cfg_node *type = NULL, *ds = NULL, *d = NULL;
    int r = cfg_find(block, "readerType", &type, e);
    if (r == 0)
        r = cfg_find_local(block, "deserializers", &ds, e);
    if (r)
        return r;
    if (type && ds) { /* as the schema check words an exclusive group */
        char where[512];
        return cfg_error(e, cfg_origin_of(ds),
                         "%s: '%s' and '%s' (set at %s) exclude each other; give only one",
                         reader_schema.name, cfg_key(ds), cfg_key(type),
                         cfg_origin_str(cfg_origin_of(type), where, sizeof where));
    }
    if (!type && !ds)
        return missing(block, &reader_schema, "readerType", e);
    const char *tv = NULL;
    static const struct cfg_schema *const others[] = {&reader_schema, NULL};
    struct cfg_check ck = {.cfg = cfg_of(block), .strict = strict_config(block), .all = others};
    if (type && !cfg_is_block(type) && cfg_value(type, &tv, e) == 0 &&
        !strcasecmp(tv, "ImageReader")) { /* CNTK's legacy image reader */
        r = cfg_schema_read(block, &reader_schema, rc, e);
        if (r == 0)
            r = refuse_truncated(block, NULL, e);
        return r ? r : image_legacy_read(&ck, block, rc, e);
    }
    if (tv && (!strcasecmp(tv, "HTKMLFReader") || !strcasecmp(tv, "HTKDeserializers"))) {
        r = cfg_schema_read(block, &reader_schema, rc, e);
        return r ? r : htk_legacy_read(&ck, block, rc, e);
    }
    if (tv && !strcasecmp(tv, "LMSequenceReader")) {
        r = cfg_schema_read(block, &reader_schema, rc, e);
        return r ? r : lm_config_read(&ck, block, rc, e);
    }
    /* the reader block's keys; with a deserializer, then its own (file, input, and the
     * text-format keys it sets, which win over the reader block's) */
    struct cfg_node *d2 = NULL;
    if (ds && (r = find_deserializer(block, ds, &d, &d2, e)))
        return r;
    r = cfg_schema_read(block, &reader_schema, rc, e);
    if (r == 0 && d && (htk_deserializer(d) || (d2 && htk_deserializer(d2))))
        return htk_deserializers_read(&ck, block, d, d2, rc, e);
    if (r == 0)
        r = refuse_truncated(block, d, e);
    if (r == 0 && d && image_deserializer(d)) {
        r = image_config_read(&ck, d, rc, e);
    } else {
        if (r == 0 && d)
            r = cfg_schema_read(d, &reader_deserializer_schema, rc, e);
        if (r == 0 && rc->file[0] == '\0')
            r = missing(block, &reader_schema, "file", e);
        if (r == 0)
            r = read_inputs(d ? d : block, rc, e);
    }
    return r == 0 && d2 ? read_second(d2, rc, e) : r;
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
