/* tests/tcheck: assertions for the C tests that cannot use Check (plain MPI programs:
 * Check forks, which MPI does not survive).
 *
 *   tcheck_init(comm, "test_masgd");         once, after comm_init (comm may be NULL)
 *   CHECK(cond, "what %d", x);               anywhere, as often as needed
 *   return tcheck_finish();                  prints the summary, gives the exit status
 *
 * With a communicator every CHECK is collective: every rank must reach the same CHECKs in
 * the same order. Each rank passes its verdict, and a check fails when it failed on any
 * rank. Rank 0 prints "ok N - what" or "not ok N - what (rank R) at file:line" (R: the
 * lowest failing rank), and at the end "N passed, M failed". */
#ifndef PT_TESTS_TCHECK_H
#define PT_TESTS_TCHECK_H

struct comm;

/* Suffix appended to every description (a test's pass name, "" by default). */
extern const char *tcheck_suffix;

/* Start counting; comm NULL: the checks are this process's alone. */
void tcheck_init(struct comm *comm, const char *name);
/* One check (see CHECK); returns ok. */
int tcheck_at(const char *file, int line, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Rank 0 prints the summary; returns the exit status (0: every check passed, else 1). */
int tcheck_finish(void);
/* Checks so far, and how many failed. */
int tcheck_count(void);
int tcheck_failures(void);

#define CHECK(cond, ...) tcheck_at(__FILE__, __LINE__, (cond) ? 1 : 0, __VA_ARGS__)

#endif
