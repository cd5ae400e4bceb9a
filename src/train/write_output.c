/* action=write: a trained network's outputs for every sample of a reader, written as text
 * to outputPath.<nodeName> (CNTK's DoWriteOutput and SimpleOutputWriter::WriteOutput).
 *
 * Nodes of a SimpleNetworkBuilder network, by CNTK's names: HLast (the output layer before
 * any softmax; the default), PosteriorProb (its softmax), ScaledLogLikelihood (HLast minus
 * the log of the label prior; the default when the model has a prior, needPrior). The
 * reader is read in file order (CNTK forces randomize=None), in minibatches of
 * minibatchSize. Layout (format = [ ... ], CNTK's defaults): per sequence
 * sequencePrologue, its samples separated by sampleSeparator ("\n"), each sample's values
 * separated by elementSeparator (" ") as "%<precisionFormat>f", then sequenceEpilogue
 * ("\n"); sequenceSeparator between sequences; prologue and epilogue around the file.
 * transpose=false prints one column per sample. In the strings, \n \r \t \s are newline,
 * return, tab and space, %s the node name and %n the minibatch number; in sequencePrologue
 * and sampleSeparator %d is the sequence's number (from 0, in file order) and %x its shape
 * ("rows steps"). type=category
 * prints the index of each sample's largest value, or its line of labelMappingFile.
 * A BrainScript network writes its output node by default, and any node computed from the
 * inputs that outputNodeNames names (CNTK's RegrSimple_CIFAR10 writes ol, regrLabels,
 * rmse). outputNodeNames may also name the reader's inputs (CNTK writes an input node's
 * values: "labels", one-hot, written as category gives the true class beside the
 * predicted one).
 *
 * Only rank 0 writes (CNTK's writer has no MPI: every rank would write the same files);
 * the other ranks wait for its outcome. Each file is written to a temporary and renamed
 * into place (core/fs.h), never through a symlink. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/fs.h"
#include "math/backend.h"
#include "train/train_internal.h"
#include "train/write_internal.h"

static const char *const node_names[] = {"HLast", "PosteriorProb", "ScaledLogLikelihood"};

/* What a format string may name: %s the node, %n the minibatch number; in
 * sequencePrologue and sampleSeparator also %d the sequence's number and %x its shape
 * ("rows steps"), when seq >= 0. */
struct frag {
    const char *node;
    size_t mb;
    long long seq;
    size_t rows, steps;
};

/* CNTK's Processed() and its %d / %x: escapes \n \r \t \s, then the names above. */
static void put_fragment(FILE *f, const char *s, const struct frag *c)
{
    for (; s && *s; s++) {
        if (s[0] == '\\' && s[1] && strchr("nrts", s[1])) {
            s++;
            fputc(*s == 'n' ? '\n' : *s == 'r' ? '\r' : *s == 't' ? '\t' : ' ', f);
        } else if (s[0] == '%' && s[1] == 's') {
            fputs(c->node, f);
            s++;
        } else if (s[0] == '%' && s[1] == 'n') {
            fprintf(f, "%zu", c->mb);
            s++;
        } else if (s[0] == '%' && s[1] == 'd' && c->seq >= 0) {
            fprintf(f, "%lld", c->seq);
            s++;
        } else if (s[0] == '%' && s[1] == 'x' && c->seq >= 0) {
            fprintf(f, "%zu %zu", c->rows, c->steps);
            s++;
        } else {
            fputc(*s, f);
        }
    }
}

struct out_file {
    enum write_node node;
    const char *name; /* the node's name: node_names[node], or a BrainScript output node's */
    struct pt_file_out out;
    FILE *f;
};

void write_node_column(enum write_node node, const float *z, size_t rows, const float *prior,
                       double *v)
{
    double mx = -INFINITY, sum = 0;
    for (size_t i = 0; i < rows; i++)
        mx = z[i] > mx ? z[i] : mx;
    for (size_t i = 0; node == NODE_POSTERIOR && i < rows; i++)
        sum += exp((double)z[i] - mx);
    for (size_t i = 0; i < rows; i++) {
        if (node == NODE_POSTERIOR)
            v[i] = (double)(float)(exp((double)z[i] - mx) / sum);
        else if (node == NODE_SCALED_LL)
            v[i] = (double)(z[i] - logf(prior[i]));
        else
            v[i] = z[i];
    }
}

static void put_value(FILE *f, const struct write_format *fm, double v)
{
    int width, prec;
    write_precision_parse(fm->precision, &width, &prec);
    if (v == 0)
        v = 0; /* no negative zero (CNTK clears its sign) */
    fprintf(f, "%*.*f", width < 0 ? 0 : width, prec < 0 ? 6 : prec, v);
}

/* One sequence: cols columns of HLast at z (stride rows), as CNTK's
 * WriteMinibatchWithFormatting lays it out. */
static void put_sequence(FILE *f, const struct write_format *fm, const struct frag *seq,
                         enum write_node node, const float *const *cols, size_t ncols, size_t rows,
                         const float *prior, double *buf)
{
    struct frag plain = *seq;
    plain.seq = -1;
    put_fragment(f, fm->seq_prologue, seq);
    size_t vals = fm->category ? 1 : rows;
    for (size_t j = 0; j < ncols; j++) {
        write_node_column(node, cols[j], rows, prior, buf + j * rows);
        if (fm->category) {
            size_t best = 0;
            for (size_t i = 0; i < rows; i++)
                if (buf[j * rows + i] >= buf[j * rows + best])
                    best = i;
            buf[j * rows] = (double)best;
        }
    }
    size_t outer = fm->transpose ? ncols : vals, inner = fm->transpose ? vals : ncols;
    for (size_t a = 0; a < outer; a++) {
        if (a > 0)
            put_fragment(f, fm->sample_sep ? fm->sample_sep : "\\n", seq);
        for (size_t b = 0; b < inner; b++) {
            if (b > 0)
                put_fragment(f, fm->elem_sep ? fm->elem_sep : " ", &plain);
            double v = fm->transpose ? buf[a * rows + b] : buf[b * rows + a];
            if (fm->category && fm->labels)
                fputs(fm->labels[(size_t)v], f); /* the rows were checked against nlabels */
            else if (fm->category)
                fprintf(f, "%u", (unsigned)v);
            else
                put_value(f, fm, v);
        }
    }
    put_fragment(f, fm->seq_epilogue ? fm->seq_epilogue : "\\n", &plain);
}

/* One minibatch into every file. The output's columns: one per sequence (sequence labels),
 * else t * nseq + s for the rows of each sequence; an input's, t * nseq + s. */
static int put_minibatch(struct nn *net, struct minibatch *mb, struct out_file *outs, size_t nout,
                         const struct write_settings *ws, struct write_htk *hw, size_t mbi,
                         const float *prior, size_t *seqs_written, struct pt_log *log,
                         struct pt_err *e)
{
    const struct write_format *fm = &ws->fmt;
    size_t rows = 0, cols = 0, cap = 0;
    int rc = nn_get_output(net, NULL, 0, &rows, &cols, e);
    if (rc == PT_EUSER && rows && cols) { /* asked for the size */
        pt_err_clear(e);
        rc = 0;
    }
    cap = rows * cols;
    size_t ncap = cols; /* columns of one sequence, at most */
    for (size_t o = 0; o < nout; o++) {
        struct mb_input *src = outs[o].node == NODE_INPUT ? mb_find(mb, outs[o].name) : NULL;
        if (outs[o].node == NODE_INPUT && !src) {
            const char *graph_out = nn_output_name(net);
            char writes[192];
            snprintf(writes, sizeof writes, "%s%.64s%s",
                     graph_out ? "the BrainScript network's nodes by name (its output node, '"
                               : "HLast, PosteriorProb, ScaledLogLikelihood",
                     graph_out ? graph_out : "", graph_out ? "', by default)" : "");
            return cfg_error(e, cfg_value_origin(ws->nodes.node),
                             "outputNodeNames: '%s' is neither a node of the network in '%s' nor "
                             "an input of the reader (partrain writes %s and the inputs)",
                             outs[o].name, ws->model, writes);
        }
        size_t r = src ? (size_t)src->dim : rows, nc = 0;
        if (outs[o].node == NODE_GRAPH &&
            (rc = nn_node_values(net, outs[o].name, NULL, 0, &r, &nc, e)))
            return rc;
        if (outs[o].node == NODE_GRAPH && r * nc > cap)
            cap = r * nc;
        if (!hw && fm->category && fm->labels && r > fm->nlabels)
            return pt_err_set(e, PT_EUSER,
                              "error: labelMappingFile '%s' has %zu labels, fewer than the %zu "
                              "rows of '%s'",
                              fm->label_file, fm->nlabels, r, outs[o].name);
        if (src && src->dim * src->steps > cap)
            cap = (size_t)src->dim * src->steps;
        if (src && src->steps > ncap)
            ncap = src->steps;
    }
    size_t zn = rows * cols;
    float *z = malloc((zn ? zn : 1) * sizeof *z);
    const float **colp = malloc((ncap ? ncap : 1) * sizeof *colp);
    double *buf = malloc((cap ? cap : 1) * sizeof *buf);
    if (!z || !colp || !buf)
        rc = pt_err_set(e, PT_ESYS, "error: out of memory for the outputs of a minibatch");
    if (rc == 0)
        rc = nn_get_output(net, z, zn, &rows, &cols, e);
    struct mb_input *in = mb_find(mb, "features");
    if (!in)
        in = &mb->in[0];
    int per_seq = cols == mb->nseq;
    float *zn_buf = NULL; /* a node's values (NODE_GRAPH) */
    size_t seqno = *seqs_written;
    for (size_t o = 0; rc == 0 && o < nout; o++) {
        const char *name = outs[o].name;
        struct mb_input *src = outs[o].node == NODE_INPUT ? mb_find(mb, name) : NULL;
        const float *base = src ? src->data : z;
        size_t r = src ? (size_t)src->dim : rows;
        int one = src ? 0 : per_seq;
        if (outs[o].node == NODE_GRAPH) {
            size_t nc = 0;
            rc = nn_node_values(net, name, NULL, 0, &r, &nc, e);
            size_t want = r * nc > 0 ? r * nc : 1;
            float *v = rc ? NULL : realloc(zn_buf, want * sizeof *v);
            if (rc == 0 && !v)
                rc = pt_err_set(e, PT_ESYS, "error: out of memory for the values of '%s'", name);
            if (rc)
                break;
            zn_buf = v;
            if ((rc = nn_node_values(net, name, zn_buf, r * nc, &r, &nc, e)))
                break;
            base = zn_buf;
            one = nc == mb->nseq;
        }
        seqno = *seqs_written; /* every file numbers the same sequences */
        for (size_t s = 0; rc == 0 && s < mb->nseq; s++) {
            size_t n = one ? 1 : src ? src->len[s] : in->len[s];
            if (n == 0) /* a truncated reader's idle stream: nothing to write */
                continue;
            for (size_t t = 0; t < n; t++)
                colp[t] = base + (one ? s : t * mb->nseq + s) * r;
            if (hw) {
                rc = write_htk_sequence(hw, o, seqno++, outs[o].node, colp, n, r, prior, log, e);
                continue;
            }
            struct frag c = {name, mbi, -1, r, n};
            if (seqno > 0)
                put_fragment(outs[o].f, fm->seq_sep, &c);
            c.seq = (long long)seqno++;
            put_sequence(outs[o].f, fm, &c, outs[o].node, colp, n, r, prior, buf);
        }
        if (rc == 0 && !hw && ferror(outs[o].f))
            rc = pt_err_set(e, PT_ESYS, "error: writing '%s' failed", outs[o].out.path);
    }
    *seqs_written = seqno;
    free(zn_buf);
    free(z);
    free(colp);
    free(buf);
    return rc;
}

/* The nodes to write, by outputNodeNames or the default; and their files unless text is 0
 * (a writer block writes them). */
static int open_outputs(const struct write_settings *ws, struct nn *net, int text,
                        struct out_file *outs, size_t *nout, struct pt_err *e)
{
    int dim = 0;
    int has_prior = nn_get_prior(net, &dim) != NULL;
    const char *graph_out = nn_output_name(net);
    *nout = 0;
    if (ws->nodes.node && ws->nodes.slist.n > WRITE_MAX_NODES)
        return cfg_error(e, cfg_value_origin(ws->nodes.node),
                         "outputNodeNames: %zu nodes, more than the %d partrain writes at once",
                         ws->nodes.slist.n, WRITE_MAX_NODES);
    if (ws->nodes.node) {
        /* the network's nodes by name (a BrainScript network's output node; HLast,
         * PosteriorProb, ScaledLogLikelihood of a SimpleNetworkBuilder one), any other name
         * an input of the reader (put_minibatch checks it) */
        for (size_t i = 0; i < ws->nodes.slist.n; i++) {
            const char *want = ws->nodes.slist.items[i];
            int k = 0;
            while (!graph_out && k < 3 && strcasecmp(want, node_names[k]))
                k++;
            int node = graph_out && strcmp(want, graph_out) ? nn_value_node(net, want, e) : 0;
            if (node < 0) { /* the node's reason, placed at the key */
                char why[PT_ERR_MSG];
                snprintf(why, sizeof why, "%s",
                         strncmp(e->msg, "error: ", 7) ? e->msg : e->msg + 7);
                pt_err_clear(e);
                return cfg_error(e, cfg_value_origin(ws->nodes.node), "outputNodeNames: %s", why);
            }
            if (graph_out && !strcmp(want, graph_out))
                outs[*nout] = (struct out_file){.node = NODE_HLAST, .name = graph_out};
            else if (node) /* any other node of a BrainScript network, as CNTK writes */
                outs[*nout] = (struct out_file){.node = NODE_GRAPH, .name = want};
            else if (!graph_out && k < 3)
                outs[*nout] = (struct out_file){.node = (enum write_node)k, .name = node_names[k]};
            else
                outs[*nout] = (struct out_file){.node = NODE_INPUT, .name = want};
            outs[*nout].out.fd = -1;
            for (size_t j = 0; j < *nout; j++)
                if (!strcmp(outs[j].name, outs[*nout].name))
                    return cfg_error(e, cfg_value_origin(ws->nodes.node),
                                     "outputNodeNames: '%s' is named twice", want);
            (*nout)++;
        }
    } else if (graph_out) { /* a BrainScript network: its output node (outputNodes' first) */
        outs[0].node = NODE_HLAST;
        outs[0].name = graph_out;
        *nout = 1;
    } else {
        outs[0].node = has_prior ? NODE_SCALED_LL : NODE_HLAST;
        outs[0].name = node_names[outs[0].node];
        *nout = 1;
    }
    for (size_t o = 0; o < *nout; o++)
        if (outs[o].node == NODE_SCALED_LL && !has_prior)
            return cfg_error(e, cfg_value_origin(ws->nodes.node),
                             "outputNodeNames: ScaledLogLikelihood needs a model trained with "
                             "needPrior=true; '%s' has no prior",
                             ws->model);
    for (size_t o = 0; text && o < *nout; o++) {
        char path[4200];
        snprintf(path, sizeof path, "%s.%s", ws->output, outs[o].name);
        int rc = pt_file_begin(&outs[o].out, path, 1, "output file", e);
        if (rc == 0 && !(outs[o].f = fdopen(outs[o].out.fd, "w+")))
            rc = pt_err_set(e, PT_ESYS, "error: cannot write '%s'", path);
        if (rc)
            return rc;
        outs[o].out.fd = -1; /* the stream owns it now */
        struct frag c = {outs[o].name, 0, -1, 0, 0};
        put_fragment(outs[o].f, ws->fmt.prologue, &c);
    }
    return 0;
}

static int close_outputs(struct out_file *outs, size_t nout, const struct write_settings *ws,
                         int rc, struct pt_err *e)
{
    for (size_t o = 0; o < nout; o++) {
        if (!outs[o].f) {
            pt_file_abort(&outs[o].out);
            continue;
        }
        if (rc == 0)
            put_fragment(outs[o].f, ws->fmt.epilogue, &(struct frag){outs[o].name, 0, -1, 0, 0});
        int bad = fflush(outs[o].f) != 0 || ferror(outs[o].f) || fsync(fileno(outs[o].f)) != 0;
        fclose(outs[o].f);
        outs[o].f = NULL;
        if (rc == 0 && bad)
            rc = pt_err_set(e, PT_ESYS, "error: writing '%s' failed", outs[o].out.path);
        if (rc == 0)
            rc = pt_file_commit(&outs[o].out, "output file", e);
        else
            pt_file_abort(&outs[o].out);
    }
    return rc;
}

/* A network input the reader does not provide, which no output reads (CNTK writes
 * ScaledLogLikelihood from a reader of features alone): zeros stand in. */
struct missing {
    const char *name;
    int dim;
};

static int missing_inputs(const struct write_settings *ws, const struct nn *net,
                          const struct reader *r, const struct out_file *outs, size_t nout,
                          struct missing *miss, int *nmiss, struct pt_err *e)
{
    *nmiss = 0;
    for (int k = 0; k < nn_input_count(net) && *nmiss < CTF_MAX_INPUTS; k++) {
        int dim = 0;
        const char *name = nn_input_name(net, k, &dim);
        if (!name || reader_has_input(r, name))
            continue;
        for (size_t o = 0; o < nout; o++)
            if (nn_output_reads(net, outs[o].name, name))
                return pt_err_set(e, PT_EUSER,
                                  "%s: error: outputNodeNames: '%s' is computed from the "
                                  "network's Input '%s', which the reader does not provide",
                                  ws->model, outs[o].name, name);
        miss[(*nmiss)++] = (struct missing){.name = name, .dim = dim};
    }
    return 0;
}

/* The missing inputs as zeros, shaped as the minibatch's first input. */
static int zero_inputs(struct minibatch *mb, const struct missing *miss, int nmiss,
                       struct pt_err *e)
{
    const struct mb_input *like = &mb->in[0];
    for (int k = 0; k < nmiss && mb->ninputs < CTF_MAX_INPUTS; k++) {
        struct mb_input *in = &mb->in[mb->ninputs];
        snprintf(in->name, sizeof in->name, "%s", miss[k].name);
        in->dim = miss[k].dim;
        int rc = mb_input_reset(in, mb->nseq, like->steps, e);
        if (rc)
            return rc;
        memcpy(in->len, like->len, mb->nseq * sizeof *in->len);
        mb->ninputs++;
    }
    return 0;
}

/* Rank 0's part: the whole reader, in file order; as text, or by the writer hw. */
static int write_all(struct pt_ctx *ctx, struct write_settings *ws, struct write_htk *hw,
                     struct nn *net, struct reader *r, struct pt_err *e)
{
    struct out_file outs[WRITE_MAX_NODES];
    memset(outs, 0, sizeof outs);
    for (size_t o = 0; o < WRITE_MAX_NODES; o++)
        outs[o].out.fd = -1; /* nothing open yet (pt_file_abort closes fd >= 0) */
    size_t nout = 0, mbi = 0, total = 0, seqs = 0;
    int dim = 0;
    const float *prior = nn_get_prior(net, &dim);
    int rc = ws->fmt.label_file && ws->fmt.category ? write_read_labels(&ws->fmt, e) : 0;
    if (rc == 0)
        rc = open_outputs(ws, net, !hw, outs, &nout, e);
    struct missing miss[CTF_MAX_INPUTS];
    int nmiss = 0;
    if (rc == 0)
        rc = missing_inputs(ws, net, r, outs, nout, miss, &nmiss, e);
    if (rc == 0 && hw)
        rc = write_htk_check(hw, r, ws->model, ws->epoch_size, e);
    if (rc == 0)
        rc = reader_start_epoch(r, 0, (size_t)ws->epoch_size, 0, 1, e);
    struct minibatch mb = {0};
    struct nn_stats st;
    while (rc == 0 && (rc = reader_next(r, (size_t)ws->mb_size, &mb, e)) == 0 &&
           mb.global_samples) {
        rc = zero_inputs(&mb, miss, nmiss, e);
        if (rc == 0)
            rc = nn_evaluate(net, &mb, &st, e);
        if (rc == 0)
            rc = put_minibatch(net, &mb, outs, nout, ws, hw, mbi, prior, &seqs, ctx->log, e);
        if (rc == 0)
            pt_log_often(ctx->log, "Minibatch[%zu]: ActualMBSize = %zu\n", mbi, mb.samples);
        total += mb.samples;
        mbi++;
    }
    mb_free(&mb);
    write_free_labels(&ws->fmt);
    rc = close_outputs(outs, nout, ws, rc, e);
    if (rc == 0 && !hw)
        pt_log_printf(ctx->log, "Written to %s*\n", ws->output);
    if (rc == 0)
        pt_log_printf(ctx->log, "Total Samples Evaluated = %zu\n", total);
    return rc;
}

/* The writer block, when there is one: CNTK writes with it and ignores outputPath. Its
 * nodes are outputNodeNames, set in it or above it (the command's, when both agree).
 * log NULL: check the blocks only (hw is not made). */
static int open_writer(struct pt_log *log, struct cfg_node *command, struct write_settings *ws,
                       struct write_htk **hw, struct pt_err *e)
{
    struct cfg_node *wb = NULL;
    int rc = cfg_find_block(command, "writer", &wb, e);
    char at[512];
    if (rc || !wb) {
        if (rc == 0 && !ws->output[0])
            rc = cfg_error(e, cfg_origin_of(command),
                           "%s: set outputPath (the outputs as text, outputPath.NODE) or a writer "
                           "block (writerType = HTKMLFWriter: HTK feature files)",
                           cfg_path(command, at, sizeof at));
        return rc;
    }
    struct cfg_val mine = {0};
    rc = cfg_schema_get(wb, &writer_schema, "outputNodeNames", &mine, e);
    int both = mine.node && ws->nodes.node && mine.node != ws->nodes.node;
    int differ = both && mine.slist.n != ws->nodes.slist.n;
    for (size_t i = 0; both && !differ && i < mine.slist.n; i++)
        differ = strcmp(mine.slist.items[i], ws->nodes.slist.items[i]) != 0;
    if (rc == 0 && differ)
        rc = cfg_error(e, cfg_value_origin(mine.node),
                       "writer: outputNodeNames differs from the command's (%s): name the nodes "
                       "once",
                       cfg_origin_str(cfg_value_origin(ws->nodes.node), at, sizeof at));
    if (rc == 0 && mine.node && !ws->nodes.node) { /* the writer's own list */
        cfg_val_free(&ws->nodes);
        ws->nodes = mine;
        memset(&mine, 0, sizeof mine);
    }
    cfg_val_free(&mine);
    if (rc == 0 && ws->output[0] && log)
        pt_log_printf(log, "outputPath is not used: the writer block writes the outputs\n");
    if (rc == 0)
        rc = write_htk_open(wb, (const char *const *)ws->nodes.slist.items,
                            ws->nodes.node ? ws->nodes.slist.n : 0, log, log ? hw : NULL, e);
    return rc;
}

int write_check_config(struct cfg_node *command, struct pt_err *e)
{
    struct write_settings ws;
    memset(&ws, 0, sizeof ws);
    int rc = cfg_schema_read(command, &write_command_schema, &ws, e);
    if (rc == 0)
        rc = open_writer(NULL, command, &ws, NULL, e);
    cfg_schema_free(&write_command_schema, &ws);
    return rc;
}

int write_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct write_settings ws;
    memset(&ws, 0, sizeof ws);
    struct train_model_reader mr = {0};
    struct write_htk *hw = NULL;
    int rank = comm_rank(ctx->comm), rc = cfg_schema_read(command, &write_command_schema, &ws, e);
    if (rc == 0 && rank == 0)
        rc = open_writer(ctx->log, command, &ws, &hw, e);
    /* CNTK: file order; a writer's files are whole utterances */
    if (rc == 0 && rank == 0)
        rc = train_open_model(ctx, command, ws.model,
                              TRAIN_OPEN_IN_ORDER | (hw ? TRAIN_OPEN_UTTERANCES : 0), &ws.nodes, 0,
                              &mr, e);
    if (rc == 0 && rank == 0)
        rc = write_all(ctx, &ws, hw, mr.net, mr.reader, e);
    rc = train_agree(ctx->comm, rc, "to write the outputs", e);
    write_htk_free(hw);
    train_close_model(&mr);
    cfg_schema_free(&write_command_schema, &ws);
    return rc;
}
