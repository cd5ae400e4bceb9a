/* Wall-clock seconds from a monotonic clock. */
#ifndef PT_CORE_TIMER_H
#define PT_CORE_TIMER_H

#include <time.h>

static inline double pt_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif
