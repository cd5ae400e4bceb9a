/* tests/test_math's shared parts (test_math.c defines them): the CPU backend every test
 * case runs on, made and freed around each test by the fixture math_setup/math_teardown,
 * and a seeded generator of doubles uniform in [-1, 1). */
#ifndef PT_TESTS_TEST_MATH_H
#define PT_TESTS_TEST_MATH_H

#include <stdint.h>

#include "math/backend.h"

extern struct backend *bk;
void math_setup(void);
void math_teardown(void);
double uni(uint64_t *s);

#endif
