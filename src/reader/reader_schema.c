/* Keys of the reader block and of each input stream (SPEC §6). Defaults are CNTK's. */
#include "reader/reader.h"

#define MIN0 (CFG_HAS_MIN)

static const struct cfg_key input_keys[] = {
    {.name = "dim",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | MIN0,
     .min = 1,
     .help = "values per sample row of this stream"},
    {.name = "format",
     .type = CFG_ENUM,
     .flags = CFG_REQUIRED,
     .choices = "dense|sparse",
     .help = "dense: v v v ...; sparse: index:value ..."},
    {.name = "alias",
     .type = CFG_STRING,
     .help = "the name after '|' in the data file (default: the stream's name)"},
    {.name = "definesMBSize",
     .type = CFG_BOOL,
     .def = "false",
     .help = "sequence length is this stream's row count"},
    {.name = NULL},
};

const struct cfg_schema reader_input_schema = {
    .name = "input stream",
    .where = "inside reader.input",
    .help = "One named input stream of a CNTKTextFormatReader.",
    .keys = input_keys,
};

static const struct cfg_key reader_keys[] = {
    {.name = "readerType",
     .type = CFG_ENUM,
     .flags = CFG_REQUIRED,
     .choices = "CNTKTextFormatReader",
     .unsupported = "UCIFastReader|HTKMLFReader|HTKDeserializers|ImageReader|"
                    "CNTKBinaryReader|LMSequenceReader|LUSequenceReader|DSSMReader|"
                    "SparsePCReader|LibSVMBinaryReader|BinaryReader|CompositeDataReader",
     .help = "the reader; partrain reads CNTK text format"},
    {.name = "file", .type = CFG_PATH, .flags = CFG_REQUIRED, .help = "the CTF data file"},
    {.name = "input",
     .type = CFG_BLOCK_MAP,
     .flags = CFG_REQUIRED,
     .sub = &reader_input_schema,
     .help = "the input streams: input = [ features = [ dim=784; format=dense ] ... ]"},
    {.name = "randomize",
     .type = CFG_ENUM,
     .def = "true",
     .choices = "true|false|t|f|1|0|auto|none",
     .help = "shuffle chunks and samples (auto = true; none/false = file order)"},
    {.name = "randomizationWindow",
     .type = CFG_INT,
     .def = "128",
     .flags = MIN0,
     .min = 1,
     .help = "randomization window in chunks (in samples with "
             "sampleBasedRandomizationWindow=true)"},
    {.name = "sampleBasedRandomizationWindow",
     .type = CFG_BOOL,
     .def = "false",
     .help = "randomizationWindow counts samples instead of chunks"},
    {.name = "chunkSizeInBytes",
     .type = CFG_INT,
     .def = "33554432",
     .flags = MIN0,
     .min = 1,
     .help = "unit of randomization and of distributed partitioning"},
    {.name = "distributionMode",
     .type = CFG_ENUM,
     .def = "chunk",
     .choices = "chunk|sequence",
     .help = "partrain extension, distributed reading: chunk = each rank reads only the "
             "chunks it owns (CNTK; shares of a minibatch vary with the chunk mix); "
             "sequence = the k-th sequence of every minibatch goes to rank k mod workers "
             "(equal shares, but every rank reads every chunk)"},
    {.name = "randomizationSeed",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "seed of the shuffle"},
    {.name = "keepDataInMemory",
     .type = CFG_BOOL,
     .def = "false",
     .help = "keep parsed chunks in memory across epochs"},
    {.name = "frameMode",
     .type = CFG_BOOL,
     .def = "false",
     .help = "split sequences into independent frames"},
    {.name = "skipSequenceIds",
     .type = CFG_BOOL,
     .def = "false",
     .help = "ignore leading sequence ids (every line is a sequence)"},
    {.name = "maxErrors",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "malformed rows tolerated before reading stops with an error"},
    {.name = "traceLevel", .type = CFG_INT, .def = "1", .flags = MIN0, .help = "reader verbosity"},
    {.name = "deserializers",
     .type = CFG_UNSUPPORTED,
     .help = "composite-reader configs are not implemented; use "
             "readerType=CNTKTextFormatReader with file= and input=[ ... ]"},
    {.name = "truncated",
     .type = CFG_UNSUPPORTED,
     .help = "truncated back-propagation through time is not implemented; sequences are "
             "trained whole"},
    {.name = "truncationLength",
     .type = CFG_UNSUPPORTED,
     .help = "truncated back-propagation through time is not implemented"},
    {.name = "multiThreadedDeserialization",
     .type = CFG_UNSUPPORTED,
     .help = "the text reader parses on the training thread's schedule; remove this key"},
    {.name = NULL},
};

const struct cfg_schema reader_schema = {
    .name = "reader",
    .where = "inside a command block",
    .help = "Where the data comes from (CNTK text format).",
    .keys = reader_keys,
};
