/* Private to src/reader: CNTK's LMSequenceReader, for language models (CNTK's PennTreebank
 * example, rnn.cntk):
 *
 *   reader = [ readerType = "LMSequenceReader"; file = "ptb.train.txt"
 *              wordclass = "vocab.txt"; nbruttsineachrecurrentiter = 0
 *              features = [ dim = 0 ]
 *              labelIn = [ labelType = "Category"; labelDim = 10000 ]
 *              labels = [ labelType = "NextWord" ] ]
 *
 * lm_config.c reads that block into rc->lm (the keys and their meaning are CNTK's,
 * LMSequenceReader/SequenceReader.cpp); lm_reader.c reads the word-class file and the
 * sentences and makes the minibatches as CNTK's BatchSequenceReader does:
 *
 * - Every line of three words or more is a sentence (a line holds its own sentence marks,
 *   "</s> w1 ... wn </s>": nothing is added). Step t's input is word t and its target word
 *   t + 1, so a sentence of n words gives n - 1 samples. Words the word-class file lacks
 *   read as `unk`.
 * - The features input is the step's word, one-hot over the vocabulary (labelIn's
 *   labelDim); the labels input holds 4 rows a step: the target's id, its class, and its
 *   class's words [first, end), the rows ClassBasedCrossEntropyWithSoftmax reads.
 * - Each epoch reads the file from its start, in blocks of whole lines of at least
 *   cacheBlockSize words; each block's sentences are shuffled (std::mt19937 seeded with
 *   epoch + 1 for an epoch's first block, + 2 for its second ..., and the shuffle of the
 *   C++ library CNTK's Linux builds used), whatever randomize says (as CNTK's).
 * - A minibatch holds sentences of one length: the first unread one in the shuffled order
 *   and, with nbruttsineachrecurrentiter = 0, the unread ones of its length after it while
 *   their words stay under minibatchSize; with N > 0, up to N of them, in pieces of
 *   minibatchSize steps when they are longer, minibatch after minibatch (mb->cont: the
 *   network's recurrent state carried from one piece to the next).
 * - An epoch ends at the first minibatch that would start after more than epochSize samples
 *   (CNTK's rule: its last minibatch goes past epochSize), or where the file ends.
 * With several ranks, every rank makes the same minibatches and takes the k-th sentence of
 * each where k mod ranks is its rank. */
#ifndef PT_READER_LM_H
#define PT_READER_LM_H

#include "parsers/schema.h"
#include "reader/reader.h"

struct reader;

/* Whether reader block `block` is an LMSequenceReader's and n one of its sections. */
int lm_stream(struct cfg_node *block, struct cfg_node *n);
/* readerType = "LMSequenceReader" in reader block b (its keys already read into rc). */
int lm_config_read(struct cfg_check *ck, struct cfg_node *b, struct reader_config *rc,
                   struct pt_err *e);

/* lm_reader.c: read the word-class file and the sentences (r->ix holds a sequence a
 * sentence, its samples its words - 1). */
int lm_open(struct reader *r, struct pt_err *e);
void lm_close(struct reader *r);
int lm_start_epoch(struct reader *r, size_t epoch, size_t epoch_size, struct pt_err *e);
int lm_next(struct reader *r, size_t mb_size, struct minibatch *mb, struct pt_err *e);

#endif
