/* CNTK's log line formats; see logfmt.h. */
#include "train/logfmt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Append to buf (always terminated; silently cut when full). */
static void put(char *buf, size_t size, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t size, size_t *o, const char *fmt, ...)
{
    if (*o >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *o, size - *o, fmt, ap);
    va_end(ap);
    if (w > 0)
        *o += (size_t)w < size - *o ? (size_t)w : size - *o - 1;
}

void logfmt_criterion(char *buf, size_t size, const struct logfmt_crit *c)
{
    double v = c->count ? c->sum / (double)c->count : 0.0;
    size_t len = strlen(c->name), o = 0;
    buf[0] = '\0';
    if (len > 0 && c->name[len - 1] == 's') {
        put(buf, size, &o, "%s = %2.3f%% * %zu", c->name, 100.0 * v, c->count);
        return;
    }
    char probe[64];
    snprintf(probe, sizeof probe, "%.8g", v);
    if (strchr(probe, 'e'))
        put(buf, size, &o, "%s = %.8e * %zu", c->name, v, c->count);
    else
        put(buf, size, &o, "%s = %.8f * %zu", c->name, v, c->count);
}

int logfmt_progress_digits(size_t mbs_per_epoch, size_t mbs_per_line)
{
    double ratio = (double)mbs_per_epoch / (double)(mbs_per_line ? mbs_per_line : 1);
    int p = ratio > 0 ? (int)ceil(log10(ratio)) - 2 : 0;
    return p > 2 ? p : 2;
}

static void criteria(char *buf, size_t size, size_t *o, const struct logfmt_crit *c, int n)
{
    for (int i = 0; i < n; i++) {
        char one[256];
        logfmt_criterion(one, sizeof one, &c[i]);
        put(buf, size, o, "%s; ", one);
    }
}

void logfmt_epoch_start(char *buf, size_t size, int epoch, double lr_per_sample,
                        double effective_momentum, double time_constant)
{
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o,
        "Starting Epoch %d: learning rate per sample = %f  effective momentum = %f  "
        "momentum as time constant = %.1f samples",
        epoch, lr_per_sample, effective_momentum, time_constant);
}

void logfmt_progress(char *buf, size_t size, int epoch, int max_epochs, int first_mb, int last_mb,
                     double percent, int digits, const struct logfmt_crit *c, int n, double seconds,
                     double samples)
{
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o, " Epoch[%2d of %d]-Minibatch[%4d-%4d", epoch, max_epochs, first_mb, last_mb);
    if (percent >= 0)
        put(buf, size, &o, ", %2.*f%%", digits, percent);
    put(buf, size, &o, "]: ");
    criteria(buf, size, &o, c, n);
    put(buf, size, &o, "time = %.4fs; samplesPerSecond = %.1f", seconds,
        seconds > 0 ? samples / seconds : 0.0);
}

void logfmt_epoch_end(char *buf, size_t size, int epoch, int max_epochs,
                      const struct logfmt_crit *c, int n, size_t total_samples, float lr_per_sample,
                      double seconds)
{
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o, "Finished Epoch[%2d of %d]: [Training] ", epoch, max_epochs);
    criteria(buf, size, &o, c, n);
    put(buf, size, &o, "totalSamplesSeen = %zu; learningRatePerSample = %.8g; epochTime=%.6gs",
        total_samples, (double)lr_per_sample, seconds);
}

/* "A = ... * N; B = ... * N" (no trailing separator) */
static void joined(char *buf, size_t size, size_t *o, const struct logfmt_crit *c, int n)
{
    for (int i = 0; i < n; i++) {
        char one[256];
        logfmt_criterion(one, sizeof one, &c[i]);
        put(buf, size, o, "%s%s", i ? "; " : "", one);
    }
}

void logfmt_validate(char *buf, size_t size, int epoch, int max_epochs, const struct logfmt_crit *c,
                     int n)
{
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o, "Finished Epoch[%2d of %d]: [Validate] ", epoch, max_epochs);
    joined(buf, size, &o, c, n);
}

void logfmt_final(char *buf, size_t size, int first_mb, int last_mb, const struct logfmt_crit *c,
                  int n, int perplexity_of)
{
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o, "Final Results: Minibatch[%d-%d]: ", first_mb, last_mb);
    int p = perplexity_of >= 0 && perplexity_of < n && c[perplexity_of].count ? perplexity_of : -1;
    joined(buf, size, &o, c, p >= 0 ? p + 1 : n);
    if (p >= 0) { /* right after the cross entropy, as CNTK prints it */
        double ce = c[p].sum / (double)c[p].count;
        put(buf, size, &o, "; perplexity = %.8f", exp(ce));
        if (p + 1 < n) {
            put(buf, size, &o, "; ");
            joined(buf, size, &o, c + p + 1, n - p - 1);
        }
    }
}

int logfmt_log_name(char *buf, size_t size, const char *path, int timestamping,
                    const char *const *commands, size_t ncommands, int parallel, int rank)
{
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o, "%s", path);
    if (timestamping) {
        for (size_t i = 0; i < ncommands; i++)
            put(buf, size, &o, "_%s", commands[i]);
        put(buf, size, &o, ".log");
        if (parallel || rank > 0)
            put(buf, size, &o, "rank%d", rank);
    } else if (rank > 0) {
        put(buf, size, &o, ".rank%d", rank);
    }
    return (int)o;
}

void logfmt_banner(char *buf, size_t size, const char *name, const char *built, const char *started,
                   int argc, char *const *argv)
{
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o, "%s (%s) at %s\n\n", name, built, started);
    for (int i = 0; i < argc; i++)
        put(buf, size, &o, "%s%s", i > 0 ? "  " : "", argv[i]);
    put(buf, size, &o, "\n");
}

void logfmt_action_banner(char *buf, size_t size, const char *command, const char *action)
{
    static const char delim[] =
        "##############################################################################";
    int width = (int)sizeof delim - 1;
    char what[600];
    snprintf(what, sizeof what, "%s command (%s action)", command, action);
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o, "%s\n#%*s#\n", delim, width - 2, "");
    put(buf, size, &o, "# %s%*s #\n", what, width - (int)strlen(what) - 4, "");
    put(buf, size, &o, "#%*s#\n%s", width - 2, "", delim);
}

void logfmt_parameters(char *buf, size_t size, double parameters, int tensors, int all_tensors,
                       int nodes_with_gradient, int trace)
{
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o, "Training %.0f parameters in %d ", parameters, tensors);
    if (trace == 0)
        put(buf, size, &o, "parameter tensors.");
    else
        put(buf, size, &o, "out of %d parameter tensors and %d nodes with gradient:", all_tensors,
            nodes_with_gradient);
}

void logfmt_parameter_node(char *buf, size_t size, const char *name, int rows, int cols)
{
    size_t o = 0;
    buf[0] = '\0';
    put(buf, size, &o, "\tNode '%s' (LearnableParameter operation) : [%d x %d]", name, rows, cols);
}
