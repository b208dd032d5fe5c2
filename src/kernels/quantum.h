/* What FWQ and FTQ share: Sequoia's statistics of each participant's
 * samples, its summary line and its JSON. fwq.c and ftq.c say what differs.
 * Streamed runs (P-SNAP's too) are measured and reported here. */
#ifndef NB_QUANTUM_H
#define NB_QUANTUM_H

#include "driver.h"
#include "speed.h"
#include "stats.h"
#include "tails.h"

struct nb_quantum {
	const char *value_unit; /* unit of the summarised value */
	/* writes local participant's n samples to its files (stdout with -s) */
	void (*write)(struct nb_run *r, int local, size_t n);
	/* gathers the summarised value of n samples into v (in place) */
	uint64_t *(*values)(struct nb_thread *t, size_t n);
	/* Sequoia's scaled noise, and its sd's denominator (the best value) */
	double (*scaled_noise_mean)(const struct nb_stats *s);
	double (*best)(const struct nb_stats *s);
	/* splits n samples' noise into detours and running slow (speed.h);
	 * NULL where the samples are not fixed work */
	void (*speed)(struct nb_thread *t, size_t n, struct nb_speed *s);
	/* the n samples' detours, in time order, for --trace (causes.h) */
	size_t (*detours)(struct nb_run *r, struct nb_thread *t, size_t n,
			  struct nb_cause_detour **out);
	/* the kernel's keys in the JSON, and the end of a summary line */
	void (*json)(struct nb_run *r, struct nb_json *j);
	void (*summary)(const struct nb_participant *p, const struct nb_stats *s);
	/* whether the best value is the largest (FTQ); the summary then gives,
	 * beside the Sequoia figures against it, a robust best (the 99.9th
	 * percentile) and how many samples reached the largest */
	int best_is_max;
	/* the tails of the loss, from the n values sorted ascending */
	void (*tails)(const struct nb_participant *p, const uint64_t *sorted, size_t n,
		      struct nb_tails *t);
};

/* The kernel's finish: files, statistics, gather, summary lines, JSON; with
 * --stream, the streams' figures (P-SNAP's too, its q then gives the unit
 * and its JSON keys only). */
void nb_quantum_finish(struct nb_run *r, const struct nb_quantum *q, int signo);

/* --stream, FWQ and P-SNAP: `loops` work loops a sample until stopped. */
void nb_quantum_stream_fixed_work(struct nb_thread *t, uint64_t loops);

/* The time per work loop of the run's work kind, measured on this host. */
double nb_quantum_ticks_per_work_loop(struct nb_run *r);

#endif
