/* Keys of the reader block and of each input stream (SPEC §6), and where
 * cfg_schema_read puts them (struct reader_config, struct reader_input). Defaults are
 * CNTK's. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "reader/htk.h"
#include "reader/image.h"
#include "reader/lm.h"
#include "reader/reader.h"

#define MIN0  (CFG_HAS_MIN)
#define IN(m) CFG_OUT(struct reader_input, m)
#define RC(m) CFG_OUT(struct reader_config, m)

/* A row of dim floats must fit the int sizes and indices of the packed stores; refused
 * where dim is set (config checks and reads both run .valid), never clamped. */
#define MAX_DIM (1 << 30)

static int dim_fits(const struct cfg_val *v, char *why, size_t size)
{
    if (v->i <= MAX_DIM)
        return 0;
    snprintf(why, size, "%lld is out of range: must be >= 1 and <= %d (2^30)", v->i, MAX_DIM);
    return 1;
}

/* The stream's own alias (CFG_LOCAL), else its name (the caller sets in->name first). */
static int set_alias(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    struct reader_input *in = out;
    const char *alias = v->node ? v->s : in->name;
    if (alias[0] == '\0' || strlen(alias) >= sizeof in->alias || strpbrk(alias, " \t|"))
        return cfg_error(e, v->node ? cfg_value_origin(v->node) : cfg_origin_of(block),
                         "alias \"%.40s\" is not usable in a data file (no blanks, no '|')", alias);
    snprintf(in->alias, sizeof in->alias, "%s", alias);
    return 0;
}

static int set_file_origin(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)e;
    struct reader_config *rc = out;
    rc->file_origin = *(v->node ? cfg_value_origin(v->node) : cfg_origin_of(block));
    return 0;
}

/* true|false|t|f|1|0|auto|none: only the false ones keep the file order */
static int set_randomize(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    struct reader_config *rc = out;
    rc->randomize = !(strcasecmp(v->s, "false") == 0 || strcasecmp(v->s, "f") == 0 ||
                      strcmp(v->s, "0") == 0 || strcasecmp(v->s, "none") == 0) &&
                    !rc->read_none;
    return 0;
}

/* readMethod=none (CNTK's HTK deserializers: no randomizer, the file order, as its write
 * action asks) keeps the file order whatever randomize says; either key may come first */
static int set_read_method(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    struct reader_config *rc = out;
    rc->read_none = strcasecmp(v->s, "none") == 0;
    if (rc->read_none)
        rc->randomize = 0;
    return 0;
}

static const struct cfg_key input_keys[] = {
    {.name = "dim",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | MIN0,
     .min = 1,
     .help = "values per sample row of this stream",
     .valid = dim_fits,
     IN(dim)},
    {.name = "format",
     .type = CFG_ENUM,
     .flags = CFG_REQUIRED,
     .choices = "dense|sparse",
     .help = "dense: v v v ...; sparse: index:value ...",
     IN(sparse)},
    {.name = "alias",
     .type = CFG_STRING,
     .help = "the name after '|' in the data file (default: the stream's name)",
     .set = set_alias},
    {.name = "definesMBSize",
     .type = CFG_BOOL,
     .def = "false",
     .help = "sequence length is this stream's row count",
     IN(defines_mb)},
    {.name = NULL},
};

const struct cfg_schema reader_input_schema = {
    .name = "input stream",
    .where = "inside reader.input",
    .help = "One named input stream of a CNTKTextFormatReader.",
    .keys = input_keys,
};

/* A CNTK text-format source's tuning keys: in the reader block (readerType form) or in its
 * deserializer, where lookups climb into the reader block (so the deserializer's own value
 * wins, then the reader's, as in CNTK). */
static const struct cfg_key ctf_keys[] = {
    {.name = "chunkSizeInBytes",
     .type = CFG_INT,
     .def = "33554432",
     .flags = MIN0,
     .min = 1,
     .help = "unit of randomization and of distributed partitioning",
     RC(chunk_bytes)},
    {.name = "keepDataInMemory",
     .type = CFG_BOOL,
     .def = "false",
     .help = "keep parsed chunks in memory across epochs",
     RC(keep_in_memory)},
    {.name = "skipSequenceIds",
     .type = CFG_BOOL,
     .def = "false",
     .help = "ignore leading sequence ids (every line is a sequence)",
     RC(skip_ids)},
    {.name = "maxErrors",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "malformed rows tolerated before reading stops with an error",
     RC(max_errors)},
    {.name = "traceLevel",
     .type = CFG_INT,
     .def = "1",
     .flags = MIN0,
     .help = "reader verbosity",
     RC(trace)},
    {.name = NULL},
};

static const struct cfg_key unsupported_keys[] = {
    {.name = "truncationLength",
     .type = CFG_UNSUPPORTED,
     .help = "truncated back-propagation through time is not implemented"},
    {.name = "multiThreadedDeserialization",
     .type = CFG_UNSUPPORTED,
     .help = "the text reader parses on the training thread's schedule; remove this key"},
    {.name = NULL},
};

/* readerType and deserializers exclude each other (schema group) */
#define READER_KIND 1

static const struct cfg_key reader_keys[] = {
    {.name = "readerType",
     .type = CFG_ENUM,
     .choices = "CNTKTextFormatReader|ImageReader|HTKMLFReader|HTKDeserializers|"
                "LMSequenceReader",
     .unsupported = "UCIFastReader|"
                    "CNTKBinaryReader|LUSequenceReader|DSSMReader|"
                    "SparsePCReader|LibSVMBinaryReader|BinaryReader|CompositeDataReader|"
                    "Kaldi2Reader|ExperimentalHTKMLFReader",
     .group = READER_KIND,
     .help = "the reader, CNTKTextFormatReader, with file= and input= in this block (or "
             "CNTK's ImageReader, a map file= and its image and class blocks: README "
             "\"Images\"), or CNTK's HTKMLFReader (README \"Speech\"), or CNTK's "
             "LMSequenceReader (README \"Language models\"); required unless "
             "deserializers = ({ ... }) (CNTK's composite form) "
             "stands instead"},
    {.name = "deserializers",
     .type = CFG_TEXT,
     .flags = CFG_LOCAL,
     .group = READER_KIND,
     .help =
         "CNTK's composite-reader form, instead of readerType: one deserializer (or two: below), "
         "({ type = \"CNTKTextFormatDeserializer\"; module = \"CNTKTextFormatReader\"; "
         "file = ...; input = [ ... ] }), read as readerType = CNTKTextFormatReader with its "
         "keys. In it: type or module (naming the text format), file and input (required, "
         "and only there), chunkSizeInBytes, keepDataInMemory, skipSequenceIds, maxErrors "
         "and traceLevel (there or in the reader block; the deserializer's win). The other "
         "keys stay in the reader block. Or an ImageDeserializer: type = "
         "\"ImageDeserializer\"; module = \"ImageReader\"; file = MAP; input = { features "
         "= { transforms = ( ... ) }; labels = { labelDim = N } } (README \"Images\"). "
         "Two compose: ({ image or text } : { text }), the second's k-th sequence with the "
         "first's k-th (CNTK's keys: line numbers, or ids 0, 1, ...), its inputs beside the "
         "first's (CNTK's RegrSimple_CIFAR10). Or CNTK's speech pair, ({ type = "
         "\"HTKFeatureDeserializer\"; input = [ features = [ dim; scpFile ] ] } : { type = "
         "\"HTKMLFDeserializer\"; input = [ labels = [ mlfFile; labelMappingFile; dim ] ] }) "
         "(README \"Speech\"). Three or more, and other types (lattices, binary), are not "
         "supported"},
    {.name = "file",
     .type = CFG_PATH,
     .help = "the CTF data file (required with readerType; with deserializers, inside the "
             "deserializer)",
     RC(file),
     .set = set_file_origin},
    {.name = "input",
     .type = CFG_BLOCK_MAP,
     .sub = &reader_input_schema,
     .help = "the input streams: input = [ features = [ dim=784; format=dense ] ... ] "
             "(required with readerType; with deserializers, inside the deserializer)"},
    {.name = "randomize",
     .type = CFG_ENUM,
     .def = "true",
     .choices = "true|false|t|f|1|0|auto|none",
     .help = "shuffle chunks and samples (auto = true; none/false = file order)",
     .set = set_randomize},
    {.name = "randomizationWindow",
     .type = CFG_INT,
     .def = "128",
     .flags = MIN0,
     .min = 1,
     .help = "randomization window in chunks (in samples with "
             "sampleBasedRandomizationWindow=true)",
     RC(window)},
    {.name = "sampleBasedRandomizationWindow",
     .type = CFG_BOOL,
     .def = "false",
     .help = "randomizationWindow counts samples instead of chunks",
     RC(sample_window)},
    {.name = "distributionMode",
     .type = CFG_ENUM,
     .def = "chunk",
     .choices = "chunk|sequence",
     .help = "partrain extension, distributed reading: chunk = each rank reads only the "
             "chunks it owns (CNTK; shares of a minibatch vary with the chunk mix); "
             "sequence = the k-th sequence of every minibatch goes to rank k mod workers "
             "(equal shares, but every rank reads every chunk)",
     RC(by_sequence)},
    {.name = "randomizationSeed",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "seed of the shuffle",
     RC(seed)},
    {.name = "frameMode",
     .type = CFG_BOOL,
     .def = "false",
     .help = "split sequences into independent frames",
     RC(frame_mode)},
    {.name = "verbosity",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "CNTK's composite reader's randomizer verbosity: accepted for CNTK's configs, no "
             "effect (the reader's messages follow traceLevel)"},
    {.name = NULL},
};

/* CNTK's HTK readers' keys of the reader block (their streams' keys: htk_config.c). */
static const struct cfg_key htk_keys[] = {
    {.name = "readMethod",
     .type = CFG_ENUM,
     .def = "blockRandomize",
     .choices = "blockRandomize|rollingWindow|none",
     .help = "HTK readers: how CNTK randomizes; blockRandomize and rollingWindow both read as "
             "blockRandomize here (chunks of utterances shuffled, then the frames or utterances "
             "of each window); none: the file order, whatever randomize says (CNTK's HTK "
             "deserializers' write action)",
     .set = set_read_method},
    {.name = "miniBatchMode",
     .type = CFG_ENUM,
     .def = "partial",
     .choices = "partial",
     .unsupported = "full",
     .help = "HTK readers: partial (the epoch's last minibatch may be smaller)"},
    {.name = "useMersenneTwisterRand",
     .type = CFG_BOOL,
     .def = "false",
     .help = "HTK readers: CNTK's choice of random generator; accepted, no effect (partrain's "
             "shuffle is its own, the same on every rank)"},
    {.name = "truncated",
     .type = CFG_BOOL,
     .def = "false",
     .help = "HTK readers with frameMode = false: truncated back-propagation through time "
             "(here, or above the reader block, as CNTK's speech configs set it); the text and "
             "image readers refuse true in their block (their sequences are trained whole)"},
    {.name = "nbruttsineachrecurrentiter",
     .type = CFG_STRING,
     .help = "HTK readers with truncated = true (and frameMode = false): the utterances each "
             "rank reads in parallel, each a stream of minibatchSize frames a minibatch, the "
             "recurrent state carried from one to the next (N, or N:N:... one an epoch); "
             "LMSequenceReader: 0 fills each minibatch with sentences of one length, N > 0 "
             "takes up to N of them (default 1); otherwise accepted without effect"},
    {.name = NULL},
};

/* CNTK's LMSequenceReader's keys of the reader block (its sections': lm_config.c). */
static const struct cfg_key lm_keys[] = {
    {.name = "wordclass",
     .type = CFG_PATH,
     .help = "LMSequenceReader: the word-class file, INDEX COUNT WORD CLASS a line (as "
             "writeWordAndClass writes it): the words' ids and classes",
     RC(lm.wordclass)},
    {.name = "cacheBlockSize",
     .type = CFG_INT,
     .def = "50000",
     .flags = MIN0,
     .min = 1,
     .help = "LMSequenceReader: the words read (whole lines) and shuffled together",
     RC(lm.block_tokens)},
    {.name = "unk",
     .type = CFG_STRING,
     .def = "<unk>",
     .help = "LMSequenceReader: the word that words missing from the word-class file read as",
     RC(lm.unk)},
    {.name = "wfile",
     .type = CFG_STRING,
     .help = "LMSequenceReader: CNTK's binary cache file; accepted, no effect (none is written)"},
    {.name = "wsize",
     .type = CFG_STRING,
     .help = "LMSequenceReader: CNTK's binary cache's size; accepted, no effect"},
    {.name = "wrecords",
     .type = CFG_STRING,
     .help = "LMSequenceReader: CNTK's binary cache's records; accepted, no effect"},
    {.name = "windowSize",
     .type = CFG_STRING,
     .help = "LMSequenceReader: CNTK's binary cache's window; accepted, no effect"},
    {.name = NULL},
};

static const struct cfg_key *const reader_more[] = {ctf_keys, htk_keys, lm_keys, unsupported_keys,
                                                    NULL};

/* The reader's streams named by the config: CNTK's ImageReader's, or its HTKMLFReader's. */
static int legacy_stream(struct cfg_node *block, struct cfg_node *n)
{
    return image_legacy_stream(block, n) || htk_legacy_stream(block, n) || lm_stream(block, n);
}

const struct cfg_schema reader_schema = {
    .name = "reader",
    .where = "inside a command block",
    .help = "Where the data comes from (CNTK text format, or images: README \"Images\").",
    .keys = reader_keys,
    .more = reader_more,
    .owns = legacy_stream,
};

/* The one deserializer of `deserializers = ({ ... })`. file and input are its own (never
 * found further out); the other text-format keys climb into the reader block. */
static const struct cfg_key deserializer_keys[] = {
    {.name = "type",
     .type = CFG_ENUM,
     .flags = CFG_LOCAL,
     .choices = "CNTKTextFormatDeserializer",
     .unsupported = "LatticeDeserializer|"
                    "Base64ImageDeserializer|CNTKBinaryFormatDeserializer|PlainTextDeserializer",
     .help = "the deserializer (this or module is required)"},
    {.name = "module",
     .type = CFG_ENUM,
     .flags = CFG_LOCAL,
     .choices = "CNTKTextFormatReader",
     .unsupported = "CNTKBinaryReader|Kaldi2Reader",
     .help = "the reader library that holds the deserializer (this or type is required)"},
    {.name = "file",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED | CFG_LOCAL,
     .help = "the CTF data file",
     RC(file),
     .set = set_file_origin},
    {.name = "input",
     .type = CFG_BLOCK_MAP,
     .flags = CFG_REQUIRED | CFG_LOCAL,
     .sub = &reader_input_schema,
     .help = "the input streams: input = [ features = [ dim=784; format=dense ] ... ]"},
    {.name = NULL},
};

static const struct cfg_key *const deserializer_more[] = {ctf_keys, NULL};

const struct cfg_schema reader_deserializer_schema = {
    .name = "deserializer",
    .where = "inside reader.deserializers = ({ ... })",
    .help = "The one CNTKTextFormatDeserializer of a reader in CNTK's composite form; the "
            "reader's other keys stay in the reader block.",
    .keys = deserializer_keys,
    .more = deserializer_more,
};
