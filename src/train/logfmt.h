/* CNTK's log lines (SPEC 9), formatted byte for byte. Pure: text into a caller's buffer.
 *
 *  Starting Epoch 1: learning rate per sample = 0.020000  effective momentum = 0.900000  momentum
 * as time constant = 237.3 samples Epoch[ 1 of 4]-Minibatch[   1-  10]: CE = 0.69973267 * 250; Err
 * = 0.50400000 * 250; time = 0.0202s; samplesPerSecond = 12368.3 Epoch[ 2 of 4]-Minibatch[   1-
 * 10, 2.50%]: ... Finished Epoch[ 1 of 4]: [Training] CE = ... * 10000; totalSamplesSeen = 10000;
 * learningRatePerSample = 0.02; epochTime=0.910351s Final Results: Minibatch[1-2]: Err = 0.04975124
 * * 603; CE = 0.10813542 * 603; perplexity = 1.11419862
 */
#ifndef PT_TRAIN_LOGFMT_H
#define PT_TRAIN_LOGFMT_H

#include <stddef.h>

/* A criterion accumulated over some samples: printed as sum / count. */
struct logfmt_crit {
    const char *name;
    double sum;
    size_t count;
};

/* "Name = 0.69973267 * 250": %.8f, or %.8e when %.8g would use an exponent; a name ending
 * in 's' (an error count such as "errs") prints as a percentage, "%2.3f%%". */
void logfmt_criterion(char *buf, size_t size, const struct logfmt_crit *c);

/* Digits after the point of the progress percentage:
 * max(ceil(log10(mbs_per_epoch / mbs_per_line)) - 2, 2). */
int logfmt_progress_digits(size_t mbs_per_epoch, size_t mbs_per_line);

void logfmt_epoch_start(char *buf, size_t size, int epoch, double lr_per_sample,
                        double effective_momentum, double time_constant);
/* percent < 0: no percentage (first epoch of a full pass). */
void logfmt_progress(char *buf, size_t size, int epoch, int max_epochs, int first_mb, int last_mb,
                     double percent, int digits, const struct logfmt_crit *c, int n, double seconds,
                     double samples);
void logfmt_epoch_end(char *buf, size_t size, int epoch, int max_epochs,
                      const struct logfmt_crit *c, int n, size_t total_samples, float lr_per_sample,
                      double seconds);
/* "Finished Epoch[ 1 of 3]: [Validate] A = ... * N; B = ... * N" (cvReader). */
void logfmt_validate(char *buf, size_t size, int epoch, int max_epochs, const struct logfmt_crit *c,
                     int n);
/* perplexity_of: index of the cross-entropy criterion whose exp() is appended, or -1. */
void logfmt_final(char *buf, size_t size, int first_mb, int last_mb, const struct logfmt_crit *c,
                  int n, int perplexity_of);

#endif
