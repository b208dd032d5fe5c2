#define _GNU_SOURCE
#include "calibrate.h"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "timer.h"

enum { READS = 1 << 16, RES_STEPS = 1000, LOOP_ITERS = 1 << 22, REPEATS = 5 };

/* The fastest of several back-to-back runs: slower runs were interrupted. */
static double timer_read_cost(void)
{
	double best = 1e30;

	for (int r = 0; r < REPEATS; r++) {
		uint64_t start = nb_ticks();

		for (int i = 0; i < READS; i++)
			(void)nb_ticks();
		double per = (double)(nb_ticks() - start) / (READS + 1);

		if (per < best)
			best = per;
	}
	return best;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* One read's cost, as a loop that does little else (a subtraction, a
 * compare, a store) pays it: the smallest and the median, over DIFFS
 * stretches, of the ticks between a read and the one WINDOW reads later,
 * over WINDOW. Fenced reads are taken one at a time and WINDOW 1 is exact;
 * unfenced ones overlap (a read can be taken before the one ahead of it
 * completes: consecutive reads 1 tick apart, or out of order), so their
 * cost is a throughput, over 16 reads in a row. */
#define READ_COSTS(name, read, WINDOW)                                                       \
	static void name(double *min, double *median)                                        \
	{                                                                                    \
		enum { DIFFS = 4096 };                                                       \
		static uint64_t d[DIFFS];                                                    \
		uint64_t back[WINDOW];                                                       \
		size_t n = 0;                                                                \
                                                                                             \
		for (int i = 0; i < WINDOW; i++)                                             \
			back[i] = read();                                                    \
		for (int i = 0; i < DIFFS; i++) {                                            \
			uint64_t now = read();                                               \
                                                                                             \
			if ((int64_t)(now - back[i % WINDOW]) > 0)                           \
				d[n++] = now - back[i % WINDOW];                             \
			back[i % WINDOW] = now;                                              \
		}                                                                            \
		qsort(d, n, sizeof(*d), cmp_u64);                                            \
		*min = n ? (double)d[0] / WINDOW : 0;                                        \
		*median = n ? (double)d[n / 2] / WINDOW : 0;                                 \
	}
READ_COSTS(fenced_read_costs, nb_ticks, 1)
READ_COSTS(unfenced_read_costs, nb_ticks_unfenced, 16)

/* MPAC Figure 4: the mean of the first non-zero steps the timer takes. */
static double timer_resolution(void)
{
	uint64_t sum = 0;
	uint64_t last = nb_ticks();

	for (int i = 0; i < RES_STEPS; i++) {
		uint64_t now;

		while ((now = nb_ticks()) == last)
			;
		sum += now - last;
		last = now;
	}
	return (double)sum / RES_STEPS;
}

/* MPAC Figure 3 (from LMBench): time N iterations of one and of two register
 * operations; 2*T1 - T2 leaves the cost of the loop itself. */
static double loop_overhead(void)
{
	double best = 1e30;

	for (int r = 0; r < REPEATS; r++) {
		uint64_t x = 0;
		uint64_t t0 = nb_ticks();

		for (int i = 0; i < LOOP_ITERS; i++) {
			x++;
			__asm__ volatile("" : "+r"(x));
		}
		uint64_t t1 = nb_ticks();

		for (int i = 0; i < LOOP_ITERS; i++) {
			x++;
			__asm__ volatile("" : "+r"(x));
			x++;
			__asm__ volatile("" : "+r"(x));
		}
		uint64_t t2 = nb_ticks();
		double per = (2.0 * (double)(t1 - t0) - (double)(t2 - t1)) / LOOP_ITERS;

		if (per < 0)
			per = 0;
		if (per < best)
			best = per;
	}
	return best;
}

void nb_calibrate(struct nb_calibration *c, double ticks_per_ns_override)
{
	cpu_set_t set;

	if (ticks_per_ns_override > 0) {
		c->ticks_per_ns = ticks_per_ns_override;
		c->ticks_per_ns_given = 1;
	} else {
		c->ticks_per_ns = nb_ticks_per_ns_calibrate(100);
		c->ticks_per_ns_given = 0;
	}
	c->timer_read_ticks = timer_read_cost();
	fenced_read_costs(&c->timer_read_min_ticks, &c->timer_read_median_ticks);
	unfenced_read_costs(&c->unfenced_read_min_ticks, &c->unfenced_read_median_ticks);
	c->timer_resolution_ticks = timer_resolution();
	c->loop_overhead_ticks = loop_overhead();
	/* A duration is measured to 1% when the read cost and the resolution,
	 * the two errors at its ends, are at most 1% of it. */
	c->min_measurable_ns =
		100.0 * (c->timer_read_ticks + c->timer_resolution_ticks) / c->ticks_per_ns;
	c->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	c->cpus_allowed = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
}
