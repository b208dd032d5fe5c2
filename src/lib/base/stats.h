/* Summary statistics of one thread's samples (MPAC's statistics interface). */
#ifndef NB_STATS_H
#define NB_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

struct nb_stats {
	size_t n;
	double min, max, mean, median, mode;
	double variance, std;      /* sample variance (n - 1) and its root */
	double ci95_low, ci95_high; /* 95% confidence interval of the mean */
	/* moment kurtosis m4 / m2^2 (3 for a normal sample; Sequoia's limit is
	 * 100) and skewness m3 / m2^1.5; NAN for a constant sample */
	double kurtosis, skewness;
};

/* Sorts v in place (the samples are written out before this is called). */
void nb_stats_compute(uint64_t *v, size_t n, struct nb_stats *s);

/* The statistics of every value times f > 0 (P-SNAP measures ticks and
 * writes ns): kurtosis and skewness do not change. */
void nb_stats_scale(struct nb_stats *s, double f);

/* Sorts ascending in place, allocating nothing. */
void nb_sort_u64(uint64_t *v, size_t n);

/* Two-sided 95% Student t quantile for df degrees of freedom. */
double nb_t95(size_t df);

/* "stats": {unit, min, ..., scaled_noise_mean} */
void nb_stats_json(struct nb_json *j, const struct nb_stats *s, const char *unit, double scaled);

#endif
