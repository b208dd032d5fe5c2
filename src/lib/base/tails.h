/* The tails of the time lost to noise, sample by sample: its percentiles,
 * its maximum, and how often per hour of the run it passed 10 us, 100 us and
 * 1 ms. A procurement report's worst case, which a mean hides. And the
 * samples and their loss on fixed log buckets of the loss: a participant's
 * whole distribution in a few hundred bytes, which sum over ranks, so that
 * the whole machine's is known without reading a sample. */
#ifndef NB_TAILS_H
#define NB_TAILS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

enum { NB_TAIL_THRESHOLDS = 3 };

/* Bucket 0 holds losses below 100 ns (the timer's reach), bucket k
 * [edge k-1, edge k) on a 1-2-5 series up to 10 s, the last one 10 s and
 * beyond. */
enum { NB_LOSS_BUCKETS = 26 };
extern const double nb_loss_edges_ns[NB_LOSS_BUCKETS - 1];

/* The loss of a sample of value v against the best value `base`, defined
 * once, here, for every consumer (the tails below, the streamed runs'
 * figures, the analysis through the JSON's tails.loss): (v - base) *
 * ns_per_unit, or with `falling` (FTQ counts) (base - v) * ns_per_unit; 0
 * when v is at or beyond the best. */
static inline double nb_loss(double v, double base, double ns_per_unit, int falling)
{
	double d = falling ? base - v : v - base;

	return d > 0 ? d * ns_per_unit : 0;
}

struct nb_loss_histogram {
	uint64_t samples[NB_LOSS_BUCKETS];
	double lost_ns[NB_LOSS_BUCKETS]; /* the loss of those samples, summed */
};

struct nb_tails {
	uint64_t n;
	double p50_ns, p99_ns, p99_9_ns, p99_99_ns, max_ns; /* NAN without samples */
	double above_per_hour[NB_TAIL_THRESHOLDS];          /* 10 us, 100 us, 1 ms */
	/* nb_loss's arguments, over `seconds` */
	double base, ns_per_unit, seconds;
	int falling;
	int measured; /* set by nb_tails_sorted */
	struct nb_loss_histogram histogram;
};

/* From v[0..n) sorted ascending: sample i lost (v[i] - base) * ns_per_unit
 * ns (base the best value), growing with v (FWQ times) or, with `falling`, as v falls (FTQ
 * counts); the run measured for `seconds`. Percentiles are of type 1 (the
 * smallest loss with at least that share of samples at or below it). */
void nb_tails_sorted(const uint64_t *v, size_t n, double base, double ns_per_unit, int falling,
		     double seconds, struct nb_tails *t);
/* For the data files' values: they hold each value times `file_per_value`
 * (P-SNAP and selfish write ns of what they measured in ticks). */
void nb_tails_rescale(struct nb_tails *t, double file_per_value);
/* "tails": {p50_us, p99_us, p99_9_us, p99_99_us, max_us, above_10us_per_hour, ...,
 * loss, histogram} */
void nb_tails_json(struct nb_json *j, const struct nb_tails *t);
/* to += h */
void nb_loss_histogram_add(struct nb_loss_histogram *to, const struct nb_loss_histogram *h);
/* "samples": [...], "lost_ns": [...] in the open object, without the empty
 * buckets beyond the last sample */
void nb_loss_histogram_json(struct nb_json *j, const struct nb_loss_histogram *h);
/* key: [the edges in ns] */
void nb_loss_edges_json(struct nb_json *j, const char *key);
/* " p99_9_loss_us=... max_loss_us=... above_100us_per_hour=..." for a summary line */
void nb_tails_print(const struct nb_tails *t, FILE *out);

#endif
