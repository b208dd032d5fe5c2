#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

double nb_t95(size_t df)
{
	static const double t[] = {
		0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};

	if (df == 0)
		return NAN;
	if (df < sizeof(t) / sizeof(t[0]))
		return t[df];
	if (df < 60)
		return 2.000;
	if (df < 120)
		return 1.980;
	return 1.960;
}

void nb_stats_compute(uint64_t *v, size_t n, struct nb_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	if (n == 0) {
		s->min = s->max = s->mean = s->median = s->mode = NAN;
		s->variance = s->std = s->ci95_low = s->ci95_high = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	s->min = (double)v[0];
	s->max = (double)v[n - 1];
	s->median = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;

	/* The mode of sorted data is its longest run; ties go to the smallest value. */
	size_t best_len = 0, run = 0;

	for (size_t i = 0; i < n; i++) {
		run = (i > 0 && v[i] == v[i - 1]) ? run + 1 : 1;
		if (run > best_len) {
			best_len = run;
			s->mode = (double)v[i];
		}
	}

	/* Two passes around the minimum keep the sums small and exact enough
	 * for tick counts near 2^64. */
	long double sum = 0, sq = 0;

	for (size_t i = 0; i < n; i++)
		sum += (long double)(v[i] - v[0]);
	long double mean_off = sum / n;

	for (size_t i = 0; i < n; i++) {
		long double d = (long double)(v[i] - v[0]) - mean_off;

		sq += d * d;
	}
	s->mean = (double)((long double)v[0] + mean_off);
	s->variance = n > 1 ? (double)(sq / (n - 1)) : 0.0;
	s->std = sqrt(s->variance);
	double half = n > 1 ? nb_t95(n - 1) * s->std / sqrt((double)n) : 0.0;

	s->ci95_low = s->mean - half;
	s->ci95_high = s->mean + half;
}
