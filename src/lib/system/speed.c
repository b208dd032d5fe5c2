#include "speed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

/* Zeroed: a compiler that inlines the fills cannot always see them whole. */
static void *allocate(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	return p;
}

static int ascending(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n), which it sorts; NaN when n is 0. */
static double median_sorting(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), ascending);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The run in blocks of a tenth of the window (the fewer samples the
 * better, at least one): returns how many; ends[k] is block k's end (one
 * past its last sample). A short last block joins the one before. */
static size_t blocks_of(size_t n, struct nb_speed_sample (*sample)(const void *, size_t),
			const void *ctx, double block, size_t *ends)
{
	size_t k = 0;
	double t = 0;

	for (size_t i = 0; i < n; i++) {
		t += sample(ctx, i).ticks;
		if (t >= block) {
			ends[k++] = i + 1;
			t = 0;
		}
	}
	if (k == 0 || ends[k - 1] < n) {
		if (k > 0 && t < block / 2)
			ends[k - 1] = n;
		else
			ends[k++] = n;
	}
	return k;
}

/* Each block's usual time: the median of the medians of the
 * NB_USUAL_BLOCKS blocks centred on it (slid in from the ends), a sliding
 * median of the window's length at a tenth of its resolution. NaN where no
 * block in it did any work. */
static void usual_of(const double *median, size_t nblocks, double *usual)
{
	const size_t half = NB_USUAL_BLOCKS / 2;
	double v[NB_USUAL_BLOCKS];

	for (size_t k = 0; k < nblocks; k++) {
		size_t w = nblocks < NB_USUAL_BLOCKS ? nblocks : NB_USUAL_BLOCKS;
		size_t lo = k < half ? 0 : k - half, m = 0;

		if (lo + w > nblocks)
			lo = nblocks - w;
		for (size_t i = lo; i < lo + w; i++)
			if (!isnan(median[i]))
				v[m++] = median[i];
		usual[k] = median_sorting(v, m);
	}
}

/* The median of v[0..n) (n at most 2 * NB_NEIGHBOURS), which it sorts by
 * insertion: cheaper than qsort for so few, and run once a sample. */
static double median_of_few(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	if (n == 0)
		return NAN;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Sample i's NB_NEIGHBOURS nearest samples either side, itself left out,
 * over those that did any work: the median time of a unit of work, and the
 * median distance from it (NaN when none did any). A gap stops the thread
 * inside one sample, so it never moves them; a change of speed lasts over
 * the neighbours, so it moves the median, and a stretch of uneven speed
 * (a busy SMT sibling) widens the distance. */
struct neighbours {
	double median, spread;
};

static struct neighbours neighbours_of(size_t n,
				       struct nb_speed_sample (*sample)(const void *, size_t),
				       const void *ctx, size_t i)
{
	double v[2 * NB_NEIGHBOURS];
	size_t m = 0, lo = i < NB_NEIGHBOURS ? 0 : i - NB_NEIGHBOURS,
	       hi = n - 1 - i < NB_NEIGHBOURS ? n - 1 : i + NB_NEIGHBOURS;

	for (size_t j = lo; j <= hi; j++) {
		if (j == i)
			continue;
		struct nb_speed_sample x = sample(ctx, j);

		if (x.work > 0)
			v[m++] = x.ticks / x.work;
	}
	struct neighbours near = { median_of_few(v, m), NAN };

	for (size_t j = 0; j < m; j++)
		v[j] = fabs(v[j] - near.median);
	near.spread = median_of_few(v, m);
	return near;
}

/* Sample i's excess over its usual time (ticks): the window's usual time u
 * (a unit of work's), or its neighbours' when they ran slower, since a
 * burst of slow work is the work's, not a gap. *usual_here gets the one
 * used, *uneven the least excess its neighbours' spread lets count (three
 * robust sds: under that a gap and their unevenness look alike). */
static double excess_of(size_t n, struct nb_speed_sample (*sample)(const void *, size_t),
			const void *ctx, size_t i, struct nb_speed_sample x, double u,
			double *usual_here, double *uneven)
{
	struct neighbours near = neighbours_of(n, sample, ctx, i);
	double here = isnan(near.median) ? u : fmax(u, near.median);

	*usual_here = here;
	*uneven = isnan(near.spread) ? 0 : NB_RESOLUTION_SDS * NB_SD_PER_MAD * near.spread * x.work;
	return x.ticks - x.work * here;
}

/* A deterministic generator for the bootstrap: the same samples give the
 * same interval. */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

void nb_speed_interval(const double *part, const double *whole, size_t g, double *low,
		       double *high)
{
	*low = *high = NAN;
	if (g < NB_STOLEN_GROUPS_MIN)
		return;
	double *share = allocate(NB_STOLEN_RESAMPLES, sizeof(*share));
	uint64_t state = 0x9e3779b97f4a7c15ULL;

	for (int b = 0; b < NB_STOLEN_RESAMPLES; b++) {
		double p = 0, w = 0;

		for (size_t i = 0; i < g; i++) {
			size_t k = (size_t)(next_random(&state) % g);

			p += part[k];
			w += whole[k];
		}
		share[b] = w > 0 ? 100.0 * p / w : 0;
	}
	qsort(share, NB_STOLEN_RESAMPLES, sizeof(*share), ascending);
	*low = share[(int)(0.025 * NB_STOLEN_RESAMPLES)];
	*high = share[(int)(0.975 * NB_STOLEN_RESAMPLES) - 1];
	free(share);
}

int nb_speed_narrow(double low, double high, double width)
{
	return !isnan(low) && !isnan(high) && high - low <= width;
}

/* The group of time a sample that starts at t (ticks) of a total falls in. */
static size_t group_of(double t, double total, size_t g)
{
	size_t k = total > 0 ? (size_t)(t / total * (double)g) : 0;

	return k < g ? k : g - 1;
}

/* How many groups the interval takes: at most NB_STOLEN_GROUPS, each
 * holding ten samples or more. */
static size_t groups_for(size_t n)
{
	size_t g = n / 10;

	return g < NB_STOLEN_GROUPS ? g : NB_STOLEN_GROUPS;
}

void nb_speed_split(size_t n, struct nb_speed_sample (*sample)(const void *ctx, size_t i),
		    const void *ctx, double ideal, double unit, double ticks_per_ns,
		    struct nb_speed *s)
{
	memset(s, 0, sizeof(*s));
	s->ticks_per_ns = ticks_per_ns;
	s->threshold_ticks = NB_STOLEN_THRESHOLD_NS * ticks_per_ns;
	s->samples = n;
	s->ci_low = s->ci_high = NAN;
	s->resolution_ticks = unit;
	if (n == 0)
		return;
	size_t *ends = allocate(n, sizeof(*ends));
	size_t nblocks = blocks_of(n, sample, ctx, NB_USUAL_WINDOW_NS / NB_USUAL_BLOCKS * ticks_per_ns,
				   ends);
	double *usual = allocate(nblocks, sizeof(*usual)), *spread = allocate(nblocks, sizeof(*spread));
	size_t widest = 0;

	for (size_t k = 0, lo = 0; k < nblocks; lo = ends[k++])
		widest = ends[k] - lo > widest ? ends[k] - lo : widest;
	/* room for a block's samples, and for every block's usual time */
	double *scratch = allocate(widest > nblocks ? widest : nblocks, sizeof(*scratch));

	/* each block's median time of a unit of work, over the samples that
	 * did any (spread holds them a while), then its usual time */
	for (size_t k = 0, lo = 0; k < nblocks; lo = ends[k++]) {
		size_t m = 0;

		for (size_t i = lo; i < ends[k]; i++) {
			struct nb_speed_sample x = sample(ctx, i);

			if (x.work > 0)
				scratch[m++] = x.ticks / x.work;
		}
		spread[k] = median_sorting(scratch, m);
	}
	usual_of(spread, nblocks, usual);
	/* the robust best: a low quantile of the blocks' medians (type 1) */
	size_t known = 0;

	for (size_t k = 0; k < nblocks; k++)
		if (!isnan(usual[k]))
			scratch[known++] = usual[k];
	double best = ideal;

	if (known > 0) {
		qsort(scratch, known, sizeof(*scratch), ascending);
		size_t q = (size_t)ceil(NB_BEST_QUANTILE * (double)known);

		best = scratch[(q ? q : 1) - 1];
	}
	/* each block's typical spread: the median of its samples' distance
	 * from the window's usual time (the neighbours' cost more, and a
	 * median needs them only where bursts are most of a block); the
	 * blocks' median of that, as three robust sds, is the resolution */
	for (size_t k = 0, lo = 0; k < nblocks; lo = ends[k++]) {
		double u = isnan(usual[k]) ? best : usual[k];
		size_t m = 0;

		for (size_t i = lo; i < ends[k]; i++) {
			struct nb_speed_sample x = sample(ctx, i);

			scratch[m++] = fabs(x.ticks - x.work * u);
		}
		spread[k] = median_sorting(scratch, m);
	}
	known = 0;
	for (size_t k = 0; k < nblocks; k++)
		if (!isnan(spread[k]))
			spread[known++] = spread[k];
	double mad = median_sorting(spread, known);

	if (!isnan(mad))
		s->resolution_ticks = fmax(unit, NB_RESOLUTION_SDS * NB_SD_PER_MAD * mad);
	/* a coarse probe cannot tell its own spread from a gap under its
	 * resolution: it counts past that instead, and says so (coarse) */
	double counted = fmax(s->threshold_ticks, s->resolution_ticks);
	size_t g = groups_for(n);
	double *part = allocate(g ? g : 1, sizeof(*part)), *whole = allocate(g ? g : 1, sizeof(*whole));
	double total = 0, at = 0;

	for (size_t i = 0; i < n; i++)
		total += sample(ctx, i).ticks;
	for (size_t k = 0, lo = 0; k < nblocks; lo = ends[k++]) {
		/* a block that did no work at all: it was all taken */
		double u = isnan(usual[k]) ? best : usual[k];

		for (size_t i = lo; i < ends[k]; i++) {
			struct nb_speed_sample x = sample(ctx, i);
			double usual_here, uneven,
			       excess = excess_of(n, sample, ctx, i, x, u, &usual_here, &uneven);

			s->total_ticks += x.ticks;
			s->lost_ticks += x.ticks - x.work * ideal;
			s->slowdown_ticks += x.work * fmax(usual_here - best, 0);
			if (excess > fmax(counted, uneven)) {
				s->stolen_ticks += excess;
				s->stolen_samples++;
				if (g)
					part[group_of(at, total, g)] += excess;
			}
			if (g)
				whole[group_of(at, total, g)] += x.ticks;
			at += x.ticks;
		}
	}
	if (g)
		nb_speed_interval(part, whole, g, &s->ci_low, &s->ci_high);
	free(part);
	free(whole);
	free(scratch);
	free(spread);
	free(usual);
	free(ends);
}

static struct nb_speed_sample fixed_work_sample(const void *ctx, size_t i)
{
	return (struct nb_speed_sample){ (double)((const uint64_t *)ctx)[i], 1 };
}

void nb_speed_fixed_work(const uint64_t *x, size_t n, double ideal, double unit,
			 double ticks_per_ns, struct nb_speed *s)
{
	nb_speed_split(n, fixed_work_sample, x, ideal, unit, ticks_per_ns, s);
}

/* Adds an excess that began at tick t to the groups of time (each span /
 * g long) it lasted into, each its share: a detour longer than a group
 * never makes one group's share above 100%. */
static void spread_over(double *part, size_t g, double span, double t, double excess)
{
	double each = span / (double)g;

	for (size_t k = group_of(t, span, g); excess > 0 && k < g; k++) {
		double here = k == g - 1 ? excess : fmin(excess, fmax((double)(k + 1) * each - t, 0));

		part[k] += here;
		excess -= here;
		t = (double)(k + 1) * each;
	}
}

void nb_speed_detours(const uint64_t *start, const uint64_t *length, size_t stride, size_t n,
		      uint64_t origin, double base, double span, double unit, double ticks_per_ns,
		      struct nb_speed *s)
{
	size_t g = NB_STOLEN_GROUPS;
	double part[NB_STOLEN_GROUPS] = { 0 }, whole[NB_STOLEN_GROUPS];

	memset(s, 0, sizeof(*s));
	s->ticks_per_ns = ticks_per_ns;
	s->threshold_ticks = NB_STOLEN_THRESHOLD_NS * ticks_per_ns;
	s->resolution_ticks = unit;
	s->total_ticks = span;
	s->samples = n;
	for (size_t i = 0; i < n; i++) {
		double excess = (double)length[i * stride] - base;

		s->lost_ticks += excess;
		if (excess > s->threshold_ticks) {
			s->stolen_ticks += excess;
			s->stolen_samples++;
			spread_over(part, g, span, (double)(start[i * stride] - origin) + base, excess);
		}
	}
	/* the groups are of equal time: the span cut in g */
	for (size_t k = 0; k < g; k++)
		whole[k] = span / (double)g;
	s->ci_low = s->ci_high = NAN;
	if (span > 0)
		nb_speed_interval(part, whole, g, &s->ci_low, &s->ci_high);
}

double nb_speed_percent(const struct nb_speed *s, double part)
{
	return s->total_ticks > 0 ? 100.0 * part / s->total_ticks : NAN;
}

double nb_speed_variation(const struct nb_speed *s)
{
	return s->lost_ticks - s->stolen_ticks - s->slowdown_ticks;
}

static int coarse(const struct nb_speed *s)
{
	return s->resolution_ticks > s->threshold_ticks;
}

/* Each part printed to the precision the whole is, so that the printed
 * parts add up to the printed whole within the last digit's rounding. */
void nb_speed_print(const struct nb_speed *s, FILE *out)
{
	fprintf(out,
		" stolen_percent=%.4f stolen_ci95_low=%.4f stolen_ci95_high=%.4f stolen_events=%llu"
		" slowdown_percent=%.4f variation_percent=%.4f lost_percent=%.4f"
		" resolution_us=%.3f threshold_us=%.3f coarse=%d",
		nb_speed_percent(s, s->stolen_ticks), s->ci_low, s->ci_high,
		(unsigned long long)s->stolen_samples, nb_speed_percent(s, s->slowdown_ticks),
		nb_speed_percent(s, nb_speed_variation(s)), nb_speed_percent(s, s->lost_ticks),
		s->resolution_ticks / s->ticks_per_ns / 1e3, s->threshold_ticks / s->ticks_per_ns / 1e3,
		coarse(s));
}

void nb_speed_json(struct nb_json *j, const struct nb_speed *s)
{
	nb_json_double(j, "stolen_percent", nb_speed_percent(s, s->stolen_ticks));
	nb_json_double(j, "stolen_ci95_low", s->ci_low);
	nb_json_double(j, "stolen_ci95_high", s->ci_high);
	nb_json_uint(j, "stolen_events", s->stolen_samples);
	nb_json_double(j, "slowdown_percent", nb_speed_percent(s, s->slowdown_ticks));
	nb_json_double(j, "variation_percent", nb_speed_percent(s, nb_speed_variation(s)));
	nb_json_double(j, "lost_percent", nb_speed_percent(s, s->lost_ticks));
	nb_json_double(j, "resolution_us", s->resolution_ticks / s->ticks_per_ns / 1e3);
	nb_json_double(j, "threshold_us", s->threshold_ticks / s->ticks_per_ns / 1e3);
	nb_json_bool(j, "coarse", coarse(s));
}
