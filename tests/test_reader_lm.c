/* CNTK's LMSequenceReader (src/reader/lm_config.c, lm_reader.c): the config, the word-class
 * file and the sentences, the minibatches of sentences of one length, the epoch's end, the
 * shares of ranks, and errors naming file:line; part of tests/test_reader (test_reader.h).
 * The minibatch counts and the shuffle were also checked against CNTK's own figures on its
 * PennTreebank data (bench/RESULTS.md is not the place; README "Language models"). */
#include "test_reader.h"

/* 7 words in 3 classes: 0 = {</s>, a}, 1 = {b, c}, 2 = {<unk>, d, e} */
static const char *const vocab_txt = "0\t10\t</s>\t0\n"
                                     "1\t5\ta\t0\n"
                                     "2\t4\tb\t1\n"
                                     "3\t3\tc\t1\n"
                                     "4\t2\t<unk>\t2\n"
                                     "5\t1\td\t2\n"
                                     "6\t1\te\t2\n";
/* six sentences (the short and empty lines are not), zz reads as <unk> */
static const char *const text_txt = "</s> a b </s>\n"
                                    "</s> c </s>\n"
                                    "x\n"
                                    "</s> a zz </s>\n"
                                    "</s> d e a </s>\n"
                                    "</s> b c </s>\n"
                                    "\n"
                                    "</s> e </s>\n";
static const int sentences[6][5] = {
    {0, 1, 2, 0, -1}, {0, 3, 0, -1, -1}, {0, 1, 4, 0, -1},
    {0, 5, 6, 1, 0},  {0, 2, 3, 0, -1},  {0, 6, 0, -1, -1},
};
static const int class_of[7] = {0, 0, 1, 1, 2, 2, 2}, class_first[3] = {0, 2, 4},
                 class_end[3] = {2, 4, 7};

/* A reader config from block `reader` of text (files relative to dir). */
static int lm_conf(const char *text, struct reader_config *rc, struct pt_err *e)
{
    struct cfg *c = load("lm.cfg", text, e);
    ck_assert_msg(e->code == 0, "%s", e->msg);
    int r = reader_config_read(node_at(c, "reader"), rc, e);
    cfg_free(c);
    return r;
}

static struct reader_config lm_rc(const char *more)
{
    char text[2048];
    snprintf(text, sizeof text,
             "reader=[readerType=LMSequenceReader; randomize=none; wordclass=%s/v.txt\n"
             " file=%s/t.txt; %s\n"
             " features=[dim=0; sectionType=data]\n"
             " labelIn=[dim=1; labelType=Category; beginSequence=\"</s>\"; endSequence=\"</s>\"\n"
             "   labelDim=7; labelMappingFile=%s/none.txt; elementSize=4; sectionType=labels\n"
             "   mapping=[wrecords=11; elementSize=10; sectionType=labelMapping]\n"
             "   category=[dim=11; sectionType=categoryLabels]]\n"
             " labels=[dim=1; labelType=NextWord; beginSequence=O; endSequence=O; labelDim=7]]\n",
             dir, dir, more, dir);
    struct reader_config rc;
    struct pt_err e;
    ck_assert_msg(lm_conf(text, &rc, &e) == 0, "%s", e.msg);
    return rc;
}

/* Sequence s of mb as the sentence it holds (its words and the last target), checked
 * one-hot and against its labels' 4 rows; its index in sentences[], or -1. */
static int decode(const struct minibatch *mb, size_t s)
{
    const struct mb_input *x = &mb->in[0], *y = &mb->in[1];
    int w[8], n = 0;
    ck_assert_uint_eq(x->len[s], y->len[s]);
    for (size_t t = 0; t < x->len[s]; t++) {
        size_t col = t * mb->nseq + s;
        int hot = -1, count = 0;
        for (int k = 0; k < 7; k++)
            if (x->data[col * 7 + k] != 0.0f) {
                ck_assert(x->data[col * 7 + k] == 1.0f);
                hot = k;
                count++;
            }
        ck_assert_int_eq(count, 1);
        const float *l = y->data + col * 4;
        int next = (int)l[0];
        ck_assert_int_eq((int)l[1], class_of[next]);
        ck_assert_int_eq((int)l[2], class_first[class_of[next]]);
        ck_assert_int_eq((int)l[3], class_end[class_of[next]]);
        if (t > 0)
            ck_assert_int_eq(hot, w[n - 1]); /* the word after the last step's target */
        else
            w[n++] = hot;
        w[n++] = next;
    }
    for (int i = 0; i < 6; i++) {
        int k = 0;
        while (k < n && k < 5 && sentences[i][k] == w[k])
            k++;
        if (k == n && (n == 5 || sentences[i][n] == -1))
            return i;
    }
    return -1;
}

static void write_lm_files(const char *vocab)
{
    write_file(dir, "v.txt", vocab);
    write_file(dir, "t.txt", text_txt);
}

START_TEST(lm_config_as_cntk)
{
    dir = enter_tmpdir();
    struct reader_config rc = lm_rc("nbruttsineachrecurrentiter=0; cacheBlockSize=2000000");
    ck_assert_int_eq(rc.lm.on, 1);
    ck_assert_int_eq(rc.lm.nbrutts, 0);
    ck_assert_int_eq((int)rc.lm.block_tokens, 2000000);
    ck_assert_str_eq(rc.lm.unk, "<unk>");
    ck_assert_int_eq(rc.ninputs, 2);
    ck_assert_str_eq(rc.inputs[0].name, "features");
    ck_assert_int_eq(rc.inputs[0].dim, 7);
    ck_assert_str_eq(rc.inputs[1].name, "labels");
    ck_assert_int_eq(rc.inputs[1].dim, 4);
    rc = lm_rc("");
    ck_assert_int_eq(rc.lm.nbrutts, 1); /* CNTK's default: a sentence a minibatch */
    ck_assert_int_eq((int)rc.lm.block_tokens, 50000);
    struct pt_err e;
    const char *swapped = "reader=[readerType=LMSequenceReader; file=t; wordclass=v\n"
                          " labelIn=[labelType=NextWord; labelDim=7]\n"
                          " labels=[labelType=Category; labelDim=7]]\n";
    ck_assert_int_eq(lm_conf(swapped, &rc, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "lm.cfg:2:2: error: labelIn: labelType: expected Category on labelIn "
                            "(the input words: the first label section by name, as CNTK orders "
                            "them) and NextWord on labels");
    const char *one = "reader=[readerType=LMSequenceReader; file=t; wordclass=v\n"
                      " labelIn=[labelType=Category; labelDim=7]]\n";
    ck_assert_int_eq(lm_conf(one, &rc, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "lm.cfg:1:1: error: LMSequenceReader: expected two label "
                                "sections") != NULL,
                  "%s", e.msg);
    const char *dim = "reader=[readerType=LMSequenceReader; file=t; wordclass=v\n"
                      " features=[dim=3]; labelIn=[labelType=Category; labelDim=7]\n"
                      " labels=[labelType=NextWord]]\n";
    ck_assert_int_eq(lm_conf(dim, &rc, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "features: dim = 3") != NULL, "%s", e.msg);
    const char *nowc = "reader=[readerType=LMSequenceReader; file=t\n"
                       " labelIn=[labelType=Category; labelDim=7]; labels=[labelType=NextWord]]\n";
    ck_assert_int_eq(lm_conf(nowc, &rc, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "wordclass is not set") != NULL, "%s", e.msg);
}
END_TEST

/* Every sentence once an epoch, each minibatch of one length, as many as fit under
 * minibatchSize (CNTK's: words + L < minibatchSize), the data one-hot and 4 label rows. */
START_TEST(lm_minibatches_of_one_length)
{
    dir = enter_tmpdir();
    write_lm_files(vocab_txt);
    struct reader_config rc = lm_rc("nbruttsineachrecurrentiter=0");
    struct reader *r = open_ok(&rc);
    ck_assert_uint_eq(reader_sequences(r), 6);
    ck_assert_uint_eq(reader_sweep_samples(r), 17);
    struct minibatch mb = {0};
    struct pt_err e;
    pt_err_clear(&e);
    /* minibatchSize 9: sentences of 4 words two at a time (4 + 4 < 9, 8 + 4 >= 9); 8: one
     * (4 + 4 is not under 8) */
    size_t sizes[4][2] = {{100, 3}, {9, 4}, {8, 5}, {4, 6}}; /* minibatchSize, minibatches */
    for (int c = 0; c < 4; c++)
        for (size_t epoch = 0; epoch < 2; epoch++) {
            ck_assert_int_eq(reader_start_epoch(r, epoch, 0, 0, 1, &e), 0);
            int seen[6] = {0};
            size_t count = 0, total = 0;
            for (;;) {
                ck_assert_msg(reader_next(r, sizes[c][0], &mb, &e) == 0, "%s", e.msg);
                if (!mb.global_samples)
                    break;
                count++;
                total += mb.global_samples;
                ck_assert_uint_eq(mb.samples, mb.global_samples);
                size_t L = mb.in[0].steps + 1;
                ck_assert(mb.nseq == 1 || mb.nseq * L < sizes[c][0]);
                for (size_t s = 0; s < mb.nseq; s++) {
                    int i = decode(&mb, s);
                    ck_assert_int_ge(i, 0);
                    ck_assert_int_eq(seen[i]++, 0);
                    ck_assert_uint_eq(mb.in[0].len[s], L - 1);
                }
            }
            ck_assert_uint_eq(count, sizes[c][1]);
            ck_assert_uint_eq(total, 17);
        }
    /* the shuffle: seeded by the epoch, the same in every reader */
    uint32_t first[2][6];
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(reader_start_epoch(r, (size_t)k, 0, 0, 1, &e), 0);
        for (int i = 0; i < 6; i++) {
            ck_assert_int_eq(reader_next(r, 1, &mb, &e), 0);
            first[k][i] = (uint32_t)decode(&mb, 0);
        }
    }
    ck_assert(memcmp(first[0], first[1], sizeof first[0]) != 0);
    reader_close(r);
    /* cacheBlockSize = 1: a line a block, so the file's order */
    rc = lm_rc("nbruttsineachrecurrentiter=1; cacheBlockSize=1");
    r = open_ok(&rc);
    ck_assert_int_eq(reader_start_epoch(r, 3, 0, 0, 1, &e), 0);
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(reader_next(r, 100, &mb, &e), 0);
        ck_assert_uint_eq(mb.nseq, 1);
        ck_assert_int_eq(decode(&mb, 0), i);
    }
    ck_assert_int_eq(reader_next(r, 100, &mb, &e), 0);
    ck_assert_uint_eq(mb.global_samples, 0);
    mb_free(&mb);
    reader_close(r);
}
END_TEST

/* The epoch ends at the first minibatch that would start past epochSize samples; ranks
 * take the k-th sentence of each minibatch where k mod ranks is theirs. */
START_TEST(lm_epoch_size_and_ranks)
{
    dir = enter_tmpdir();
    write_lm_files(vocab_txt);
    struct reader_config rc = lm_rc("nbruttsineachrecurrentiter=0");
    struct reader *r = open_ok(&rc), *r1 = open_ok(&rc);
    struct minibatch mb = {0}, mb1 = {0};
    struct pt_err e;
    pt_err_clear(&e);
    for (size_t E = 1; E <= 17; E++) {
        ck_assert_int_eq(reader_start_epoch(r, 1, E, 0, 1, &e), 0);
        size_t before = 0, total = 0;
        for (;;) {
            ck_assert_int_eq(reader_next(r, 6, &mb, &e), 0);
            if (!mb.global_samples)
                break;
            before = total;
            total += mb.global_samples;
        }
        ck_assert_msg(before <= E && (total > E || total == 17), "E %zu: %zu then %zu", E, before,
                      total);
    }
    /* two ranks: the same minibatches, disjoint shares */
    ck_assert_int_eq(reader_start_epoch(r, 0, 0, 0, 2, &e), 0);
    ck_assert_int_eq(reader_start_epoch(r1, 0, 0, 1, 2, &e), 0);
    int seen[6] = {0};
    for (;;) {
        ck_assert_int_eq(reader_next(r, 100, &mb, &e), 0);
        ck_assert_int_eq(reader_next(r1, 100, &mb1, &e), 0);
        ck_assert_uint_eq(mb.global_samples, mb1.global_samples);
        if (!mb.global_samples)
            break;
        ck_assert_uint_eq(mb.samples + mb1.samples, mb.global_samples);
        for (size_t s = 0; s < mb.nseq; s++)
            seen[decode(&mb, s)]++;
        for (size_t s = 0; s < mb1.nseq; s++)
            seen[decode(&mb1, s)]++;
    }
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(seen[i], 1);
    mb_free(&mb);
    mb_free(&mb1);
    reader_close(r);
    reader_close(r1);
}
END_TEST

/* nbruttsineachrecurrentiter > 0: sentences longer than minibatchSize in pieces of that
 * many steps, mb->cont marking the pieces that go on (the network's state carried), whole
 * ones without mb->cont; every word in its place. */
START_TEST(lm_sentences_in_pieces)
{
    dir = enter_tmpdir();
    write_lm_files(vocab_txt);
    struct reader_config rc = lm_rc("nbruttsineachrecurrentiter=1; cacheBlockSize=1");
    struct reader *r = open_ok(&rc);
    struct minibatch mb = {0};
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(reader_start_epoch(r, 0, 0, 0, 1, &e), 0);
    size_t total = 0, count = 0;
    for (int i = 0; i < 6; i++) { /* the file's order: a line a block */
        int n = 0;
        while (n < 5 && sentences[i][n] >= 0)
            n++;
        for (int at = 0; at < n - 1; at += 2) {
            ck_assert_int_eq(reader_next(r, 2, &mb, &e), 0);
            size_t steps = n - 1 - at < 2 ? (size_t)(n - 1 - at) : 2;
            ck_assert_uint_eq(mb.global_samples, steps);
            ck_assert_uint_eq(mb.nseq, 1);
            ck_assert_uint_eq(mb.in[0].len[0], steps);
            if (n - 1 > 2)
                ck_assert(mb.cont && mb.cont[0] == (at > 0));
            else
                ck_assert_ptr_null(mb.cont);
            for (size_t t = 0; t < steps; t++) {
                ck_assert(mb.in[0].data[t * 7 + (size_t)sentences[i][at + (int)t]] == 1.0f);
                ck_assert_int_eq((int)mb.in[1].data[t * 4], sentences[i][at + (int)t + 1]);
            }
            total += steps;
            count++;
        }
    }
    ck_assert_int_eq(reader_next(r, 2, &mb, &e), 0);
    ck_assert_uint_eq(mb.global_samples, 0);
    ck_assert_uint_eq(total, 17);
    ck_assert_uint_eq(count, 10);
    mb_free(&mb);
    reader_close(r);
}
END_TEST

static void expect_lm_error(const char *more, const char *want)
{
    struct reader_config rc = lm_rc(more);
    struct reader *r = NULL;
    struct pt_err e;
    pt_err_clear(&e);
    int code = reader_open(&rc, NULL, &r, &e);
    if (code == 0) {
        ck_assert_int_eq(reader_start_epoch(r, 0, 0, 0, 1, &e), 0);
        struct minibatch mb = {0};
        do
            code = reader_next(r, 2, &mb, &e);
        while (code == 0 && mb.global_samples);
        mb_free(&mb);
        reader_close(r);
    }
    ck_assert_int_eq(code, PT_EUSER);
    char path[600]; /* "%s" in want: the test's directory */
    const char *at = strstr(want, "%s");
    if (at)
        snprintf(path, sizeof path, "%.*s%s%s", (int)(at - want), want, dir, at + 2);
    else
        snprintf(path, sizeof path, "%s", want);
    ck_assert_msg(strstr(e.msg, path) != NULL, "got: %s\nwant: %s", e.msg, path);
}

START_TEST(lm_errors_name_file_and_line)
{
    dir = enter_tmpdir();
    write_lm_files(vocab_txt);
    /* out of vocabulary, and no <unk> */
    write_file(dir, "v.txt", "0 10 </s> 0\n1 5 a 0\n2 4 b 1\n3 3 c 1\n4 2 u 2\n5 1 d 2\n6 1 e 2\n");
    expect_lm_error("", "%s/t.txt:4: error: the word 'zz' is not in the word-class file");
    /* words against labelDim, fields, classes out of order, an index twice */
    write_file(dir, "v.txt", "0 10 </s> 0\n1 5 a 0\n");
    expect_lm_error("", "%s/v.txt: error: 2 words, where the reader's labelDim is 7");
    write_file(dir, "v.txt", "0 10 </s> 0\n1 5 a\n");
    expect_lm_error("", "%s/v.txt:2: error: expected INDEX COUNT WORD CLASS");
    write_file(dir, "v.txt",
               "0 10 </s> 1\n1 5 a 0\n2 4 b 1\n3 3 c 1\n4 2 <unk> 2\n5 1 d 2\n6 1 e 2\n");
    expect_lm_error("", "%s/v.txt: error: word 1 has class 0 after word 0's class 1");
    write_file(dir, "v.txt", "0 10 </s> 0\n0 5 a 0\n");
    expect_lm_error("", "%s/v.txt:2: error: word index 0 is given twice");
    write_file(dir, "v.txt", vocab_txt);
    write_file(dir, "t.txt", "a b\n\n");
    expect_lm_error("", "%s/t.txt: error: no sentence");
}
END_TEST

void reader_lm_tests(TCase *t)
{
    tcase_add_test(t, lm_config_as_cntk);
    tcase_add_test(t, lm_minibatches_of_one_length);
    tcase_add_test(t, lm_epoch_size_and_ranks);
    tcase_add_test(t, lm_sentences_in_pieces);
    tcase_add_test(t, lm_errors_name_file_and_line);
}
