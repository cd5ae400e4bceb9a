/* The reader's configuration (src/reader/reader_config.c, reader_schema.c): the reader
 * block and CNTK's deserializers form, the inputs a network needs and their typos, one-hot
 * label checks; part of tests/test_reader (test_reader.h). */
#include "test_reader.h"

START_TEST(config_from_block)
{
    struct pt_err e;
    struct cfg *c = load(
        "c.cfg",
        "reader=[readerType=CNTKTextFormatReader; file=d.ctf; randomize=none\n"
        " input=[features=[dim=784; format=dense]; labels=[dim=10; format=sparse; alias=L]]]\n"
        "bad=[file=f; input=[a=[dim=1;format=dense;alias=z]; b=[dim=1;format=dense;alias=z]]]\n"
        "two=[file=f; input=[a=[dim=1;format=dense;definesMBSize=1]; "
        "b=[dim=1;format=dense;definesMBSize=t]]]\n"
        "huge=[file=f; input=[a=[dim=1073741825;format=dense]]]\n"
        "readerType=CNTKTextFormatReader\n", /* found climbing from bad, two and huge */
        &e);
    struct reader_config rc;
    ck_assert_int_eq(reader_config_read(node_at(c, "reader"), &rc, &e), 0);
    ck_assert_str_eq(rc.file, "d.ctf");
    ck_assert_int_eq(rc.randomize, 0);
    ck_assert_int_eq(rc.ninputs, 2);
    ck_assert_str_eq(rc.inputs[1].alias, "L");
    ck_assert_int_eq(rc.inputs[1].sparse, 1);
    ck_assert_uint_eq(rc.chunk_bytes, 33554432);
    ck_assert_uint_eq(rc.window, 128);
    ck_assert_int_eq(reader_config_read(node_at(c, "bad"), &rc, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "c.cfg:3:53: error: reader inputs 'a' and 'b' have the same alias 'z'");
    pt_err_clear(&e);
    ck_assert_int_eq(reader_config_read(node_at(c, "two"), &rc, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "c.cfg:4:14: error: reader: only one input may set definesMBSize=true");
    /* refused at its origin, not clamped */
    pt_err_clear(&e);
    ck_assert_int_eq(reader_config_read(node_at(c, "huge"), &rc, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "c.cfg:5:29: error: dim: 1073741825 is out of range: must be >= 1 and "
                            "<= 1073741824 (2^30)");
    cfg_free(c);
}
END_TEST

/* CNTK's composite form: reader = { deserializers = ({ type = "CNTKTextFormatDeserializer" ...
 * }) } reads as readerType = CNTKTextFormatReader with the deserializer's keys; reader-level
 * keys stay in the reader block; errors name the real file:line:col inside the value. */
START_TEST(config_deserializers)
{
    struct pt_err e;
    struct cfg *c = load(
        "d.cfg",
        "dimension = 5 ; traceLevel = 3\n"
        "ok = { randomize = false ; chunkSizeInBytes = 100 ; maxErrors = 4 ; verbosity = 0\n"
        "    deserializers = (\n"
        "        # CNTK's tutorials write it this way\n"
        "        { type = \"CNTKTextFormatDeserializer\" ; module = \"CNTKTextFormatReader\"\n"
        "          file = \"d.ctf\" ; chunkSizeInBytes = 9000\n"
        "          input = [ features = [ dim = $dimension$ ; format = \"dense\" ]\n"
        "                    labels = { dim = 2 ; format = sparse ; alias = L } ] } ) }\n"
        "bare = [ deserializers = [ type = CNTKTextFormatDeserializer ; file = b.ctf\n"
        "    input = [ x = [ dim = 1 ; format = dense ] ] ] ]\n"
        "two = [ deserializers = ([ module = ImageReader ; file = a\n"
        "        input = [ x = [ dim = 1 ; format = dense ] ] ] :\n"
        "      [ type = HTKFeatureDeserializer ]) ]\n"
        "htk = [ deserializers = ({ type = HTKFeatureDeserializer ; file = a ; input = [ ] }) ]\n"
        "img = [ deserializers = ({ module = ImageReader ; file = a ; input = [ ] }) ]\n"
        "which = [ deserializers = ({ file = a ; input = [ x = [ dim = 1 ; format = dense ] ] }) "
        "]\n"
        "nofile = [ file = a ; deserializers = ({ type = CNTKTextFormatDeserializer\n"
        "    input = [ x = [ dim = 1 ; format = dense ] ] }) ]\n"
        "noinput = [ input = [ x = [ dim = 1 ; format = dense ] ]\n"
        "    deserializers = ({ type = CNTKTextFormatDeserializer ; file = a }) ]\n"
        "both = [ readerType = CNTKTextFormatReader\n"
        "    deserializers = ({ type = CNTKTextFormatDeserializer ; file = a }) ]\n"
        "dim0 = [ deserializers = ({ type = CNTKTextFormatDeserializer ; file = a\n"
        "    input = [ x = [ dim = 1 ; format = dense ]\n"
        "              y = [ dim = 0 ; format = dense ] ] }) ]\n"
        "empty = [ deserializers = ( ) ]\n"
        "junk = [ deserializers = ({ type = CNTKTextFormatDeserializer } x) ]\n"
        "word = [ deserializers = CNTKTextFormatDeserializer ]\n"
        "none = [ file = a ; input = [ x = [ dim = 1 ; format = dense ] ] ]\n"
        "pair = [ deserializers = ({ type = CNTKTextFormatDeserializer ; file = a\n"
        "    input = [ x = [ dim = 2 ; format = dense ] ] } : { type = CNTKTextFormatDeserializer\n"
        "    file = b ; chunkSizeInBytes = 77 ; input = [ y = [ dim = 3 ; format = dense ] ] }) "
        "]\n",
        &e);
    ck_assert_msg(e.code == 0, "%s", e.msg);
    struct reader_config rc;
    ck_assert_int_eq(reader_config_read(node_at(c, "ok"), &rc, &e), 0);
    ck_assert_str_eq(rc.file, "d.ctf");
    ck_assert_int_eq(rc.file_origin.line, 6);
    ck_assert_int_eq(rc.file_origin.col, 18);
    ck_assert_int_eq(rc.randomize, 0);       /* the reader block's */
    ck_assert_uint_eq(rc.chunk_bytes, 9000); /* the deserializer's wins */
    ck_assert_int_eq(rc.max_errors, 4);      /* the reader block's, climbing */
    ck_assert_int_eq(rc.trace, 3);           /* the top level's, climbing */
    ck_assert_int_eq(rc.ninputs, 2);
    ck_assert_int_eq(rc.inputs[0].dim, 5); /* $dimension$ from the top level */
    ck_assert_str_eq(rc.inputs[1].alias, "L");
    ck_assert_int_eq(rc.inputs[1].sparse, 1);
    /* read again (every command reads its readers more than once): the same */
    ck_assert_int_eq(reader_config_read(node_at(c, "ok"), &rc, &e), 0);
    ck_assert_uint_eq(rc.chunk_bytes, 9000);
    ck_assert_int_eq(reader_config_read(node_at(c, "bare"), &rc, &e), 0);
    ck_assert_str_eq(rc.file, "b.ctf");
    ck_assert_int_eq(rc.trace, 3);
    ck_assert_int_eq(rc.aux.first, 0); /* one deserializer */
    /* two compose: the second's inputs after the first's, its file and keys its own */
    ck_assert_int_eq(reader_config_read(node_at(c, "pair"), &rc, &e), 0);
    ck_assert_str_eq(rc.file, "a");
    ck_assert_int_eq(rc.ninputs, 2);
    ck_assert_int_eq(rc.aux.first, 1);
    ck_assert_str_eq(rc.inputs[1].name, "y");
    ck_assert_int_eq(rc.inputs[1].dim, 3);
    ck_assert_str_eq(rc.aux.file, "b");
    ck_assert_uint_eq(rc.aux.chunk_bytes, 77);
    ck_assert_uint_eq(rc.chunk_bytes, 32u << 20); /* the first's: the default */

    static const struct {
        const char *block, *msg;
    } bad[] = {
        {"two", "d.cfg:11:26: error: two.deserializers: an HTK deserializer composes with the "
                "other HTK deserializer (HTKFeatureDeserializer : HTKMLFDeserializer) or with a "
                "CNTKTextFormatDeserializer of the labels, not with this one"},
        {"htk", "d.cfg:14:71: error: htk.deserializers.input: expected one stream, input = [ "
                "NAME = [ ... ] ]"},
        {"img", "d.cfg:15:62: error: an ImageDeserializer's input has one stream with "
                "transforms = ( ... ) (the image) and one with labelDim = N (its class); found 0 "
                "and 0"},
        {"which", "d.cfg:16:28: error: which.deserializers: which deserializer? expected type = "
                  "\"CNTKTextFormatDeserializer\" (or module = \"CNTKTextFormatReader\"): "
                  "partrain reads CNTK text format"},
        {"nofile", "d.cfg:17:12: error: nofile.file: the reader has deserializers, so file= "
                   "belongs inside the deserializer: deserializers = ({ type = "
                   "\"CNTKTextFormatDeserializer\"; file = ...; input = [ ... ] })"},
        {"noinput", "d.cfg:19:13: error: noinput.input: the reader has deserializers, so input= "
                    "belongs inside the deserializer: deserializers = ({ type = "
                    "\"CNTKTextFormatDeserializer\"; file = ...; input = [ ... ] })"},
        {"both", "d.cfg:22:5: error: reader: 'deserializers' and 'readerType' (set at d.cfg:21:10) "
                 "exclude each other; give only one"},
        {"dim0", "d.cfg:25:27: error: dim: 0 is out of range: must be >= 1"},
        {"empty", "d.cfg:26:27: error: empty.deserializers: no deserializer: expected ({ type = "
                  "\"CNTKTextFormatDeserializer\"; file = ...; input = [ ... ] })"},
        {"junk", "d.cfg:27:65: error: junk.deserializers: expected ':' or ')' after a block, got "
                 "'x' (an array of blocks is ( [ ... ] : [ ... ] ))"},
        {"word", "d.cfg:28:26: error: word.deserializers: expected a block '[ ... ]' or '{ ... }', "
                 "got 'C' (an array of blocks is ( [ ... ] : [ ... ] ))"},
        {"none", "d.cfg:29:1: error: none: required key 'readerType' is not set (the reader, "
                 "CNTKTextFormatReader, with file= and input= in this block (or CNTK's "
                 "ImageReader, a map file= and its image and class blocks: README \"Images\"), or "
                 "CNTK's HTKMLFReader (README \"Speech\"), or CNTK's LMSequenceReader (README "
                 "\"Language models\"); "
                 "required unless deserializers = ({ ... }) (CNTK's composite form) stands "
                 "instead)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pt_err_clear(&e);
        ck_assert_int_eq(reader_config_read(node_at(c, bad[i].block), &rc, &e), PT_EUSER);
        ck_assert_str_eq(e.msg, bad[i].msg);
    }
    cfg_free(c);

    /* a deserializer without file or input, and one with an unknown key (a warning, an error
     * with strictConfig=true, naming the block it belongs in) */
    c = load("u.cfg",
             "nofile = { deserializers = ({ type = CNTKTextFormatDeserializer\n"
             "    input = [ x = [ dim = 1 ; format = dense ] ] }) }\n"
             "noinput = { deserializers = ({ type = CNTKTextFormatDeserializer ; file = a }) }\n"
             "extra = { deserializers = ({ type = CNTKTextFormatDeserializer ; file = a\n"
             "    randomize = false ; input = [ x = [ dim = 1 ; format = dense ] ] }) }\n",
             &e);
    ck_assert_int_eq(reader_config_read(node_at(c, "nofile"), &rc, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "u.cfg:1:29: error: nofile.deserializers: required key 'file' is not "
                            "set (the CTF data file)");
    pt_err_clear(&e);
    ck_assert_int_eq(reader_config_read(node_at(c, "noinput"), &rc, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "u.cfg:3:30: error: noinput.deserializers: required key 'input' is "
                            "not set (the input streams: input = [ features = [ dim=784; "
                            "format=dense ] ... ])");
    pt_err_clear(&e);
    ck_assert_int_eq(reader_config_read(node_at(c, "extra"), &rc, &e), 0);
    ck_assert_int_eq(rc.randomize, 1); /* ignored there: CNTK reads it in the reader block */
    ck_assert_uint_eq(cfg_warning_count(c), 1);
    ck_assert_str_eq(cfg_warning(c, 0), "u.cfg:5:5: warning: unknown key "
                                        "'extra.deserializers.randomize' in deserializer is "
                                        "ignored ('randomize' belongs in the reader block)");
    ck_assert_int_eq(reader_config_read(node_at(c, "extra"), &rc, &e), 0);
    ck_assert_uint_eq(cfg_warning_count(c), 1); /* checked once */
    cfg_free(c);
    c = load("s.cfg",
             "strictConfig = true\n"
             "extra = { deserializers = ({ type = CNTKTextFormatDeserializer ; file = a\n"
             "    randomize = false ; input = [ x = [ dim = 1 ; format = dense ] ] }) }\n",
             &e);
    ck_assert_int_eq(reader_config_read(node_at(c, "extra"), &rc, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "s.cfg:3:5: error: unknown key 'extra.deserializers.randomize' in "
                            "deserializer ('randomize' belongs in the reader block) "
                            "(strictConfig=true)");
    cfg_free(c);
}
END_TEST

/* reader_open's error for file name (in dir) with config rc, or "" when it opens. */
static const char *open_error(const struct reader_config *rc, struct pt_err *e)
{
    struct reader *r = NULL;
    pt_err_clear(e);
    if (reader_open(rc, NULL, &r, e) == 0) {
        reader_close(r);
        return "";
    }
    ck_assert_ptr_null(r);
    return e->msg;
}

#define EXPECT_OPEN_ERROR(rc, fmt, ...)                                                            \
    do {                                                                                           \
        char want_[1200];                                                                          \
        struct pt_err e_;                                                                          \
        snprintf(want_, sizeof want_, fmt, __VA_ARGS__);                                           \
        ck_assert_str_eq(open_error(rc, &e_), want_);                                              \
    } while (0)

START_TEST(missing_inputs_and_typos)
{
    dir = enter_tmpdir();
    const char *decl = "the reader declares |x (dense, dim 2), |y (dense, dim 1)";
    /* a misspelled alias: the row lacks x, whatever maxErrors says (CNTK: "Input is empty") */
    write_file(dir, "m.ctf", "|x 1 2 |y 1\n|featurs 1 2 |y 2\n|x 3 4 |y 3\n");
    struct reader_config rc = conf("m.ctf");
    for (int tolerate = 0; tolerate < 2; tolerate++) {
        rc.max_errors = tolerate ? 10 : 0;
        EXPECT_OPEN_ERROR(&rc,
                          "%s/m.ctf:2: error: the line has no row of input 'x' (|x); %s; "
                          "%s/m.ctf:2 has '|featurs', which is not declared (a misspelled alias?)",
                          dir, decl, dir);
    }
    /* an input left out, no typo */
    write_file(dir, "n.ctf", "|x 1 2 |y 1\n|x 1 2\n");
    rc = conf("n.ctf");
    EXPECT_OPEN_ERROR(&rc, "%s/n.ctf:2: error: the line has no row of input 'y' (|y); %s", dir,
                      decl);
    /* sequences: a sequence needs a row of every input, not every line */
    write_file(dir, "s.ctf", "1 |x 1 2 |y 1\n1 |x 2 2\n2 |x 3 4\n2 |x 5 6 |Y 1\n3 |x 1 1 |y 0\n");
    rc = conf("s.ctf");
    EXPECT_OPEN_ERROR(&rc,
                      "%s/s.ctf:3: error: sequence 2 (from this line) has no row of input 'y' "
                      "(|y); %s; %s/s.ctf:4 has '|Y', which is not declared (a misspelled alias?)",
                      dir, decl, dir);
    /* the alias is named with the stream when they differ */
    write_file(dir, "a.ctf", "|x 1 2\n");
    rc = conf("a.ctf");
    snprintf(rc.inputs[1].alias, 64, "lab");
    EXPECT_OPEN_ERROR(&rc,
                      "%s/a.ctf:1: error: the line has no row of input 'y' (|lab); the reader "
                      "declares |x (dense, dim 2), |lab (y: dense, dim 1)",
                      dir);
    /* a line of undeclared inputs only is a row that cannot be read: maxErrors counts it */
    write_file(dir, "u.ctf", "|x 1 2 |y 1\n|featurs 1 2 |# note\n|x 3 4 |y 0\n");
    rc = conf("u.ctf");
    EXPECT_OPEN_ERROR(&rc,
                      "%s/u.ctf:2: error: no declared input on the line ('|featurs' is not "
                      "declared; %s)",
                      dir, decl);
    rc.max_errors = 1;
    struct reader *r = open_ok(&rc);
    ck_assert_uint_eq(reader_sequences(r), 2);
    reader_close(r);
    /* undeclared inputs next to every declared one are skipped (SPEC 6) */
    write_file(dir, "w.ctf", "|x 1 2 |y 1 |weights 3\n|# c\n");
    rc = conf("w.ctf");
    r = open_ok(&rc);
    ck_assert_uint_eq(reader_sequences(r), 1);
    reader_close(r);
}
END_TEST

START_TEST(one_hot_labels)
{
    dir = enter_tmpdir();
    struct reader_config rc;
    const char *rows[][2] = {
        {"0 0 0", "no value 1"},           {"0 2 0", "value 2 at index 1"},
        {"1 0 1", "2 values 1"},           {"0.9 0.1 0", "value 0.9 at index 0"},
        {"0 1 -1", "value -1 at index 2"},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        char text[128];
        snprintf(text, sizeof text, "|x 1 2 |y 0 0 1\n|x 1 2 |y %s\n", rows[k][0]);
        write_file(dir, "o.ctf", text);
        rc = conf("o.ctf");
        rc.inputs[1].dim = 3;
        struct pt_err e;
        ck_assert_str_eq(open_error(&rc, &e), ""); /* no classification: any values */
        ck_assert_int_eq(reader_config_one_hot(&rc, "y", "the criterion CrossEntropyWithSoftmax"),
                         1);
        rc.max_errors = 100; /* well-formed text: not a row to skip */
        EXPECT_OPEN_ERROR(
            &rc,
            "%s/o.ctf:2: error: input 'y' (|y): expected a one-hot label row (one "
            "value 1, the others 0) for the criterion CrossEntropyWithSoftmax, got %s",
            dir, rows[k][1]);
    }
    /* sparse labels: the entries that are there */
    write_file(dir, "p.ctf", "|x 1 2 |y 2:1\n|x 1 2 |y 0:0 1:1\n|x 1 2 |y 1:0.5\n");
    rc = conf("p.ctf");
    rc.inputs[1].dim = 3;
    rc.inputs[1].sparse = 1;
    ck_assert_int_eq(reader_config_one_hot(&rc, "y", "ClassificationError"), 1);
    ck_assert_int_eq(reader_config_one_hot(&rc, "labels", "ClassificationError"), 0);
    EXPECT_OPEN_ERROR(&rc,
                      "%s/p.ctf:3: error: input 'y' (|y): expected a one-hot label row (one value "
                      "1, the others 0) for ClassificationError, got value 0.5 at index 1",
                      dir);
}
END_TEST

void reader_config_tests(TCase *t)
{
    tcase_add_test(t, config_from_block);
    tcase_add_test(t, config_deserializers);
    tcase_add_test(t, missing_inputs_and_typos);
    tcase_add_test(t, one_hot_labels);
}
