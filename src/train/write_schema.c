/* action=write's keys (write_command_schema, the format block), what a node name may be
 * before the model is read, and labelMappingFile (write_internal.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_internal.h"
#include "train/write_internal.h"

int write_output_node(const char *name)
{
    /* before the model is read, any node name a BrainScript network may have counts */
    if (!*name)
        return 0;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.')
            return 0;
    return 1;
}

#define WS(m) CFG_OUT(struct write_settings, m)
#define WF(m) CFG_OUT(struct write_format, m)

/* precisionFormat "W.P", "W", ".P" (digits): width and precision of %f (-1: default). */
void write_precision_parse(const char *s, int *width, int *prec)
{
    *width = *prec = -1;
    if (!s || !*s)
        return;
    if (*s != '.')
        *width = atoi(s);
    const char *dot = strchr(s, '.');
    if (dot)
        *prec = atoi(dot + 1);
}

static int precision_valid(const struct cfg_val *v, char *why, size_t size)
{
    const char *s = v->s ? v->s : "";
    size_t dots = 0, n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        dots += s[i] == '.';
        if (!(s[i] == '.' || (s[i] >= '0' && s[i] <= '9')) || dots > 1 || n > 8) {
            snprintf(why, size, "expected a printf width and precision such as .3 or 10.4");
            return -1;
        }
    }
    return 0;
}

static const struct cfg_key format_keys[] = {
    {.name = "type",
     .type = CFG_ENUM,
     .def = "real",
     .choices = "real|category",
     .unsupported = "sparse",
     .help = "real: the values; category: the index of each sample's largest value",
     WF(category)},
    {.name = "transpose",
     .type = CFG_BOOL,
     .def = "true",
     .help = "true: one line per sample; false: one column per sample",
     WF(transpose)},
    {.name = "prologue",
     .type = CFG_STRING,
     .help = "printed at the start (default empty)",
     WF(prologue)},
    {.name = "epilogue",
     .type = CFG_STRING,
     .help = "printed at the end (default empty)",
     WF(epilogue)},
    {.name = "sequenceSeparator",
     .type = CFG_STRING,
     .help = "between sequences (default empty)",
     WF(seq_sep)},
    {.name = "sequencePrologue",
     .type = CFG_STRING,
     .help = "before each sequence (default empty)",
     WF(seq_prologue)},
    {.name = "sequenceEpilogue",
     .type = CFG_STRING,
     .help = "after each sequence (default \\n)",
     WF(seq_epilogue)},
    {.name = "elementSeparator",
     .type = CFG_STRING,
     .help = "between the values of a sample (default \\s, a space)",
     WF(elem_sep)},
    {.name = "sampleSeparator",
     .type = CFG_STRING,
     .help = "between the samples of a sequence (default \\n)",
     WF(sample_sep)},
    {.name = "precisionFormat",
     .type = CFG_STRING,
     .help = "printf width and precision of the values, e.g. .3 for %.3f (default: %f)",
     .valid = precision_valid,
     WF(precision)},
    {.name = "labelMappingFile",
     .type = CFG_PATH,
     .help = "with type=category, a text file whose line i names class i: the label is written "
             "instead of the index",
     WF(label_file)},
    {.name = NULL},
};

static const struct cfg_schema format_schema = {
    .name = "format",
    .where = "in a command block with action=write",
    .help = "How action=write lays out the values (CNTK's WriteFormattingOptions).",
    .keys = format_keys,
};

#define NO_BUILDER                                                                                 \
    "a network builder in an action=write block makes the network that CNTK evaluates; "           \
    "partrain builds a BrainScript one (BS.Network.Load and additions to the loaded model), "      \
    "not NDL: without one the network is modelPath's"
static const struct cfg_key write_cmd_keys[] = {
    {.name = "action", .type = CFG_STRING, .def = "write", .help = "write: the network's outputs"},
    {.name = "modelPath",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "the model whose outputs are written",
     WS(model)},
    {.name = "reader",
     .type = CFG_BLOCK,
     .flags = CFG_REQUIRED,
     .sub = &reader_schema,
     .help = "the data, read in file order"},
    {.name = "outputPath",
     .type = CFG_PATH,
     .help = "node N is written to outputPath.N as text (required without a writer block)",
     WS(output)},
    {.name = "outputNodeNames",
     .type = CFG_STRING_LIST,
     .help = "nodes to write: HLast, PosteriorProb, ScaledLogLikelihood of a SimpleNetworkBuilder "
             "network (default: ScaledLogLikelihood when the model has a prior, else HLast); a "
             "BrainScript network's output node (its default); the reader's inputs (labels)",
     WS(nodes)},
    {.name = "minibatchSize",
     .type = CFG_INT,
     .def = "2048",
     .flags = CFG_HAS_MIN | CFG_FIRST,
     .min = 1,
     .help = "samples per minibatch (an array a:b: its first value, as CNTK reads it)",
     WS(mb_size)},
    {.name = "epochSize",
     .type = CFG_INT,
     .def = "0",
     .flags = CFG_HAS_MIN,
     .help = "samples to write; 0 = all",
     WS(epoch_size)},
    {.name = "format",
     .type = CFG_BLOCK,
     .sub = &format_schema,
     .help = "the text layout: format = [ type; transpose; prologue; ... ]",
     WS(fmt)},
    {.name = "writer",
     .type = CFG_BLOCK,
     .sub = &writer_schema,
     .help = "writer = [ writerType = HTKMLFWriter ; NODE = [ dim ; scpFile ; type = Real ] ]: "
             "each sequence's (utterance's) outputs as an HTK feature file named by a line of "
             "the node's scpFile, instead of outputPath's text"},
    {.name = "writeSequenceKey",
     .type = CFG_UNSUPPORTED,
     .help = "sequence keys are not written (%k is not supported)"},
    {.name = "nodeUnitTest", .type = CFG_UNSUPPORTED, .help = "node unit tests are not supported"},
    TRAIN_EVAL_BUILDER_KEYS,
    {.name = "NDLNetworkBuilder", .type = CFG_UNSUPPORTED, .help = NO_BUILDER},
    {.name = NULL},
};

const struct cfg_schema write_command_schema = {
    .name = "command block (action=write)",
    .where = "at top level, named in command=",
    .help = "Writes a model's outputs. Unknown keys here are allowed (they may be variables).",
    .keys = write_cmd_keys,
    .open = 1,
};

/* labelMappingFile's lines (without their line ends) into fm->labels. */
int write_read_labels(struct write_format *fm, struct pt_err *e)
{
    FILE *f = fopen(fm->label_file, "r");
    if (!f)
        return pt_err_set(e, PT_EUSER, "error: labelMappingFile: cannot read '%s': %s",
                          fm->label_file, strerror(errno));
    char line[4096];
    size_t cap = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\r\n");
        line[len] = '\0';
        if (fm->nlabels == cap) {
            size_t c = cap ? 2 * cap : 64;
            char **v = realloc(fm->labels, c * sizeof *v);
            if (!v) {
                rc = pt_err_set(e, PT_ESYS, "error: out of memory reading '%s'", fm->label_file);
                break;
            }
            fm->labels = v;
            cap = c;
        }
        if (!(fm->labels[fm->nlabels] = strdup(line)))
            rc = pt_err_set(e, PT_ESYS, "error: out of memory reading '%s'", fm->label_file);
        else
            fm->nlabels++;
    }
    if (rc == 0 && ferror(f))
        rc = pt_err_set(e, PT_ESYS, "error: labelMappingFile: reading '%s' failed", fm->label_file);
    fclose(f);
    if (rc == 0 && fm->nlabels == 0)
        rc = pt_err_set(e, PT_EUSER, "error: labelMappingFile '%s' holds no labels (one a line)",
                        fm->label_file);
    return rc;
}

void write_free_labels(struct write_format *fm)
{
    for (size_t i = 0; i < fm->nlabels; i++)
        free(fm->labels[i]);
    free(fm->labels);
    fm->labels = NULL;
    fm->nlabels = 0;
}
