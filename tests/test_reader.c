/* The CTF reader (src/reader): index, epochs, randomization, partitioning, minibatches. */
#include <math.h>

#include "reader/dense_store.h"
#include "reader/reader.h"
#include "testutil.h"
#include "core/log.h"

static const char *dir;

/* A reader config over file `name` in dir with inputs x (dense, dim 2) and y (dense 1). */
static struct reader_config conf(const char *name)
{
    struct reader_config rc;
    memset(&rc, 0, sizeof rc);
    snprintf(rc.file, sizeof rc.file, "%s/%s", dir, name);
    rc.file_origin = (struct cfg_origin){.file = "r.cfg", .line = 3, .col = 5};
    rc.ninputs = 2;
    snprintf(rc.inputs[0].name, 64, "x");
    snprintf(rc.inputs[0].alias, 64, "x");
    rc.inputs[0].dim = 2;
    snprintf(rc.inputs[1].name, 64, "y");
    snprintf(rc.inputs[1].alias, 64, "y");
    rc.inputs[1].dim = 1;
    rc.window = 128;
    rc.chunk_bytes = 32u << 20;
    return rc;
}

/* n sequences; sequence i has 1 + i % lens rows "i |x i t |y i" (y on the first row). */
static void write_seqs(const char *name, int n, int lens, int ids)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < n; i++)
        for (int t = 0; t < 1 + (lens ? i % lens : 0); t++) {
            if (ids)
                fprintf(f, "%d ", i);
            fprintf(f, "|x %d %d", i, t);
            if (t == 0)
                fprintf(f, " |y %d", i);
            fputc('\n', f);
        }
    fclose(f);
}

static struct reader *open_ok(const struct reader_config *rc)
{
    struct reader *r = NULL;
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_msg(reader_open(rc, NULL, &r, &e) == 0, "%s", e.msg);
    return r;
}

START_TEST(file_order_minibatches)
{
    dir = enter_tmpdir();
    write_seqs("a.ctf", 10, 0, 0);
    struct reader_config rc = conf("a.ctf");
    struct reader *r = open_ok(&rc);
    ck_assert_uint_eq(reader_sequences(r), 10);
    ck_assert_uint_eq(reader_sweep_samples(r), 10);
    struct minibatch mb = {0};
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(reader_start_epoch(r, 0, 0, 0, 1, &e), 0);
    size_t sizes[] = {4, 4, 2, 0}, seen = 0;
    for (int b = 0; b < 4; b++) {
        ck_assert_int_eq(reader_next(r, 4, &mb, &e), 0);
        ck_assert_uint_eq(mb.global_samples, sizes[b]);
        ck_assert_uint_eq(mb.nseq, sizes[b]);
        for (size_t s = 0; s < mb.nseq; s++, seen++) {
            ck_assert(mb.in[0].data[2 * s] == (float)seen); /* x = (i, 0) */
            ck_assert(mb.in[1].data[s] == (float)seen);     /* y = i */
        }
        if (sizes[b])
            ck_assert_uint_eq(mb.in[0].steps, 1);
    }
    mb_free(&mb);
    reader_close(r);
}
END_TEST

START_TEST(sequences_and_lengths)
{
    dir = enter_tmpdir();
    write_seqs("s.ctf", 6, 3, 1); /* lengths 1,2,3,1,2,3 */
    struct reader_config rc = conf("s.ctf");
    struct reader *r = open_ok(&rc);
    ck_assert_uint_eq(reader_sequences(r), 6);
    ck_assert_uint_eq(reader_sweep_samples(r), 12); /* longest input: x */
    struct minibatch mb = {0};
    struct pt_err e;
    pt_err_clear(&e);
    reader_start_epoch(r, 0, 0, 0, 1, &e);
    ck_assert_int_eq(reader_next(r, 6, &mb, &e), 0); /* 1+2+3 = 6 */
    ck_assert_uint_eq(mb.nseq, 3);
    ck_assert_uint_eq(mb.samples, 6);
    ck_assert_uint_eq(mb.in[0].steps, 3);
    ck_assert_uint_eq(mb.in[1].steps, 1);
    ck_assert_uint_eq(mb.in[0].len[0], 1);
    ck_assert_uint_eq(mb.in[0].len[2], 3);
    /* step 2 of sequence 2: column 2*nseq + 2 = 8 holds (2, 2); padding is zero */
    ck_assert(mb.in[0].data[2 * 8] == 2.0f && mb.in[0].data[2 * 8 + 1] == 2.0f);
    ck_assert(mb.in[0].data[2 * (1 * 3 + 0)] == 0.0f);
    mb_free(&mb);
    reader_close(r);
    /* definesMBSize on y: every sequence is one sample */
    rc.inputs[1].defines_mb = 1;
    r = open_ok(&rc);
    ck_assert_uint_eq(reader_sweep_samples(r), 6);
    reader_close(r);
}
END_TEST

START_TEST(file_quirks)
{
    dir = enter_tmpdir();
    write_file(dir, "q.ctf",
               "\xEF\xBB\xBF\n  \n|x 1 2 |y 3\n|# just a comment\n\n|x 4 |y 5 |z 9 9");
    struct reader_config rc = conf("q.ctf");
    struct pt_log log;
    pt_log_init(&log);
    char *buf = NULL;
    size_t len = 0;
    log.out = open_memstream(&buf, &len);
    struct reader *r = NULL;
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(reader_open(&rc, &log, &r, &e), 0);
    fclose(log.out);
    ck_assert_uint_eq(reader_sequences(r), 2);
    char want[600];
    snprintf(
        want, sizeof want,
        "%s/q.ctf:6: warning: input 'x' has fewer than 2 values; zero-padded (1 row like this)\n",
        dir);
    ck_assert_str_eq(buf, want);
    free(buf);
    struct minibatch mb = {0};
    reader_start_epoch(r, 0, 0, 0, 1, &e);
    reader_next(r, 10, &mb, &e);
    ck_assert(mb.in[0].data[2] == 4.0f && mb.in[0].data[3] == 0.0f);
    mb_free(&mb);
    reader_close(r);
}
END_TEST

START_TEST(errors_and_max_errors)
{
    dir = enter_tmpdir();
    write_file(dir, "b.ctf", "|x 1 2 |y 1\n|x 1 two |y 2\n|x 3 4 |y 3\n|x 5 6 7 |y 4\n");
    struct reader_config rc = conf("b.ctf");
    struct reader *r = NULL;
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(reader_open(&rc, NULL, &r, &e), PT_EUSER);
    char want[600];
    snprintf(want, sizeof want, "%s/b.ctf:2:6: error: input 'x': expected a number, got \"two\"",
             dir);
    ck_assert_str_eq(e.msg, want);
    ck_assert_ptr_null(r);
    rc.max_errors = 1;
    pt_err_clear(&e);
    ck_assert_int_eq(reader_open(&rc, NULL, &r, &e), PT_EUSER);
    snprintf(want, sizeof want,
             "%s/b.ctf:4:8: error: input 'x': more values than its dim, got \"7\"; "
             "2 malformed rows, more than maxErrors=1",
             dir);
    ck_assert_str_eq(e.msg, want);
    rc.max_errors = 2;
    r = open_ok(&rc);
    ck_assert_uint_eq(reader_sweep_samples(r), 2); /* the bad rows are skipped */
    struct minibatch mb = {0};
    reader_start_epoch(r, 0, 0, 0, 1, &e);
    ck_assert_int_eq(reader_next(r, 10, &mb, &e), 0);
    ck_assert_uint_eq(mb.nseq, 2);
    ck_assert(mb.in[1].data[1] == 3.0f);
    mb_free(&mb);
    reader_close(r);
    /* missing file, empty file */
    rc = conf("none.ctf");
    pt_err_clear(&e);
    ck_assert_int_eq(reader_open(&rc, NULL, &r, &e), PT_EUSER);
    snprintf(want, sizeof want,
             "r.cfg:3:5: error: cannot read data file '%s/none.ctf': No such file or directory",
             dir);
    ck_assert_str_eq(e.msg, want);
    write_file(dir, "e.ctf", "\n\n|# nothing\n");
    rc = conf("e.ctf");
    pt_err_clear(&e);
    ck_assert_int_eq(reader_open(&rc, NULL, &r, &e), PT_EUSER);
    ck_assert_ptr_nonnull(strstr(e.msg, "holds no samples of the configured inputs"));
}
END_TEST

/* The sequence ids (x[0]) of one epoch, in minibatch order, for rank of workers. */
static size_t epoch_ids(struct reader *r, size_t epoch, size_t esize, int rank, int workers,
                        size_t mbsize, int *ids, size_t *globals, size_t *nmb)
{
    struct minibatch mb = {0};
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(reader_start_epoch(r, epoch, esize, rank, workers, &e), 0);
    size_t n = 0, b = 0;
    for (;;) {
        ck_assert_int_eq(reader_next(r, mbsize, &mb, &e), 0);
        if (globals)
            globals[b] = mb.global_samples;
        if (mb.global_samples == 0)
            break;
        b++;
        for (size_t s = 0; s < mb.nseq; s++)
            ids[n++] = (int)mb.in[0].data[2 * s];
    }
    if (nmb)
        *nmb = b;
    mb_free(&mb);
    return n;
}

START_TEST(randomized_every_sequence_once)
{
    dir = enter_tmpdir();
    write_seqs("r.ctf", 500, 0, 0);
    struct reader_config rc = conf("r.ctf");
    rc.randomize = 1;
    rc.chunk_bytes = 300; /* many chunks */
    rc.window = 4;
    struct reader *r = open_ok(&rc);
    ck_assert_uint_gt(reader_chunks(r), 10);
    int a[500], b[500], c[500];
    ck_assert_uint_eq(epoch_ids(r, 0, 0, 0, 1, 32, a, NULL, NULL), 500);
    ck_assert_uint_eq(epoch_ids(r, 1, 0, 0, 1, 32, b, NULL, NULL), 500);
    ck_assert_uint_eq(epoch_ids(r, 0, 0, 0, 1, 32, c, NULL, NULL), 500);
    ck_assert_int_eq(memcmp(a, c, sizeof a), 0); /* deterministic */
    ck_assert_int_ne(memcmp(a, b, sizeof a), 0); /* epochs differ */
    int seen[500] = {0}, moved = 0;
    for (int i = 0; i < 500; i++) {
        seen[a[i]]++;
        moved += a[i] != i;
    }
    for (int i = 0; i < 500; i++)
        ck_assert_int_eq(seen[i], 1);
    ck_assert_int_gt(moved, 400);
    reader_close(r);
    rc.seed = 7;
    r = open_ok(&rc);
    epoch_ids(r, 0, 0, 0, 1, 32, c, NULL, NULL);
    ck_assert_int_ne(memcmp(a, c, sizeof a), 0); /* another seed, another order */
    reader_close(r);
}
END_TEST

START_TEST(distributed_partition)
{
    dir = enter_tmpdir();
    write_seqs("d.ctf", 300, 4, 1);
    for (int randomize = 0; randomize <= 1; randomize++) {
        struct reader_config rc = conf("d.ctf");
        rc.randomize = randomize;
        rc.chunk_bytes = 200;
        rc.window = 3;
        struct reader *one = open_ok(&rc);
        int all[300];
        size_t g1[400], nmb1;
        size_t n1 = epoch_ids(one, 1, 0, 0, 1, 40, all, g1, &nmb1);
        ck_assert_uint_eq(n1, 300);
        for (int workers = 2; workers <= 4; workers++) {
            int seen[300] = {0};
            size_t total = 0;
            for (int rank = 0; rank < workers; rank++) {
                struct reader *r = open_ok(&rc);
                int ids[300];
                size_t g[400], nmb;
                size_t n = epoch_ids(r, 1, 0, rank, workers, 40, ids, g, &nmb);
                /* every rank sees the same global minibatches */
                ck_assert_uint_eq(nmb, nmb1);
                ck_assert_int_eq(memcmp(g, g1, (nmb + 1) * sizeof *g), 0);
                for (size_t i = 0; i < n; i++)
                    seen[ids[i]]++;
                total += n;
                reader_close(r);
            }
            ck_assert_uint_eq(total, 300);
            for (int i = 0; i < 300; i++)
                ck_assert_int_eq(seen[i], 1);
        }
        reader_close(one);
    }
}
END_TEST

START_TEST(epoch_size_spans_sweeps)
{
    dir = enter_tmpdir();
    write_seqs("p.ctf", 10, 0, 0);
    struct reader_config rc = conf("p.ctf");
    struct reader *r = open_ok(&rc);
    int ids[64];
    /* epochs of 4 samples over 10: 0-3, 4-7, 8,9,0,1, 2-5 */
    size_t n = epoch_ids(r, 2, 4, 0, 1, 3, ids, NULL, NULL);
    ck_assert_uint_eq(n, 4);
    ck_assert_int_eq(ids[0], 8);
    ck_assert_int_eq(ids[1], 9);
    ck_assert_int_eq(ids[2], 0);
    ck_assert_int_eq(ids[3], 1);
    n = epoch_ids(r, 3, 4, 0, 1, 3, ids, NULL, NULL);
    ck_assert_int_eq(ids[0], 2);
    reader_close(r);
}
END_TEST

START_TEST(keep_in_memory_frame_mode_sparse)
{
    dir = enter_tmpdir();
    write_seqs("k.ctf", 200, 3, 1);
    struct reader_config rc = conf("k.ctf");
    rc.randomize = 1;
    rc.chunk_bytes = 256;
    rc.window = 2;
    struct reader *a = open_ok(&rc);
    rc.keep_in_memory = 1;
    struct reader *b = open_ok(&rc);
    int ia[400], ib[400];
    size_t na = epoch_ids(a, 0, 0, 0, 1, 16, ia, NULL, NULL);
    size_t nb = epoch_ids(b, 0, 0, 0, 1, 16, ib, NULL, NULL);
    ck_assert_uint_eq(na, nb);
    ck_assert_int_eq(memcmp(ia, ib, na * sizeof *ia), 0);
    reader_close(a);
    reader_close(b);
    /* frame mode: every row its own sample (so every row needs every input) */
    char path[512];
    snprintf(path, sizeof path, "%s/f.ctf", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 200; i++)
        for (int t = 0; t < 1 + i % 3; t++)
            fprintf(f, "%d |x %d %d |y %d\n", i, i, t, i);
    fclose(f);
    rc = conf("f.ctf");
    rc.frame_mode = 1;
    a = open_ok(&rc);
    ck_assert_uint_eq(reader_sequences(a), reader_sweep_samples(a));
    ck_assert_uint_eq(reader_sequences(a), 399); /* 200 sequences of 1, 2, 3, 1, ... rows */
    reader_close(a);
    /* sparse input densified */
    write_file(dir, "sp.ctf", "|w 0:1.5 3:2 |y 1\n|w |y 2\n");
    rc = conf("sp.ctf");
    snprintf(rc.inputs[0].name, 64, "w");
    snprintf(rc.inputs[0].alias, 64, "w");
    rc.inputs[0].dim = 4;
    rc.inputs[0].sparse = 1;
    a = open_ok(&rc);
    struct minibatch mb = {0};
    struct pt_err e;
    pt_err_clear(&e);
    reader_start_epoch(a, 0, 0, 0, 1, &e);
    reader_next(a, 10, &mb, &e);
    float want[8] = {1.5f, 0, 0, 2, 0, 0, 0, 0};
    ck_assert_int_eq(memcmp(mb.in[0].data, want, sizeof want), 0);
    mb_free(&mb);
    reader_close(a);
}
END_TEST

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
        "two = [ deserializers = ([ module = CNTKTextFormatReader ; file = a\n"
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
        "none = [ file = a ; input = [ x = [ dim = 1 ; format = dense ] ] ]\n",
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

    static const struct {
        const char *block, *msg;
    } bad[] = {
        {"two", "d.cfg:13:7: error: two.deserializers: 2 deserializers: partrain reads exactly "
                "one, a CNTKTextFormatDeserializer (composing several is not supported)"},
        {"htk", "d.cfg:14:35: error: type=HTKFeatureDeserializer is not supported by partrain "
                "(supported: CNTKTextFormatDeserializer)"},
        {"img", "d.cfg:15:37: error: module=ImageReader is not supported by partrain "
                "(supported: CNTKTextFormatReader)"},
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
                 "CNTKTextFormatReader, with file= and input= in this block; required unless "
                 "deserializers = ({ ... }) (CNTK's composite form) stands instead)"},
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

/* Bit patterns, so that -0.0 and 0.0 count as different values. */
static int same_bits(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

START_TEST(dense_store_packs_losslessly)
{
    struct pt_err e;
    pt_err_clear(&e);
    struct dense_store s = {0};
    enum { DIM = 8, ROWS = 64 };
    float v[ROWS * DIM], row[DIM];
    for (int k = 0; k < ROWS * DIM; k++) /* 256 distinct values, -0.0 and 0.0 among them */
        v[k] = k % 256 == 255 ? -0.0f : (float)(k % 256) / 255.0f;
    dense_store_reset(&s, DIM);
    ck_assert_int_eq(dense_store_append(&s, v, ROWS / 2, &e), 0);
    ck_assert_int_eq(dense_store_append(&s, v + ROWS / 2 * DIM, ROWS / 2, &e), 0);
    ck_assert_uint_eq(dense_store_bytes(&s), ROWS * DIM); /* a byte per value */
    dense_store_seal(&s);
    for (int r = 0; r < ROWS; r++) {
        dense_store_row(&s, (size_t)r, row);
        ck_assert(same_bits(row, v + r * DIM, DIM));
    }
    /* a 257th value in the middle of an append: the rows stay exact, now as floats */
    dense_store_reset(&s, DIM);
    ck_assert_int_eq(dense_store_append(&s, v, ROWS / 2, &e), 0);
    float w[ROWS * DIM];
    memcpy(w, v, sizeof w);
    w[5 * DIM + 3] = 1e9f; /* in the second append's 6th row */
    for (int k = 6 * DIM; k < ROWS * DIM; k++)
        w[k] = (float)sin(k);
    ck_assert_int_eq(dense_store_append(&s, w, ROWS, &e), 0);
    ck_assert_uint_eq(dense_store_bytes(&s), (ROWS / 2 + ROWS) * DIM * sizeof(float));
    dense_store_seal(&s);
    for (int r = 0; r < ROWS / 2 + ROWS; r++) {
        dense_store_row(&s, (size_t)r, row);
        const float *want = r < ROWS / 2 ? v + r * DIM : w + (r - ROWS / 2) * DIM;
        ck_assert_msg(same_bits(row, want, DIM), "row %d", r);
    }
    /* the next chunk in the same slot packs again */
    dense_store_reset(&s, 2);
    ck_assert_int_eq(dense_store_append(&s, v, 3, &e), 0);
    ck_assert_uint_eq(dense_store_bytes(&s), 6);
    dense_store_row(&s, 2, row);
    ck_assert(same_bits(row, v + 4, 2));
    dense_store_free(&s);
}
END_TEST

/* Value j of line i: 200 values k/255 in the first half of the file, then all distinct. */
static float big_value(int i, int j, int lines)
{
    return i < lines / 2 ? (float)((i * 7 + j) % 200) / 255.0f : (float)(3.0 * sin(i * 131.0 + j));
}

/* Every value through reader_next, in file order, against the written floats. */
static void check_file_order(struct reader *r, int lines, int dim, float (*value)(int, int, int))
{
    struct minibatch mb = {0};
    struct pt_err e;
    pt_err_clear(&e);
    for (size_t epoch = 0; epoch < 2; epoch++) { /* the second epoch parses the chunks again */
        ck_assert_int_eq(reader_start_epoch(r, epoch, 0, 0, 1, &e), 0);
        int line = 0;
        for (;;) {
            ck_assert_msg(reader_next(r, 100, &mb, &e) == 0, "%s", e.msg);
            if (!mb.global_samples)
                break;
            for (size_t s = 0; s < mb.nseq; s++, line++)
                for (int j = 0; j < dim; j++) {
                    float want = value(line, j, lines);
                    ck_assert_msg(same_bits(&mb.in[0].data[s * (size_t)dim + (size_t)j], &want, 1),
                                  "epoch %zu line %d value %d", epoch, line, j);
                }
        }
        ck_assert_int_eq(line, lines);
    }
    mb_free(&mb);
}

START_TEST(dense_values_exact_packed_or_not)
{
    dir = enter_tmpdir();
    enum { LINES = 4000, DIM = 100 };
    char path[512];
    snprintf(path, sizeof path, "%s/big.ctf", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < LINES; i++) {
        fputs("|x", f);
        for (int j = 0; j < DIM; j++)
            fprintf(f, " %.9g", (double)big_value(i, j, LINES));
        fprintf(f, " |y %d\n", i % 3);
    }
    fclose(f);
    /* one chunk read in pieces (packed, then floats from the middle); then chunks of about
     * 1 MB, two resident: packed, mixed and float chunks, slots reused across kinds */
    size_t chunk[] = {32u << 20, 1u << 20};
    for (int c = 0; c < 2; c++) {
        struct reader_config rc = conf("big.ctf");
        rc.inputs[0].dim = DIM;
        rc.chunk_bytes = chunk[c];
        struct reader *r = open_ok(&rc);
        check_file_order(r, LINES, DIM, big_value);
        reader_close(r);
    }
}
END_TEST

static float long_value(int i, int j, int lines)
{
    (void)lines;
    return (float)((i + j) % 4) * 0.25f;
}

START_TEST(line_longer_than_a_read_piece)
{
    dir = enter_tmpdir();
    enum { LINES = 3, DIM = 300000 }; /* 1.5 MB a line */
    char path[512];
    snprintf(path, sizeof path, "%s/long.ctf", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < LINES; i++) {
        fputs("|x", f);
        for (int j = 0; j < DIM; j++)
            fprintf(f, " %g", (double)long_value(i, j, LINES));
        fputs(" |y 1", f);
        if (i + 1 < LINES)
            fputc('\n', f); /* no final newline */
    }
    fclose(f);
    struct reader_config rc = conf("long.ctf");
    rc.inputs[0].dim = DIM;
    struct reader *r = open_ok(&rc);
    check_file_order(r, LINES, DIM, long_value);
    reader_close(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("reader");
    TCase *t = tcase_create("reader");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, file_order_minibatches);
    tcase_add_test(t, sequences_and_lengths);
    tcase_add_test(t, file_quirks);
    tcase_add_test(t, errors_and_max_errors);
    tcase_add_test(t, randomized_every_sequence_once);
    tcase_add_test(t, distributed_partition);
    tcase_add_test(t, epoch_size_spans_sweeps);
    tcase_add_test(t, keep_in_memory_frame_mode_sparse);
    tcase_add_test(t, config_from_block);
    tcase_add_test(t, config_deserializers);
    tcase_add_test(t, missing_inputs_and_typos);
    tcase_add_test(t, one_hot_labels);
    tcase_add_test(t, dense_store_packs_losslessly);
    tcase_add_test(t, dense_values_exact_packed_or_not);
    tcase_add_test(t, line_longer_than_a_read_piece);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
