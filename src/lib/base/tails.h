/* The tails of the time lost to noise, sample by sample: its percentiles,
 * its maximum, and how often per hour of the run it passed 10 us, 100 us and
 * 1 ms. A procurement report's worst case, which a mean hides. */
#ifndef NB_TAILS_H
#define NB_TAILS_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

enum { NB_TAIL_THRESHOLDS = 3 };

struct nb_tails {
	uint64_t n;
	double p50_ns, p99_ns, p99_9_ns, p99_99_ns, max_ns; /* NAN without samples */
	double above_per_hour[NB_TAIL_THRESHOLDS];          /* 10 us, 100 us, 1 ms */
	/* The loss of a sample of value v, defined once, here, for the analysis
	 * too (the JSON's tails.loss): (v - base) * ns_per_unit, or with
	 * `falling` (base - v) * ns_per_unit, 0 when below; over `seconds`. */
	double base, ns_per_unit, seconds;
	int falling;
};

/* From v[0..n) sorted ascending: sample i lost |v[i] - base| * ns_per_unit
 * ns (base the best value), growing with v (FWQ times) or, with `falling`, as v falls (FTQ
 * counts); the run measured for `seconds`. Percentiles are of type 1 (the
 * smallest loss with at least that share of samples at or below it). */
void nb_tails_sorted(const uint64_t *v, size_t n, double base, double ns_per_unit, int falling,
		     double seconds, struct nb_tails *t);
/* For the data files' values: they hold each value times `file_per_value`
 * (P-SNAP and selfish write ns of what they measured in ticks). */
void nb_tails_rescale(struct nb_tails *t, double file_per_value);
/* "tails": {p50_us, p99_us, p99_9_us, p99_99_us, max_us, above_10us_per_hour, ...} */
void nb_tails_json(struct nb_json *j, const struct nb_tails *t);
/* " p99_9_loss_us=... max_loss_us=... above_100us_per_hour=..." for a summary line */
void nb_tails_print(const struct nb_tails *t);

#endif
