#include "spectrum.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

enum {
	SEGMENT_MAX = 1 << 17, /* 0.08 Hz at 10 kHz: longer only adds variance */
	FLOOR_WIDTH = 201,     /* bins of the running median */
	MIN_RATIO = 20,        /* a peak stands this far above the floor */
	MERGE_BINS = 3,        /* a line leaks into this many bins either side */
};
/* a line of a source timed by sleeping wanders by its wake-up latency */
static const double merge_rel = 0.03;
static const double two_pi = 6.283185307179586476925;

/* The largest n <= x whose only prime factors are 2, 3 and 5, so that the
 * frequency grid is exact (bin k at k fs / n) with a few trailing samples
 * dropped. */
static size_t fft_length(size_t x)
{
	size_t best = 1;

	for (size_t p2 = 1; p2 <= x; p2 *= 2)
		for (size_t p3 = p2; p3 <= x; p3 *= 3)
			for (size_t p5 = p3; p5 <= x; p5 *= 5)
				if (p5 > best)
					best = p5;
	return best;
}

/* The DFT of the len samples in[j stride]: out[k] = sum_j in[j stride]
 * exp(-2 pi i j k / len), the roots read from tw[j] = exp(-2 pi i j / N) of
 * the outermost length N = len step. Mixed-radix Cooley-Tukey (2, 3, 5),
 * decimation in time. */
static void fft(const double complex *in, size_t stride, double complex *out, size_t len,
		const double complex *tw, size_t step)
{
	if (len == 1) {
		out[0] = in[0];
		return;
	}
	size_t p = len % 2 == 0 ? 2 : len % 3 == 0 ? 3 : 5, m = len / p;

	for (size_t r = 0; r < p; r++)
		fft(in + r * stride, stride * p, out + r * m, m, tw, step * p);
	/* X[k + q m] = sum_r w^(r k) Y_r[k] w_p^(r q): in place, p at a time */
	for (size_t k = 0; k < m; k++) {
		double complex t[5];

		for (size_t r = 0; r < p; r++)
			t[r] = out[r * m + k] * tw[r * k * step];
		for (size_t q = 0; q < p; q++) {
			double complex s = 0;

			for (size_t r = 0; r < p; r++)
				s += t[r] * tw[(r * q * m) % len * step];
			out[q * m + k] = s;
		}
	}
}

/* One-sided averaged periodogram of x, mean removed: power[h - 1] at bin h =
 * 1 .. len / 2, the variance each frequency carries (a sinusoid of amplitude
 * A gives A^2 / 2). */
static void periodogram(const uint64_t *x, size_t segments, size_t len, double *power)
{
	double complex *in = malloc(len * sizeof(*in)), *out = malloc(len * sizeof(*out)),
		       *tw = malloc(len * sizeof(*tw));
	size_t half = len / 2;
	double mean = 0;

	if (!in || !out || !tw)
		nb_fail(NB_EXIT_FAILURE, "out of memory for a spectrum of %zu samples", len);
	for (size_t i = 0; i < segments * len; i++)
		mean += (double)x[i];
	mean /= (double)(segments * len);
	for (size_t i = 0; i < len; i++)
		tw[i] = cexp(-two_pi * I * (double)i / (double)len);
	memset(power, 0, half * sizeof(*power));
	for (size_t s = 0; s < segments; s++) {
		for (size_t i = 0; i < len; i++)
			in[i] = (double)x[s * len + i] - mean;
		fft(in, 1, out, len, tw, 1);
		for (size_t h = 1; h <= half; h++)
			power[h - 1] += creal(out[h]) * creal(out[h]) + cimag(out[h]) * cimag(out[h]);
	}
	for (size_t h = 1; h <= half; h++)
		power[h - 1] *= 2 / ((double)segments * (double)len * (double)len);
	if (len % 2 == 0) /* the Nyquist bin has no mirror */
		power[half - 1] /= 2;
	free(in);
	free(out);
	free(tw);
}

static size_t lower_bound(const double *v, size_t n, double x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static double median3(double a, double b, double c)
{
	return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

static int ascending(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the median of v[0..n), n odd (reorders a copy in w) */
static double median_odd(const double *v, size_t n, double *w)
{
	memcpy(w, v, n * sizeof(*w));
	qsort(w, n, sizeof(*w), ascending);
	return w[n / 2];
}

/* R's runmed(p, width, endrule = "median"), which the report's floor is: the
 * median of the `width` bins centred on each bin where they fit (a sorted
 * window, slid a bin at a time), and at the ends R's smoothEnds, medians of
 * shrinking windows and Tukey's end-point rule. width odd, at most n. */
static void running_median(const double *p, size_t n, size_t width, double *out)
{
	size_t h = width / 2;
	double *w = malloc(width * sizeof(*w));

	if (!w)
		nb_fail(NB_EXIT_FAILURE, "out of memory for a spectrum's floor");
	memcpy(w, p, width * sizeof(*w));
	qsort(w, width, sizeof(*w), ascending);
	for (size_t i = h;; i++) {
		out[i] = w[h];
		if (i + h + 1 >= n)
			break;
		size_t gone = lower_bound(w, width, p[i - h]);

		memmove(w + gone, w + gone + 1, (width - gone - 1) * sizeof(*w));
		size_t at = lower_bound(w, width - 1, p[i + h + 1]);

		memmove(w + at + 1, w + at, (width - 1 - at) * sizeof(*w));
		w[at] = p[i + h + 1];
	}
	for (size_t i = 0; i < h; i++) {
		out[i] = p[i];
		out[n - 1 - i] = p[n - 1 - i];
	}
	if (h >= 1) {
		/* smoothEnds reads the running medians with the ends kept (y) and
		 * writes the smoothed ends (out) */
		double y0 = out[0], y1 = out[1], y2 = out[2], z0 = out[n - 1], z1 = out[n - 2],
		       z2 = out[n - 3];
		double *y = malloc(2 * h * sizeof(*y)), *tail = malloc(2 * h * sizeof(*tail));

		if (!y || !tail)
			nb_fail(NB_EXIT_FAILURE, "out of memory for a spectrum's floor");
		memcpy(y, out, 2 * h * sizeof(*y));
		memcpy(tail, out + n - 2 * h, 2 * h * sizeof(*tail));
		if (h >= 2) {
			out[1] = median3(y0, y1, y2);
			out[n - 2] = median3(z0, z1, z2);
		}
		for (size_t i = 3; i <= h && 2 * i <= n; i++) {
			out[i - 1] = median_odd(y, 2 * i - 1, w);
			out[n - i] = median_odd(tail + 2 * h - (2 * i - 1), 2 * i - 1, w);
		}
		out[0] = median3(y0, out[1], 3 * out[1] - 2 * out[2]);
		out[n - 1] = median3(z0, out[n - 2], 3 * out[n - 2] - 2 * out[n - 3]);
		free(y);
		free(tail);
	}
	free(w);
}

/* The floor a line stands above: the running median of the power, and never
 * below what rounding the counts to integers spreads over the n bins of a
 * transform of 2n samples (white noise of variance 1/12: 2 (1/12) / (2n) a
 * bin), so a line in noiseless data is one line. */
static void spectrum_floor(const double *p, size_t n, double *floor_p)
{
	size_t width = FLOOR_WIDTH < n ? FLOOR_WIDTH : n - (n + 1) % 2;

	running_median(p, n, width, floor_p);
	for (size_t i = 0; i < n; i++)
		floor_p[i] = fmax(floor_p[i], 1 / (6.0 * 2 * (double)n));
}

struct candidate {
	double power;
	size_t bin;
};

/* the strongest first; of equals, the lowest bin */
static int stronger_first(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->power != y->power)
		return x->power < y->power ? 1 : -1;
	return (x->bin > y->bin) - (x->bin < y->bin);
}

/* power[i] of bin i + 1: the local maxima MIN_RATIO times above the floor,
 * strongest first, each line's fragments (those near a stronger one) merged
 * into it, its power summed over their bins and MERGE_BINS either side. */
static void find_lines(const double *power, const double *floor_p, size_t n, double bin_hz,
		       struct nb_spectrum_lines *out)
{
	struct candidate *cand = malloc(n * sizeof(*cand));
	size_t *line_of = malloc(n * sizeof(*line_of)), nc = 0;
	/* the line (from 1) whose power has a bin: each line sums its bins once,
	 * and a bin near two lines counts in both, as in the report */
	uint32_t *counted_in = calloc(n, sizeof(*counted_in));
	size_t kept[NB_SPECTRAL_LINES];

	if (!cand || !line_of || !counted_in)
		nb_fail(NB_EXIT_FAILURE, "out of memory for a spectrum's lines");
	for (size_t i = 0; i < n; i++)
		if ((i == 0 || power[i] >= power[i - 1]) && (i + 1 == n || power[i] > power[i + 1]) &&
		    power[i] > MIN_RATIO * floor_p[i])
			cand[nc++] = (struct candidate){ power[i], i };
	qsort(cand, nc, sizeof(*cand), stronger_first);
	out->n = 0;
	for (size_t c = 0; c < nc; c++) {
		line_of[c] = NB_SPECTRAL_LINES; /* none: beyond the lines kept */
		for (uint32_t k = 0; k < out->n; k++) {
			double bin = (double)kept[k] + 1,
			       reach = fmax(MERGE_BINS, merge_rel * bin);

			if (fabs((double)cand[c].bin - (double)kept[k]) <= reach) {
				line_of[c] = k;
				break;
			}
		}
		if (line_of[c] == NB_SPECTRAL_LINES && out->n < NB_SPECTRAL_LINES) {
			kept[out->n] = cand[c].bin;
			line_of[c] = out->n++;
		}
	}
	for (uint32_t k = 0; k < out->n; k++) {
		double sum = 0;

		for (size_t c = 0; c < nc; c++) {
			if (line_of[c] != k)
				continue;
			size_t b = cand[c].bin, from = b > MERGE_BINS ? b - MERGE_BINS : 0,
			       to = b + MERGE_BINS < n ? b + MERGE_BINS : n - 1;

			for (size_t i = from; i <= to; i++)
				if (counted_in[i] != k + 1) {
					counted_in[i] = k + 1;
					sum += power[i];
				}
		}
		out->line[k] = (struct nb_spectral_line){
			.frequency_hz = (double)(kept[k] + 1) * bin_hz,
			.power = sum,
			.above_floor = power[kept[k]] / floor_p[kept[k]],
		};
	}
	free(cand);
	free(line_of);
	free(counted_in);
}

void nb_spectrum_lines(const uint64_t *x, size_t n, double sampling_hz,
		       struct nb_spectrum_lines *out)
{
	memset(out, 0, sizeof(*out));
	out->resolution_hz = NAN;
	if (n < 16)
		return;
	size_t len = n > SEGMENT_MAX ? SEGMENT_MAX : fft_length(n), half = len / 2;
	double *power = malloc(half * sizeof(*power)), *floor_p = malloc(half * sizeof(*floor_p));

	if (!power || !floor_p)
		nb_fail(NB_EXIT_FAILURE, "out of memory for a spectrum of %zu samples", n);
	out->segment = len;
	out->segments = (uint32_t)(n / len);
	out->resolution_hz = sampling_hz / (double)len;
	periodogram(x, out->segments, len, power);
	spectrum_floor(power, half, floor_p);
	find_lines(power, floor_p, half, out->resolution_hz, out);
	free(power);
	free(floor_p);
}

double nb_spectral_line_share_percent(const struct nb_spectral_line *l, double undisturbed)
{
	return undisturbed > 0 ? 100 * sqrt(l->power / 2) / undisturbed : NAN;
}

/* key: [each line's figure], strongest first */
static void lines_json(struct nb_json *j, const char *key, const struct nb_spectrum_lines *s,
		       double (*figure)(const struct nb_spectral_line *l, double undisturbed),
		       double undisturbed)
{
	nb_json_array(j, key);
	for (uint32_t k = 0; k < s->n; k++)
		nb_json_double(j, NULL, figure(&s->line[k], undisturbed));
	nb_json_end(j, ']');
}

static double frequency(const struct nb_spectral_line *l, double undisturbed)
{
	(void)undisturbed;
	return l->frequency_hz;
}

static double power(const struct nb_spectral_line *l, double undisturbed)
{
	(void)undisturbed;
	return l->power;
}

static double above_floor(const struct nb_spectral_line *l, double undisturbed)
{
	(void)undisturbed;
	return l->above_floor;
}

void nb_spectrum_lines_json(struct nb_json *j, const struct nb_spectrum_lines *s,
			    double undisturbed)
{
	nb_json_object(j, "spectrum");
	nb_json_double(j, "resolution_hz", s->resolution_hz);
	nb_json_uint(j, "segments", s->segments);
	nb_json_uint(j, "segment", s->segment);
	lines_json(j, "frequency_hz", s, frequency, undisturbed);
	lines_json(j, "power", s, power, undisturbed);
	lines_json(j, "above_floor", s, above_floor, undisturbed);
	lines_json(j, "share_percent", s, nb_spectral_line_share_percent, undisturbed);
	nb_json_end(j, '}');
}
