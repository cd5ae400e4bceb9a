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
/* perplexity_of: index of the cross-entropy criterion whose exp() follows it, or -1. */
void logfmt_final(char *buf, size_t size, int first_mb, int last_mb, const struct logfmt_crit *c,
                  int n, int perplexity_of);

/* The log file that stderr=PATH names, by CNTK.cpp's rule. With timestamping (how CNTK's
 * own test drivers run it): PATH_<command1>_<command2>.log, and under parallel training
 * "rank<k>" appended on every rank, rank 0 included (PATH_train.logrank0). Without: PATH,
 * and PATH.rank<k> on ranks k > 0 under parallel training. parallel is CNTK's parallelTrain
 * switch; without it a rank k > 0 (parallelTrain=false on several ranks, where CNTK's
 * ranks would all write one file) keeps its suffix. Returns snprintf's length. */
int logfmt_log_name(char *buf, size_t size, const char *path, int timestamping,
                    const char *const *commands, size_t ncommands, int parallel, int rank);

/* CNTK's start banner: "NAME (BUILT) at STARTED\n\n" then the arguments joined by two
 * spaces and "\n". name: "partrain 0.1.0"; built: "Nov 24 2026 12:00:00" (__DATE__
 * __TIME__); started: "2026/11/24 21:30:00". */
void logfmt_banner(char *buf, size_t size, const char *name, const char *built, const char *started,
                   int argc, char *const *argv);

/* The five lines CNTK prints before each action (no trailing newline):
 * a row of 78 '#', "#<76 blanks>#", "# CMD command (ACTION action)<blanks> #", again. */
void logfmt_action_banner(char *buf, size_t size, const char *command, const char *action);

/* "Training 516740 parameters in 6 parameter tensors." (traceLevel 0) or "Training 516740
 * parameters in 6 out of 6 parameter tensors and 15 nodes with gradient:". */
void logfmt_parameters(char *buf, size_t size, double parameters, int tensors, int all_tensors,
                       int nodes_with_gradient, int trace);
/* "\tNode 'W0' (LearnableParameter operation) : [512 x 363]" */
void logfmt_parameter_node(char *buf, size_t size, const char *name, int rows, int cols);

#endif
