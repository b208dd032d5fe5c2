/* Unit tests of the measurement library: known inputs, known answers. */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuset.h"
#include "figures.h"
#include "json.h"
#include "outfile.h"
#include "samples.h"
#include "spectrum.h"
#include "speed.h"
#include "stats.h"
#include "stream.h"
#include "stretches.h"
#include "tails.h"
#include "work.h"

#include "check.h"

static void test_stats_known_values(void)
{
	uint64_t v[] = { 9, 2, 5, 4, 12, 7, 8, 11, 9, 3, 7, 4, 12, 5, 4, 10, 9, 6, 9, 4 };
	size_t n = sizeof(v) / sizeof(v[0]);
	struct nb_stats s;

	nb_stats_compute(v, n, &s);
	CHECK(s.n == 20);
	NEAR(s.min, 2, 0);
	NEAR(s.max, 12, 0);
	NEAR(s.mean, 7.0, 1e-12);
	NEAR(s.median, 7.0, 1e-12);   /* sorted: ... 6 7 | 7 8 ... */
	NEAR(s.mode, 4, 0);           /* 4 and 9 occur 4 times: the smaller wins */
	NEAR(s.variance, 178.0 / 19.0, 1e-12);
	NEAR(s.std, sqrt(178.0 / 19.0), 1e-12);
	NEAR(s.ci95_high - s.mean, 2.093 * sqrt(178.0 / 19.0) / sqrt(20.0), 1e-9);
	CHECK(v[0] == 2 && v[19] == 12); /* sorted in place */
}

static void test_stats_large_ticks(void)
{
	/* A sample of 2^42 ticks (half an hour) must keep differences of one
	 * tick: the mean and median to the double's own precision there
	 * (2^-10), the variance exactly, which summing the squares of the raw
	 * values in doubles would not give. */
	uint64_t base = (uint64_t)1 << 42;
	uint64_t v[4] = { base + 3, base + 1, base + 2, base + 2 };
	struct nb_stats s;

	nb_stats_compute(v, 4, &s);
	NEAR(s.mean - (double)base, 2.0, 0x1p-10);
	NEAR(s.variance, 2.0 / 3.0, 1e-9);
	NEAR(s.median - (double)base, 2.0, 0x1p-10);
}

static void test_stats_edge_cases(void)
{
	struct nb_stats s;
	uint64_t one = 42;

	nb_stats_compute(NULL, 0, &s);
	CHECK(s.n == 0 && isnan(s.mean));
	nb_stats_compute(&one, 1, &s);
	CHECK(s.mean == 42 && s.std == 0 && s.ci95_low == 42 && s.mode == 42);
	CHECK(isnan(s.kurtosis) && isnan(s.skewness)); /* a constant has no tail */

	/* 0 0 0 1: m2 = 3/16, m3 = 3/32, m4 = 21/256 */
	uint64_t tail[] = { 7, 7, 8, 7 };

	nb_stats_compute(tail, 4, &s);
	NEAR(s.kurtosis, (21.0 / 256) / (9.0 / 256), 1e-12);
	NEAR(s.skewness, (3.0 / 32) / pow(3.0 / 16, 1.5), 1e-12);
	NEAR(nb_t95(1), 12.706, 1e-9);
	NEAR(nb_t95(100000), 1.96, 1e-9);
}

static void test_sort(void)
{
	enum { N = 100003 };
	uint64_t *v = malloc(N * sizeof(*v));
	uint64_t x = 88172645463325252ull, sum = 0, sorted_sum = 0;
	int ordered = 1;

	/* random values, many duplicates, then already sorted, then reversed */
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < N; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v[i] = pass == 0 ? x % 1000 : pass == 1 ? i : N - i;
			sum += v[i];
		}
		nb_sort_u64(v, N);
		for (size_t i = 0; i < N; i++) {
			sorted_sum += v[i];
			ordered &= i == 0 || v[i - 1] <= v[i];
		}
	}
	CHECK(ordered);
	CHECK(sum == sorted_sum);
	free(v);
}

static void test_cpu_lists(void)
{
	int cpus[16];
	const char *bad;
	char buf[64];

	CHECK(nb_cpu_list_parse("0-3,6,8-9", cpus, 16, &bad) == 7);
	CHECK(cpus[0] == 0 && cpus[3] == 3 && cpus[4] == 6 && cpus[6] == 9);
	nb_cpu_list_format(cpus, 7, buf, sizeof(buf));
	CHECK(strcmp(buf, "0-3,6,8,9") == 0);
	CHECK(nb_cpu_list_parse("1,x", cpus, 16, &bad) == -1 && *bad == 'x');
	CHECK(nb_cpu_list_parse("3-1", cpus, 16, &bad) == -1);
	CHECK(nb_cpu_list_parse("", cpus, 16, &bad) == -1);
	CHECK(nb_cpu_list_parse("0-20", cpus, 16, &bad) == -1); /* more than fit */
}

static void test_samples_taken(void)
{
	enum { N = 1000 };
	struct nb_quantum_sample *s = nb_samples_alloc(N, sizeof(*s));

	CHECK(nb_samples_taken(s, N, sizeof(*s), 8) == 0);
	for (int i = 0; i < 537; i++) {
		s[i].count = 0; /* a fully stolen quantum still counts as taken */
		s[i].tick = 1000 + i;
	}
	CHECK(nb_samples_taken(s, N, sizeof(*s), 8) == 537);
	for (int i = 537; i < N; i++)
		s[i].tick = 5;
	CHECK(nb_samples_taken(s, N, sizeof(*s), 8) == N);
	CHECK(nb_samples_taken(NULL, N, sizeof(*s), 8) == 0);
	nb_samples_free(s, N, sizeof(*s));
}

static void test_json_escaping(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct nb_json j;

	nb_json_open(&j, f);
	nb_json_object(&j, NULL);
	nb_json_string(&j, "s", "a\"b\\c\nd\x01");
	nb_json_double(&j, "nan", NAN);
	nb_json_array(&j, "empty");
	nb_json_end(&j, ']');
	nb_json_end(&j, '}');
	fclose(f);
	CHECK(strstr(text, "\"s\": \"a\\\"b\\\\c\\nd\\u0001\"") != NULL);
	CHECK(strstr(text, "\"nan\": null") != NULL);
	CHECK(strstr(text, "\"empty\": []") != NULL);
	free(text);
}

/* An object as a table's row: its scalars named by their paths, an array's
 * elements by their place from 1, strings as quoted CSV fields */
static void test_json_row(void)
{
	struct nb_json_row row = { 0 };
	struct nb_json j;
	static const char *const names[] = { "rank", "host", "stats.min", "n.1", "n.2",
					     "r.1.1", "r.1.2", "nan", "ok" };
	static const char *const cells[] = { "3", "\"a\"\"b\"", "0.5", "7", "8", "1", "2", "",
					     "true" };
	const uint64_t range[2] = { 1, 2 };

	nb_json_open_row(&j, &row);
	nb_json_object(&j, NULL);
	nb_json_int(&j, "rank", 3);
	nb_json_string(&j, "host", "a\"b");
	nb_json_object(&j, "stats");
	nb_json_double(&j, "min", 0.5);
	nb_json_end(&j, '}');
	nb_json_array(&j, "n");
	nb_json_uint(&j, NULL, 7);
	nb_json_uint(&j, NULL, 8);
	nb_json_end(&j, ']');
	nb_json_array(&j, "r");
	nb_json_range(&j, NULL, range);
	nb_json_end(&j, ']');
	nb_json_double(&j, "nan", NAN);
	nb_json_bool(&j, "ok", 1);
	nb_json_end(&j, '}');
	CHECK(row.n == sizeof(names) / sizeof(*names));
	for (size_t i = 0; i < row.n && i < sizeof(names) / sizeof(*names); i++) {
		CHECK(strcmp(row.names[i], names[i]) == 0);
		CHECK(strcmp(row.cells[i], cells[i]) == 0);
	}
	nb_json_row_free(&row);
}

/* Samples of 1000 ticks at 1 tick a ns (a 10 ms window: 10,000 samples): a detour of 500 in sample 50 (under the 1 us threshold: the
 * loop's own variation) and of 3000 in sample 60 (stolen), and the second
 * block at 1.5 times the cost (a slowdown, not stolen). */
static void test_speed_split(void)
{
	enum { N = 30000 };
	static uint64_t x[N];
	struct nb_speed s;

	for (int i = 0; i < N; i++)
		x[i] = i >= 10000 && i < 20000 ? 1500 : 1000;
	x[50] += 500;
	x[60] += 3000;
	x[15000] += 2000;
	nb_speed_fixed_work(x, N, 1000, 30, 1.0, &s);
	NEAR(s.total_ticks, (double)N * 1000 + 10000 * 500 + 5500, 0);
	CHECK(s.stolen_samples == 2);
	NEAR(s.stolen_ticks, 5000, 0);          /* each beyond its usual time */
	/* the slow stretch against the best, to within a block (1 ms, 1000
	 * samples) at each of its edges: the median's resolution */
	NEAR(s.slowdown_ticks, 10000 * 500, 1000 * 500);
	NEAR(s.lost_ticks, 10000 * 500 + 5500, 0);
	/* the detour under the threshold, and those few edge samples */
	NEAR(nb_speed_variation(&s), 500 + 10000 * 500 - s.slowdown_ticks, 1e-6);
	NEAR(s.resolution_ticks, 30, 0);        /* no spread: the unit */
	CHECK(s.resolution_ticks < s.threshold_ticks);
	/* the stolen share's interval holds it */
	double stolen = nb_speed_percent(&s, s.stolen_ticks);

	CHECK(s.ci_low <= stolen && stolen <= s.ci_high);

	/* a slowdown of any size is the work's: no cliff */
	for (int i = 0; i < N; i++)
		x[i] = i < 20000 ? 1000 : 1040;
	nb_speed_fixed_work(x, N, 1000, 30, 1.0, &s);
	CHECK(s.stolen_samples == 0);
	NEAR(s.slowdown_ticks, 10000 * 40, 1000 * 40);
	NEAR(nb_speed_variation(&s), 10000 * 40 - s.slowdown_ticks, 1e-6);
	nb_speed_fixed_work(x, 3, 1000, 30, 1.0, &s); /* fewer samples than a block */
	NEAR(s.total_ticks, 3 * 1000, 0);
	CHECK(isnan(s.ci_low)); /* too few to say */

	/* a burst of slow work shorter than a block is the work's, as its
	 * neighbours say; a lone sample as slow is a gap */
	for (int i = 0; i < N; i++)
		x[i] = i >= 5000 && i < 5020 ? 2500 : 1000;
	x[7000] = 2500;
	nb_speed_fixed_work(x, N, 1000, 30, 1.0, &s);
	CHECK(s.stolen_samples == 1);
	NEAR(s.stolen_ticks, 1500, 0);
	/* the burst's edges: each against half its neighbours at its speed */
	NEAR(s.slowdown_ticks, 20 * 1500, 2 * 1500);

	/* a spread wider than the threshold: the probe says it is coarse,
	 * and counts only past its resolution (its spread is no gap) */
	for (int i = 0; i < N; i++)
		x[i] = 1000 + (uint64_t)(i % 2) * 1800;
	x[7001] += 20000;
	nb_speed_fixed_work(x, N, 1000, 30, 1.0, &s);
	CHECK(s.resolution_ticks > s.threshold_ticks);
	CHECK(s.stolen_samples == 1);
	CHECK(s.stolen_ticks >= 20000 && s.stolen_ticks <= 20000 + 1800);

	/* detours recorded alone: past the threshold beyond the base */
	uint64_t d[3][2] = { { 100, 900 }, { 5000, 4100 }, { 9000, 1050 } };

	nb_speed_detours(&d[0][0], &d[0][1], 2, 3, 0, 50, 1e6, 40, 1.0, &s);
	NEAR(s.stolen_ticks, 4050, 0);
	CHECK(s.stolen_samples == 1);
	NEAR(s.lost_ticks, 850 + 4050 + 1000, 0);
	/* a detour longer than a group of time fills the groups it spans:
	 * no group's share beyond 100% */
	uint64_t e[1][2] = { { 1000, 600050 } };

	nb_speed_detours(&e[0][0], &e[0][1], 2, 1, 0, 50, 1e6, 40, 1.0, &s);
	NEAR(s.stolen_ticks, 600000, 0);
	CHECK(s.ci_high <= 100 && s.ci_low >= 0);
	CHECK(s.ci_low <= 60 && 60 <= s.ci_high);
}

/* A file is committed by a rename onto its name: never onto a device's. */
static void test_outfile_refuses_a_device(void)
{
	struct stat before, after;

	CHECK(stat("/dev/null", &before) == 0 && S_ISCHR(before.st_mode));
	errno = 0;
	CHECK(nb_outfile_open("/dev/null") == NULL && errno == ENOTSUP);
	CHECK(stat("/dev/null", &after) == 0 && S_ISCHR(after.st_mode));
}

/* The loss histogram's edges: a bucket holds [edge k-1, edge k) */
static void test_loss_histogram(void)
{
	/* losses of 0, 99, 100, 150, 200, 1e6 and 2e10 ns above a base of 1000 */
	uint64_t v[] = { 1000, 1099, 1100, 1150, 1200, 1001000, 20000001000 };
	struct nb_tails t, falling;
	struct nb_loss_histogram sum = { 0 };

	nb_tails_sorted(v, 7, 1000, 1, 0, 1, &t);
	CHECK(t.measured);
	CHECK(t.histogram.samples[0] == 2 && t.histogram.samples[1] == 2);
	CHECK(t.histogram.samples[2] == 1 && t.histogram.samples[13] == 1);
	CHECK(t.histogram.samples[NB_LOSS_BUCKETS - 1] == 1); /* 10 s and beyond */
	NEAR(t.histogram.lost_ns[0], 99, 1e-9);
	NEAR(t.histogram.lost_ns[1], 250, 1e-9);
	NEAR(t.histogram.lost_ns[13], 1e6, 1e-9);
	/* falling (FTQ's counts): the loss grows as the value falls below the base */
	nb_tails_sorted(v, 7, 1200, 2, 1, 1, &falling);
	CHECK(falling.histogram.samples[0] == 3); /* at or above the base: 0 lost */
	CHECK(falling.histogram.samples[1] == 1); /* 1150: 50 units, 100 ns */
	CHECK(falling.histogram.samples[2] == 3); /* 1100, 1099, 1000: 200, 202, 400 ns */
	NEAR(falling.histogram.lost_ns[2], 802, 1e-9);
	nb_loss_histogram_add(&sum, &t.histogram);
	nb_loss_histogram_add(&sum, &t.histogram);
	CHECK(sum.samples[1] == 4 && sum.lost_ns[1] == 500);
}

static void test_stretches(void)
{
	struct nb_stretches s;

	nb_stretches_init(&s, 1.0); /* 100 stretches of 10 ms */
	NEAR(s.width_s, 0.01, 1e-15);
	nb_stretches_add(&s, 0, 1);      /* the start belongs to the first */
	nb_stretches_add(&s, 0.01, 2);   /* an end on an edge: the stretch it closes */
	nb_stretches_add(&s, 0.0101, 4); /* just past it: the next */
	nb_stretches_add(&s, 0.995, 8);
	nb_stretches_add(&s, 7, 16);     /* later than the run: the last */
	CHECK(s.n[0] == 2 && s.sum[0] == 3);
	CHECK(s.n[1] == 1 && s.sum[1] == 4);
	CHECK(s.n[99] == 2 && s.sum[99] == 24);
	nb_stretches_init(&s, 0); /* no run measured: all in one, and no width */
	nb_stretches_add(&s, 3, 1);
	CHECK(s.width_s == 0 && s.n[0] == 1);
}

static const struct nb_spectral_line *line_at(const struct nb_spectrum_lines *s, double hz)
{
	for (uint32_t k = 0; k < s->n; k++)
		if (fabs(s->line[k].frequency_hz - hz) <= s->resolution_hz / 2)
			return &s->line[k];
	return NULL;
}

static void test_spectrum_comb(void)
{
	/* FTQ at 10 kHz, 1000 counts a quantum, and half a quantum taken every
	 * 10th: a detour of 5% of each 1 ms period. Its impulse train has lines
	 * of amplitude 2 x 5% x 1000 = 100 at every multiple of 1 kHz, each
	 * carrying a variance of 100^2 / 2, but the Nyquist one half that: share
	 * 5% at each, nothing else in the spectrum. */
	enum { N = 20000 };
	uint64_t *x = malloc(N * sizeof(*x));
	struct nb_spectrum_lines s;

	for (size_t i = 0; i < N; i++)
		x[i] = i % 10 == 3 ? 500 : 1000;
	nb_spectrum_lines(x, N, 1e4, &s);
	CHECK(s.segments == 1 && s.segment == N);
	NEAR(s.resolution_hz, 0.5, 1e-12);
	CHECK(s.n == 5);
	for (int k = 1; k <= 5; k++) {
		const struct nb_spectral_line *l = line_at(&s, 1000.0 * k);

		CHECK(l != NULL);
		if (!l)
			continue;
		NEAR(l->power, k < 5 ? 5000 : 2500, 1e-6);
		CHECK(l->above_floor > 1e6);
		if (k < 5)
			NEAR(nb_spectral_line_share_percent(l, 1000), 5, 1e-9);
	}
	/* fewer than 16 samples: no spectrum */
	nb_spectrum_lines(x, 15, 1e4, &s);
	CHECK(s.n == 0 && isnan(s.resolution_hz));
	free(x);
}

static void test_spectrum_between_bins(void)
{
	/* A sinusoid of amplitude 20 at 123.4 Hz, between two bins of the
	 * 7 kHz grid, over counts of 700 jittering by a few (a fixed
	 * generator), over 300,000 quanta: Bartlett's average of two
	 * periodograms of 2^17. The line is found at its bin, its power
	 * (20^2 / 2) summed over the bins it leaks into, less what leaks
	 * further than 3 bins (a few percent). Rounding the sinusoid to
	 * integers leaves faint lines of its own, a ten-thousandth of it. */
	enum { N = 300000 };
	uint64_t *x = malloc(N * sizeof(*x)), seed = 12345;
	struct nb_spectrum_lines s;

	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		x[i] = (uint64_t)llround(700 + 20 * sin(6.283185307179586 * 123.4 * (double)i / 7e3) +
					 (double)(seed >> 62));
	}
	nb_spectrum_lines(x, N, 7e3, &s);
	CHECK(s.segments == 2 && s.segment == 131072);
	CHECK(s.n >= 1);
	for (uint32_t k = 1; k < s.n; k++)
		CHECK(s.line[k].power < 1e-4 * s.line[0].power);
	NEAR(s.line[0].frequency_hz, 123.4, s.resolution_hz / 2);
	CHECK(s.line[0].power > 0.9 * 200 && s.line[0].power <= 200);
	free(x);
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4200];

	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* The stream tests': FWQ samples of 1 ms at 1 tick a ns (chunks of 10),
 * K = 2 and a sample either side of each, its files in the directory made
 * from the mkdtemp template `dir`. Returns 0, or -1 with nothing to free. */
static const struct nb_stream_opts unit_stream_opts = { .on = 1, .checkpoint_s = 60, .top = 2,
							 .context_s = 0.001 };

static int unit_stream(struct nb_stream *s, char *dir)
{
	memset(s, 0, sizeof(*s));
	if (!mkdtemp(dir)) {
		CHECK(!"a temporary directory");
		return -1;
	}
	nb_stream_init(s, &unit_stream_opts, NB_STREAM_FIXED_WORK, 1e6, 1.0);
	snprintf(s->path, sizeof(s->path), "%s/u_0_", dir);
	s->kernel = "fwq";
	s->work = "multiiter";
	s->loops = 1;
	s->start_tick = 1000;
	return 0;
}

/* Chunks [from, to) of 1 ms FWQ samples of 1,000,000 ticks (1 tick a ns),
 * one of them `loss` ticks longer at `at` (its index in the run), as the
 * measuring thread leaves them; *tick: where the next sample begins. */
static void fill_chunks(struct nb_stream *s, uint64_t from, uint64_t to, uint64_t at,
			uint64_t loss, uint64_t *tick)
{
	uint64_t m = s->chunk_samples, *ring = s->ring;

	for (uint64_t seq = from; seq < to; seq++) {
		s->chunks[seq].first_tick = *tick;
		for (uint64_t i = 0; i < m; i++) {
			ring[seq * m + i] = 1000000 + (seq * m + i == at ? loss : 0);
			*tick += ring[seq * m + i];
		}
		s->chunks[seq].seq = seq + 1;
	}
	s->done = to;
}

/* The writer's checkpoint at the end of a run, as often as asked: each
 * start and finish of the writer is one. */
static void stream_checkpoint(struct nb_stream *s)
{
	struct nb_stream **all = malloc(sizeof(*all));
	double writer_ms;

	if (!all) {
		CHECK(!"memory for the writer's streams");
		return;
	}
	if (s->seconds_file)
		fclose(s->seconds_file);
	s->seconds_file = NULL;
	all[0] = s;
	nb_stream_writer_finish(nb_stream_writer_start(all, 1, &unit_stream_opts, NULL, 0), 1,
				&writer_ms);
}

/* A stream's reference is the best sample of its first second as the
 * sample is folded in: with FWQ, the ticks between two chunks join the
 * next chunk's first sample. Two chunks of 1 ms samples (1 tick a ns) of
 * 1,000,100 ticks, but chunk 1's first of 1,000,000 after a gap of 50:
 * folded, it is 1,000,050, the run's least, and the reference. */
static void test_stream_reference_as_folded(void)
{
	struct nb_stream s;
	char dir[] = "/tmp/nb-unit-stream-XXXXXX";

	if (unit_stream(&s, dir) != 0)
		return;
	uint64_t m = s.chunk_samples, tick = s.start_tick, *ring = s.ring;

	CHECK(m == 10);
	for (uint64_t seq = 0; seq < 2; seq++) {
		tick += seq ? 50 : 0;
		s.chunks[seq].first_tick = tick;
		for (uint64_t i = 0; i < m; i++) {
			ring[seq * m + i] = seq == 1 && i == 0 ? 1000000 : 1000100;
			tick += ring[seq * m + i];
		}
		s.chunks[seq].seq = seq + 1;
	}
	s.done = 2;
	stream_checkpoint(&s);
	CHECK(s.samples == 2 * m && s.lost == 0);
	CHECK(s.min == 1000050);
	CHECK(s.reference == s.min);
	CHECK(s.last_tick == tick);
	remove_dir(dir);
	nb_stream_free(&s);
}

/* The bytes [offset, offset + bytes) of a rank's events file. */
static int events_range_is(const char *dir, unsigned gen, const struct nb_stream_event *e,
			   uint64_t value)
{
	char path[4200], text[256], want[64];
	FILE *f;
	size_t got;

	snprintf(path, sizeof(path), "%s/u_0_events_%u.dat", dir, gen);
	if (!(f = fopen(path, "r")) || e->bytes >= sizeof(text) ||
	    fseek(f, (long)e->offset, SEEK_SET) != 0) {
		if (f)
			fclose(f);
		return 0;
	}
	got = fread(text, 1, e->bytes, f);
	fclose(f);
	text[got] = 0;
	/* its 3 samples: the event's own in the middle */
	snprintf(want, sizeof(want), "\n%llu ", (unsigned long long)value);
	return got == e->bytes && strstr(text, want) && text[got - 1] == '\n';
}

static const struct nb_stream_event *event_of(const struct nb_stream *s, uint64_t index)
{
	for (int i = 0; i < s->top; i++)
		if (s->events[i].loss != 0 && s->events[i].index == index)
			return &s->events[i];
	return NULL;
}

/* A rank's longest losses share one events file: a new one's samples are
 * appended, and once more than half the file is losses since dropped, the
 * kept ones go into the next generation's file and the last is removed.
 * K = 2, a sample either side of each: losses of 100 and 200 ticks, then
 * 300 (the 100 dropped: half the file, appended), then 400 (the 200
 * dropped too: two thirds, a new file). */
static void test_stream_events_one_file(void)
{
	struct nb_stream s;
	char dir[] = "/tmp/nb-unit-events-XXXXXX", path[4200];
	const struct nb_stream_event *a, *b, *c, *d;

	if (unit_stream(&s, dir) != 0)
		return;
	uint64_t tick = s.start_tick;

	CHECK(s.chunk_samples == 10 && s.context_samples == 1);

	fill_chunks(&s, 0, 1, 5, 100, &tick);
	fill_chunks(&s, 1, 2, 15, 200, &tick);
	stream_checkpoint(&s);
	a = event_of(&s, 5);
	b = event_of(&s, 15);
	CHECK(a && b && s.events_gen == 0);
	CHECK(a && b && a->offset + a->bytes == b->offset);
	CHECK(a && b && s.events_file_bytes == a->bytes + b->bytes);
	CHECK(a && events_range_is(dir, 0, a, 1000100));
	CHECK(b && events_range_is(dir, 0, b, 1000200));

	uint64_t first_bytes = s.events_file_bytes;

	fill_chunks(&s, 2, 4, 25, 300, &tick);
	stream_checkpoint(&s);
	b = event_of(&s, 15);
	c = event_of(&s, 25);
	CHECK(!event_of(&s, 5) && b && c && s.events_gen == 0);
	CHECK(c && c->offset == first_bytes);
	CHECK(c && s.events_file_bytes == first_bytes + c->bytes);
	CHECK(b && events_range_is(dir, 0, b, 1000200));
	CHECK(c && events_range_is(dir, 0, c, 1000300));

	fill_chunks(&s, 4, 6, 45, 400, &tick);
	stream_checkpoint(&s);
	c = event_of(&s, 25);
	d = event_of(&s, 45);
	CHECK(!event_of(&s, 15) && c && d && s.events_gen == 1);
	CHECK(c && d && s.events_file_bytes == c->bytes + d->bytes);
	CHECK(c && events_range_is(dir, 1, c, 1000300));
	CHECK(d && events_range_is(dir, 1, d, 1000400));
	snprintf(path, sizeof(path), "%s/u_0_events_0.dat", dir);
	CHECK(access(path, F_OK) != 0);
	remove_dir(dir);
	nb_stream_free(&s);
}

static const struct nb_figure *figure(const struct nb_figures *fs, const char *key)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->f[i].key, key))
			return &fs->f[i];
	return NULL;
}

/* Two nodes' lines reduced apart and merged, as the root does: numbers by
 * their smallest, mean and largest as printed, lists by name, words the
 * first node's first line's; the prefix left out. */
static void test_figures_of_lines(void)
{
	static const char *const skip[] = { "rank", "host", NULL };
	struct nb_figures a = { 0 }, b = { 0 };
	const struct nb_figure *f;
	char *text = NULL;
	size_t size = 0;
	FILE *out;

	nb_figures_add_line(&a, "rank rank=0 host=n1 x=2.50 ci=1.0:2.0 causes=irq:3.1%,timer:0.4% "
				"top=irq:eth0 v=nan\n", skip);
	nb_figures_add_line(&a, "rank rank=1 host=n1 x=10.00 causes=timer:7.0% top=timer:hr v=1",
			    skip);
	nb_figures_add_line(&b, "rank rank=2 host=n2 x=-1 y=5 top=softirq:net", skip);
	nb_figures_merge(&a, b.f, b.n, b.lines);
	CHECK(a.lines == 3 && !figure(&a, "rank") && !figure(&a, "host"));
	f = figure(&a, "x");
	CHECK(f && f->count == 3 && !strcmp(f->min_text, "-1") && !strcmp(f->max_text, "10.00"));
	NEAR(f->sum, 11.5, 1e-12);
	f = figure(&a, "causes_timer");
	CHECK(f && f->count == 2 && !strcmp(f->max_text, "7.0") && !strcmp(f->min_text, "0.4"));
	f = figure(&a, "causes_irq");
	CHECK(f && f->count == 1 && f->max == 3.1);
	CHECK(figure(&a, "ci")->is_word && !strcmp(figure(&a, "ci")->first, "1.0:2.0"));
	CHECK(!strcmp(figure(&a, "top")->first, "irq:eth0") && figure(&a, "top")->count == 3);
	f = figure(&a, "v"); /* not finite: left out of the number */
	CHECK(f && f->count == 1 && f->max == 1);
	CHECK(!strcmp(a.f[0].key, "x") && !strcmp(a.f[a.n - 1].key, "y"));
	out = open_memstream(&text, &size);
	nb_figures_print(&a, out);
	fclose(out);
	CHECK(strstr(text, " x_min=-1 x_avg=3.83333 x_max=10.00 ") == text);
	CHECK(strstr(text, " causes_timer_min=0.4 causes_timer_avg=3.7 causes_timer_max=7.0 "));
	CHECK(strstr(text, " top_first=irq:eth0 "));
	free(text);
	nb_figures_free(&a);
	nb_figures_free(&b);
}

int main(void)
{
	test_stats_known_values();
	test_stats_large_ticks();
	test_speed_split();
	test_outfile_refuses_a_device();
	test_stats_edge_cases();
	test_sort();
	test_cpu_lists();
	test_samples_taken();
	test_json_escaping();
	test_json_row();
	test_loss_histogram();
	test_stretches();
	test_spectrum_comb();
	test_spectrum_between_bins();
	test_stream_reference_as_folded();
	test_stream_events_one_file();
	test_figures_of_lines();
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
