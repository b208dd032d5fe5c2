#include "stats.h"

#include <math.h>
#include <string.h>

/* In-place introsort: glibc's qsort may allocate a buffer as large as the
 * array, which would break the 16-bytes-a-sample budget of a long run. */
static void swap(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

static void sift_down(uint64_t *v, size_t root, size_t n)
{
	for (size_t child; (child = 2 * root + 1) < n; root = child) {
		if (child + 1 < n && v[child + 1] > v[child])
			child++;
		if (v[root] >= v[child])
			return;
		swap(&v[root], &v[child]);
	}
}

static void heap_sort(uint64_t *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, i, n);
	for (size_t end = n; end-- > 1;) {
		swap(&v[0], &v[end]);
		sift_down(v, 0, end);
	}
}

static void intro_sort(uint64_t *v, size_t n, int depth)
{
	while (n > 16) {
		if (depth-- == 0) {
			heap_sort(v, n);
			return;
		}
		/* median of three as pivot, then Hoare partition */
		uint64_t a = v[0], b = v[n / 2], c = v[n - 1];
		uint64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		size_t i = 0, j = n - 1;

		for (;;) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i >= j)
				break;
			swap(&v[i++], &v[j--]);
		}
		/* recurse into the smaller side, loop on the larger: O(log n) stack */
		if (j + 1 < n - j - 1) {
			intro_sort(v, j + 1, depth);
			v += j + 1;
			n -= j + 1;
		} else {
			intro_sort(v + j + 1, n - j - 1, depth);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && v[k - 1] > v[k]; k--)
			swap(&v[k - 1], &v[k]);
}

void nb_sort_u64(uint64_t *v, size_t n)
{
	int depth = 0;

	for (size_t m = n; m > 1; m >>= 1)
		depth += 2;
	intro_sort(v, n, depth);
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
		s->kurtosis = s->skewness = NAN;
		return;
	}
	nb_sort_u64(v, n);
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
	long double sum = 0, sq = 0, cube = 0, quad = 0;

	for (size_t i = 0; i < n; i++)
		sum += (long double)(v[i] - v[0]);
	long double mean_off = sum / n;

	for (size_t i = 0; i < n; i++) {
		long double d = (long double)(v[i] - v[0]) - mean_off;

		sq += d * d;
		cube += d * d * d;
		quad += d * d * d * d;
	}
	s->mean = (double)((long double)v[0] + mean_off);
	s->variance = n > 1 ? (double)(sq / (n - 1)) : 0.0;
	s->std = sqrt(s->variance);
	long double m2 = sq / n;

	s->kurtosis = m2 > 0 ? (double)(quad / n / (m2 * m2)) : NAN;
	s->skewness = m2 > 0 ? (double)(cube / n / powl(m2, 1.5L)) : NAN;
	double half = n > 1 ? nb_t95(n - 1) * s->std / sqrt((double)n) : 0.0;

	s->ci95_low = s->mean - half;
	s->ci95_high = s->mean + half;
}

void nb_stats_scale(struct nb_stats *s, double f)
{
	s->min *= f;
	s->max *= f;
	s->mean *= f;
	s->median *= f;
	s->mode *= f;
	s->variance *= f * f;
	s->std *= f;
	s->ci95_low *= f;
	s->ci95_high *= f;
}

void nb_stats_json(struct nb_json *j, const struct nb_stats *s, const char *unit, double scaled)
{
	nb_json_object(j, "stats");
	nb_json_string(j, "unit", unit);
	nb_json_double(j, "min", s->min);
	nb_json_double(j, "max", s->max);
	nb_json_double(j, "mean", s->mean);
	nb_json_double(j, "median", s->median);
	nb_json_double(j, "mode", s->mode);
	nb_json_double(j, "variance", s->variance);
	nb_json_double(j, "std", s->std);
	nb_json_double(j, "ci95_low", s->ci95_low);
	nb_json_double(j, "ci95_high", s->ci95_high);
	nb_json_double(j, "kurtosis", s->kurtosis);
	nb_json_double(j, "skewness", s->skewness);
	nb_json_double(j, "scaled_noise_mean", scaled);
	nb_json_end(j, '}');
}
