/* CNTK's ClassBasedCrossEntropyWithSoftmax (graph.h), the criterion of class-based language
 * models (CNTK's PennTreebank RNN example): the softmax over a vocabulary of V words
 * factored into one over the word classes and one over the words of the target's class.
 * The words are numbered class by class, so a class is a range [a, b) of word ids and of
 * W's columns. Inputs:
 *   0 labels [4 x steps]: per step the target word y, its class c, the class's first word
 *     a and its end b (exclusive), as CNTK's LMSequenceReader writes them;
 *   1 h [hd x steps], the hidden state;
 *   2 W [hd x V]: column j is word j's vector;
 *   3 z [nCls x steps], the class scores before their softmax.
 * The value is one of the pass (mb_scalar), a sum over the counted steps as CNTK's (not a
 * mean):
 *   -sum_t (log softmax (s)[y - a] + log softmax (z_t)[c]),  s_j = h_t' W[:, a + j],
 *   j in [0, b - a).
 * Backward, with g the value's incoming gradient:
 *   d = g (softmax (s) - onehot (y - a));  dh_t += W[:, a:b] d;  dW[:, a:b] += h_t d';
 *   dz_t += g (softmax (z_t) - onehot (c)); the labels get none.
 * W is column-major, so a class's columns are one block: each step is one matrix-vector
 * product for s (and again in the backward pass, which keeps nothing from the forward
 * one), one for dh and one rank-1 update of dW. Log-sum-exps and the value are summed in
 * double.
 *
 * Labels that describe no class of W (not integers, b <= a, b > V, y outside [a, b), c
 * outside [0, nCls)) are never used as indices: such a step counts nothing, and the first
 * one goes into g->fault, which fails the pass (nn_graph_forward), as CNTK's node fails.
 *
 * It runs on the host, over the backend's own memory: the CPU backend's (a GPU refuses it
 * when the network is built: bs_net.c), as graph_rank.c's criteria; OpenBLAS's cblas is the
 * CPU backend's library. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/graph.h"

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

static const char *name_of(const struct g_node *x)
{
    return x->name[0] ? x->name : x->kind->name;
}

/* A per-step operand (not fixed columns, not one per sequence), its rows known. */
static int per_step(struct nn_graph *g, struct g_node *n, int k, const char *what, int rows,
                    struct pt_err *e)
{
    struct g_node *x = IN(g, n, k), *h = IN(g, n, 1);
    if (x->cols == 0 && k != 1)
        g_same_axis(x, h); /* an Input takes the hidden state's axis */
    if (x->rows > 0 && x->cols == 0 && !x->seq1 && (rows == 0 || x->rows == rows))
        return 0;
    char shape[48];
    snprintf(shape, sizeof shape,
             x->cols   ? "%d x %d"
             : x->seq1 ? "%d x sequences"
                       : "%d x steps",
             x->rows, x->cols);
    return pt_err_set(e, PT_EUSER, "%s: error: %s: %s ('%s') must be %s, got [%s]", n->where,
                      n->kind->name, what, name_of(x),
                      rows == 4 ? "4 values per step (the word, its class, the class's first "
                                  "word and its end)"
                                : "a vector per step",
                      shape);
}

static int shape_classce(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *h = IN(g, n, 1), *w = IN(g, n, 2);
    if (w->rows == 0 && g_open(w) && h->rows > 0)
        w->rows = h->rows; /* an Inferred hidden dimension */
    int rc = per_step(g, n, 0, "labelClassDescriptorVectorSequence", 4, e);
    if (rc == 0)
        rc = per_step(g, n, 1, "mainInputInfo", 0, e);
    if (rc == 0)
        rc = per_step(g, n, 3, "classLogProbsBeforeSoftmax", 0, e);
    if (rc == 0 && (w->cols <= 0 || w->rows != h->rows))
        rc = g_shape_error(n, h, w,
                           "mainWeight (the second) must be [hidden x vocabulary], its rows "
                           "those of mainInputInfo (the first), its columns known",
                           e);
    n->rows = 1;
    n->cols = 1;
    n->mb_scalar = 1;
    return rc;
}

/* One step's labels: the target word y, its class c, the class's words [a, b). */
struct frame {
    long y, c, a, b;
};

static int as_index(float x, long *out)
{
    if (!(x >= -16777216.0f && x <= 16777216.0f) || x != floorf(x))
        return -1;
    *out = (long)x;
    return 0;
}

/* 0 when lab's four values are integers that name a class of ncls and a range of W's vocab
 * columns with the word inside; -1 otherwise. */
static int frame_of(const float *lab, long vocab, long ncls, struct frame *f)
{
    if (as_index(lab[0], &f->y) || as_index(lab[1], &f->c) || as_index(lab[2], &f->a) ||
        as_index(lab[3], &f->b))
        return -1;
    return f->a >= 0 && f->a < f->b && f->b <= vocab && f->y >= f->a && f->y < f->b && f->c >= 0 &&
                   f->c < ncls
               ? 0
               : -1;
}

/* The first bad step of the pass into g->fault. */
static void fault(struct nn_graph *g, const struct g_node *n, size_t col, const float *lab,
                  long vocab, long ncls)
{
    if (g->fault[0])
        return;
    size_t nseq = g->nseq ? g->nseq : 1;
    snprintf(g->fault, sizeof g->fault,
             "%s: error: %s: the labels of step %zu of sequence %zu (word %g, class %g, the "
             "class's words [%g, %g)) describe no class: want integers with 0 <= first < end "
             "<= %ld (mainWeight's columns), first <= word < end and 0 <= class < %ld "
             "(classLogProbsBeforeSoftmax's rows)",
             n->where, n->kind->name, col / nseq + 1, col % nseq + 1, (double)lab[0],
             (double)lab[1], (double)lab[2], (double)lab[3], vocab, ncls);
}

/* log sum_j exp (x_j) over x[0 .. k), in double. */
static double log_sum_exp(const float *x, long k)
{
    float top = x[0];
    for (long j = 1; j < k; j++)
        top = x[j] > top ? x[j] : top;
    double sum = 0.0;
    for (long j = 0; j < k; j++)
        sum += exp((double)x[j] - top);
    return top + log(sum);
}

/* The columns of the pass this node runs over, whether column j counts, and W's shape. */
struct pass {
    const float *lab, *h, *w, *z, *mask;
    size_t cols;
    int hd;
    long vocab, ncls;
};

static struct pass pass_of(struct nn_graph *g, struct g_node *n)
{
    struct g_node *h = IN(g, n, 1), *w = IN(g, n, 2), *z = IN(g, n, 3);
    return (struct pass){.lab = g_val(g, IN(g, n, 0)),
                         .h = g_val(g, h),
                         .w = g_val(g, w),
                         .z = g_val(g, z),
                         .mask = g->crit_mask ? g->crit_mask + g->c0 : NULL,
                         .cols = g_cols(g, h),
                         .hd = h->rows,
                         .vocab = w->cols,
                         .ncls = z->rows};
}

/* s = W[:, a:b]' h_t into s[0 .. b - a) */
static void class_scores(const struct pass *p, size_t j, const struct frame *f, float *s)
{
    cblas_sgemv(CblasColMajor, CblasTrans, p->hd, (int)(f->b - f->a), 1.0f,
                p->w + (size_t)f->a * (size_t)p->hd, p->hd, p->h + j * (size_t)p->hd, 1, 0.0f, s,
                1);
}

static void forward_classce(struct nn_graph *g, struct g_node *n)
{
    struct pass p = pass_of(g, n);
    float *s = g->tmp2; /* room for W's cells, so for a class's scores */
    double sum = 0.0;
    for (size_t j = 0; j < p.cols; j++) {
        struct frame f;
        const float *lab = p.lab + 4 * j, *z = p.z + j * (size_t)p.ncls;
        if (p.mask && p.mask[j] == 0.0f)
            continue;
        if (frame_of(lab, p.vocab, p.ncls, &f)) {
            fault(g, n, g->c0 + j, lab, p.vocab, p.ncls);
            continue;
        }
        class_scores(&p, j, &f, s);
        sum += log_sum_exp(s, f.b - f.a) - s[f.y - f.a];
        sum += log_sum_exp(z, p.ncls) - z[f.c];
    }
    g_val(g, n)[0] = (float)sum;
}

/* dz = g (softmax (z_t) - onehot (c)) for every counted step, into dz (ncls x cols). */
static void class_grad(const struct pass *p, float up, float *dz)
{
    for (size_t j = 0; j < p->cols; j++) {
        struct frame f;
        const float *z = p->z + j * (size_t)p->ncls;
        float *d = dz + j * (size_t)p->ncls;
        memset(d, 0, (size_t)p->ncls * sizeof *d);
        if ((p->mask && p->mask[j] == 0.0f) || frame_of(p->lab + 4 * j, p->vocab, p->ncls, &f))
            continue;
        double lse = log_sum_exp(z, p->ncls);
        for (long r = 0; r < p->ncls; r++)
            d[r] = (float)(up * (exp((double)z[r] - lse) - (r == f.c)));
    }
}

/* d = g (softmax (s) - onehot (y - a)) per counted step; dh_t = W[:, a:b] d into dh (hd x
 * cols, when not NULL), dW[:, a:b] += h_t d' (when not NULL). */
static void word_grad(const struct pass *p, float up, float *s, float *dh, float *dw)
{
    for (size_t j = 0; j < p->cols; j++) {
        struct frame f;
        if (dh)
            memset(dh + j * (size_t)p->hd, 0, (size_t)p->hd * sizeof *dh);
        if ((p->mask && p->mask[j] == 0.0f) || frame_of(p->lab + 4 * j, p->vocab, p->ncls, &f))
            continue;
        long k = f.b - f.a;
        const float *wa = p->w + (size_t)f.a * (size_t)p->hd;
        class_scores(p, j, &f, s);
        double lse = log_sum_exp(s, k);
        for (long i = 0; i < k; i++)
            s[i] = (float)(up * (exp((double)s[i] - lse) - (i == f.y - f.a)));
        if (dh)
            cblas_sgemv(CblasColMajor, CblasNoTrans, p->hd, (int)k, 1.0f, wa, p->hd, s, 1, 0.0f,
                        dh + j * (size_t)p->hd, 1);
        if (dw)
            cblas_sger(CblasColMajor, p->hd, (int)k, 1.0f, p->h + j * (size_t)p->hd, 1, s, 1,
                       dw + (size_t)f.a * (size_t)p->hd, p->hd);
    }
}

static void backward_classce(struct nn_graph *g, struct g_node *n)
{
    struct g_node *h = IN(g, n, 1), *w = IN(g, n, 2), *z = IN(g, n, 3);
    struct pass p = pass_of(g, n);
    float up = g_grad(g, n)[0];
    if (z->needs_grad) { /* g->tmp holds any node's cells: z's and h's */
        class_grad(&p, up, g->tmp);
        g_add_grad(g, z, g->tmp, z, 1.0f);
    }
    if (h->needs_grad || w->needs_grad) {
        word_grad(&p, up, g->tmp2, h->needs_grad ? g->tmp : NULL,
                  w->needs_grad ? g_grad(g, w) : NULL);
        if (h->needs_grad)
            g_add_grad(g, h, g->tmp, h, 1.0f);
    }
}

/* h and z: their whole gradients written at once (g_add_grad); W's class columns added. */
const struct g_kind g_kind_class_ce = {.name = "ClassBasedCrossEntropyWithSoftmax",
                                       .nin = 4,
                                       .shape = shape_classce,
                                       .forward = forward_classce,
                                       .backward = backward_classce,
                                       .overwrites = 2 | 8};
