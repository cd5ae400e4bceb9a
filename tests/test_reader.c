/* The CTF reader (src/reader): index, epochs, randomization, partitioning, minibatches. */
#include <math.h>

#include "reader/dense_store.h"
#include "test_reader.h"

/* A new file `name` in the test's directory, for writing. */
static FILE *create(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    return f;
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
    FILE *f = create("f.ctf");
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
    /* rows wider than a vector of codes (16 at a time, then the rest one by one), every
     * code of the table among them; the first rows of 64 values or more choose the decoder */
    enum { WIDE = 77 };
    float wide[ROWS * WIDE], wrow[WIDE];
    for (int k = 0; k < ROWS * WIDE; k++)
        wide[k] = v[(k * 7) % (ROWS * DIM)];
    dense_store_reset(&s, WIDE);
    ck_assert_int_eq(dense_store_append(&s, wide, ROWS, &e), 0);
    ck_assert_uint_eq(dense_store_bytes(&s), ROWS * WIDE);
    dense_store_seal(&s);
    for (int r = 0; r < ROWS; r++) {
        dense_store_row(&s, (size_t)r, wrow);
        ck_assert_msg(same_bits(wrow, wide + r * WIDE, WIDE), "row %d of %d values", r, WIDE);
    }
    /* those rows chose a decoder; both give them (the gather where there is AVX-512F:
     * asked for without it, the lookups stay) */
    int chosen = dense_store_decoder(-1);
    ck_assert(chosen == 0 || chosen == 1);
    for (int g = 0; g < 2; g++) {
        ck_assert_int_le(dense_store_decoder(g), g);
        for (int r = 0; r < ROWS; r++) {
            memset(wrow, 0, sizeof wrow);
            dense_store_row(&s, (size_t)r, wrow);
            ck_assert_msg(same_bits(wrow, wide + r * WIDE, WIDE), "decoder %d, row %d", g, r);
        }
    }
    dense_store_decoder(chosen);
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
    FILE *f = create("big.ctf");
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
    FILE *f = create("long.ctf");
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

/* Row t of sequence i of the kept-chunks file: w's value at index j (0: none). */
static float kept_w(int i, int t, int j)
{
    if (i % 11 == 0)
        return 0.0f; /* "|w" with no values */
    int a = (i * 7 + t) % 40, b = (a + 1 + i % 5) % 40;
    return j == a ? (float)(i + t + 1) * 0.5f : j == b ? -(float)(t + 1) : 0.0f;
}

/* The chunks the index pass keeps (ctf_index.c) and the ones parsed later (ctf_batch.c)
 * hold the same rows: sequences of 1-3 rows with dense, sparse and one-row inputs, in
 * chunks of a few hundred bytes; all chunks kept (keepDataInMemory), two (file order: the
 * cache's two slots) or four (a window of three), over two epochs. */
START_TEST(kept_chunks_as_parsed)
{
    dir = enter_tmpdir();
    enum { N = 300, DIM = 40 };
    FILE *f = create("kc.ctf");
    for (int i = 0; i < N; i++)
        for (int t = 0; t < 1 + i % 3; t++) {
            fprintf(f, "%d |x %d %d |w", i, i, t);
            for (int j = 0; j < DIM; j++)
                if (kept_w(i, t, j) != 0.0f)
                    fprintf(f, " %d:%g", j, (double)kept_w(i, t, j));
            if (t == 0)
                fprintf(f, " |y %d", i);
            fputc('\n', f);
        }
    fclose(f);
    struct reader_config rc = conf("kc.ctf");
    rc.ninputs = 3;
    snprintf(rc.inputs[2].name, 64, "w");
    snprintf(rc.inputs[2].alias, 64, "w");
    rc.inputs[2].dim = DIM;
    rc.inputs[2].sparse = 1;
    rc.chunk_bytes = 300;
    for (int v = 0; v < 3; v++) {
        rc.keep_in_memory = v == 0;
        rc.randomize = v == 2;
        rc.window = 3;
        struct reader *r = open_ok(&rc);
        ck_assert_uint_gt(reader_chunks(r), 20);
        struct minibatch mb = {0};
        struct pt_err e;
        pt_err_clear(&e);
        for (size_t epoch = 0; epoch < 2; epoch++) {
            ck_assert_int_eq(reader_start_epoch(r, epoch, 0, 0, 1, &e), 0);
            char seen[N] = {0};
            size_t nseen = 0;
            for (;;) {
                ck_assert_msg(reader_next(r, 16, &mb, &e) == 0, "%s", e.msg);
                if (!mb.global_samples)
                    break;
                for (size_t s = 0; s < mb.nseq; s++) {
                    int i = (int)mb.in[0].data[2 * s];
                    ck_assert(i >= 0 && i < N && !seen[i]);
                    seen[i] = 1;
                    nseen++;
                    ck_assert_uint_eq(mb.in[0].len[s], 1 + i % 3);
                    ck_assert_uint_eq(mb.in[2].len[s], 1 + i % 3);
                    ck_assert(mb.in[1].data[s] == (float)i);
                    for (int t = 0; t < 1 + i % 3; t++) {
                        size_t col = (size_t)t * mb.nseq + s;
                        ck_assert(mb.in[0].data[2 * col] == (float)i);
                        ck_assert(mb.in[0].data[2 * col + 1] == (float)t);
                        for (int j = 0; j < DIM; j++)
                            ck_assert_msg(mb.in[2].data[col * DIM + (size_t)j] == kept_w(i, t, j),
                                          "variant %d epoch %zu: sequence %d row %d w[%d]", v,
                                          epoch, i, t, j);
                    }
                }
            }
            ck_assert_uint_eq(nseen, N);
        }
        mb_free(&mb);
        reader_close(r);
    }
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
    reader_config_tests(t);
    reader_lm_tests(t);
    tcase_add_test(t, dense_store_packs_losslessly);
    tcase_add_test(t, dense_values_exact_packed_or_not);
    tcase_add_test(t, line_longer_than_a_read_piece);
    tcase_add_test(t, kept_chunks_as_parsed);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
