/* What FWQ and FTQ share, Sequoia's statistics of each participant's
 * samples, its result line and its JSON; P-SNAP takes its stream from here
 * too. A kernel points its `shared` at its struct nb_quantum, which says
 * what differs, and its results at NB_QUANTUM_RESULTS. */
#ifndef NB_QUANTUM_H
#define NB_QUANTUM_H

#include "kernel.h"
#include "spectrum.h"
#include "speed.h"
#include "stats.h"
#include "tails.h"

struct nb_quantum {
	/* gathers the summarised value of n samples into v (in place) */
	uint64_t *(*values)(struct nb_thread *t, size_t n);
	/* Sequoia's scaled noise, and its sd's denominator (the best value) */
	double (*scaled_noise_mean)(const struct nb_stats *s);
	double (*best)(const struct nb_stats *s);
	/* splits n samples' noise into detours and running slow (speed.h);
	 * NULL where the samples are not fixed work */
	void (*speed)(struct nb_thread *t, size_t n, struct nb_speed *s);
	/* adds the n samples, in time order, to the run's stretches */
	void (*stretches)(const struct nb_run *r, const struct nb_thread *t, size_t n,
			  struct nb_stretches *s);
	/* the end of a result line */
	void (*summary)(const struct nb_participant *p, const struct nb_stats *s, FILE *out);
	/* whether the best value is the largest (FTQ); the summary then gives,
	 * beside the Sequoia figures against it, a robust best (the 99.9th
	 * percentile) and how many samples reached the largest */
	int best_is_max;
	/* the tails of the loss, from the n values sorted ascending */
	void (*tails)(const struct nb_participant *p, const uint64_t *sorted, size_t n,
		      struct nb_tails *t);
	/* samples a second, on the participant's host, where the values are a
	 * series on a fixed grid whose spectrum says something (FTQ); NULL
	 * otherwise */
	double (*sampling_hz)(const struct nb_participant *p);
};

struct nb_quantum_record {
	struct nb_participant p;
	struct nb_stats stats;
	struct nb_speed speed;
	double robust_best; /* best_is_max: the 99.9th percentile (type 1) */
	uint64_t at_max;    /* samples equal to the largest */
	struct nb_spectrum_lines spectrum; /* with sampling_hz */
};

void nb_quantum_summarise(struct nb_run *r, int local, size_t n, void *record);
void nb_quantum_print(const struct nb_run *r, const void *record, FILE *out);
/* the run's strongest spectral line (with sampling_hz): reduced over the
 * ranks, on "K summary ranks=N line_hz=.. line_share_percent=.." */
void nb_quantum_reduce(struct nb_run *r, const void *mine, int nlocal, int signo);
void nb_quantum_print_run(const struct nb_run *r, int n);
void nb_quantum_json_run(const struct nb_run *r, struct nb_json *j, int n);
void nb_quantum_json_rank(const struct nb_run *r, struct nb_json *j, const void *record);

/* The kernel's results: its own writer of the data files and its detours. */
#define NB_QUANTUM_RESULTS(write_, detours_)                                          \
	{                                                                             \
		.size = sizeof(struct nb_quantum_record), .write = (write_),          \
		.detours = (detours_), .summarise = nb_quantum_summarise,             \
		.reduce = nb_quantum_reduce, .print = nb_quantum_print,               \
		.print_run = nb_quantum_print_run, .json_run = nb_quantum_json_run,   \
		.json_rank = nb_quantum_json_rank,                                    \
	}

/* --stream, FWQ and P-SNAP: `loops` work loops a sample until stopped. */
void nb_quantum_stream_fixed_work(struct nb_thread *t, uint64_t loops);

#endif
