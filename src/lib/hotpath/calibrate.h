/* What the timer and the machine allow us to measure (MPAC's init step). */
#ifndef NB_CALIBRATE_H
#define NB_CALIBRATE_H

#include <stdint.h>

struct nb_calibration {
	double ticks_per_ns;
	int ticks_per_ns_given;      /* 1 when --ticks-per-ns overrode the measurement */
	double timer_read_ticks;     /* mean cost of one nb_ticks() in a back-to-back run
				      * (the fastest of 5 runs' means) */
	/* one read's cost in a loop, the smallest and the median: fenced reads
	 * (nb_ticks) one at a time, unfenced ones (nb_ticks_unfenced, which
	 * overlap) over 16 in a row (calibrate.c) */
	double timer_read_min_ticks, timer_read_median_ticks;
	double unfenced_read_min_ticks, unfenced_read_median_ticks;
	double timer_resolution_ticks; /* mean smallest non-zero step between two reads */
	double loop_overhead_ticks;  /* cost of one empty loop iteration (LMBench's 2*T1-T2) */
	double min_measurable_ns;    /* shortest duration measured to within 1% */
	int cpus_online;
	int cpus_allowed;
};

/* Fills everything; ticks_per_ns_override > 0 replaces the measured rate. */
void nb_calibrate(struct nb_calibration *c, double ticks_per_ns_override);

static inline double nb_ticks_to_ns(const struct nb_calibration *c, double ticks)
{
	return ticks / c->ticks_per_ns;
}

#endif
