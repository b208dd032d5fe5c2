/* The tick source every kernel reads, and its conversion to nanoseconds.
 *
 * nb_ticks() is inlined into the measured loops, so it must stay a few
 * instructions long: a serialising fence and a counter read.  The fence keeps
 * earlier work from drifting past the read (brho's FTQ notes: it removes the bands).
 */
#ifndef NB_TIMER_H
#define NB_TIMER_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#define NB_TIMER_NAME "rdtsc"
static inline uint64_t nb_ticks(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
#define NB_TIMER_NAME "cntvct_el0"
static inline uint64_t nb_ticks(void)
{
	uint64_t v;

	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}
#else
#define NB_TIMER_NAME "clock_gettime(CLOCK_MONOTONIC_RAW)"
static inline uint64_t nb_ticks(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* The counter alone, without the fence: a few cycles cheaper, and free to be
 * read a little early or late against the instructions around it. Only for
 * a loop that compares consecutive reads with each other (selfish), where
 * that shift is a few cycles and a detour thousands; see selfish_loop.c. */
#if defined(__x86_64__)
static inline uint64_t nb_ticks_unfenced(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
static inline uint64_t nb_ticks_unfenced(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#else
#define nb_ticks_unfenced nb_ticks
#endif

/* CLOCK_MONOTONIC_RAW in ns: the reference the tick rate is calibrated against. */
static inline uint64_t nb_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A tick count and the reference clock read as close together as we can. */
struct nb_clock_pair {
	uint64_t ticks;
	uint64_t raw_ns;
};

struct nb_clock_pair nb_clock_pair_read(void);

/* Ticks per ns measured against CLOCK_MONOTONIC_RAW over about span_ms. */
double nb_ticks_per_ns_calibrate(unsigned span_ms);

#endif
