/* The selfish detour benchmark (Netgauge's default noise pattern): on every
 * CPU, a tight loop reads the timer; an iteration longer than THRESHOLD% of
 * the minimal iteration (900% by default) is a detour, recorded with its
 * start and length. Runs for --seconds, its detour store growing as it
 * fills (at most --detours a rank).
 * Writes PREFIX_<rank>_detours.dat ("start_ns length_ns" per line, from the
 * start of the run: the trace format LogGOPSim reads) and PREFIX.json. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel.h"
#include "kernel_files.h"
#include "errors.h"
#include "samples.h"
#include "selfish.h"
#include "speed.h"
#include "stats.h"
#include "tails.h"
#include "timer.h"

struct options {
	uint64_t detours, threshold_percent;
	int detours_given;
	int until_detours; /* --detours without --seconds: Netgauge's end */
};

struct result {
	struct nb_participant p;
	struct nb_speed speed;
	uint64_t min_ticks, iterations, detours, growths;
	double min_ns, ordinary_ns, period_s, overhead_percent, detours_per_s, median_detour_ns;
	double unmeasured_ms; /* the store's growth, between loops */
	int iterations_known, full, narrow;
};

struct state {
	uint64_t min_ticks, threshold, iterations;
	double ordinary_ticks; /* an ordinary iteration's cost before the run */
	size_t detours;
	size_t faulted;          /* detours the store has room for, faulted in */
	uint64_t growths, unmeasured_ticks;
	uint64_t last_read; /* the loop's last timer read: where the run ended */
	int done, full;
	int narrow; /* --until-ci: it stopped at a narrow interval */
};

/* The detour store grows by this many detours (4 MiB) when it fills. */
enum { GROWTH = 1 << 18 };

static struct options opt = { .detours = 0, .threshold_percent = 900 };
static struct nb_run *run;
static struct state *states;

enum { OPT_DETOURS = NB_OPT_KERNEL, OPT_THRESHOLD };

static void option(struct nb_run *r, int c, const char *arg)
{
	(void)r;
	switch (c) {
	case OPT_DETOURS:
		opt.detours = nb_parse_u64("--detours", arg, 1, (uint64_t)1 << 32);
		opt.detours_given = 1;
		break;
	case OPT_THRESHOLD:
		opt.threshold_percent = nb_parse_u64("--threshold", arg, 101, 1000000);
		break;
	}
}

/* Netgauge's selfish runs until it recorded a given number of detours: so
 * does --detours N without --seconds, for at most this long. */
#define UNTIL_DETOURS_MAX_S 3600.0

/* The store may hold --detours detours; by default as many as half the
 * memory available holds for one rank per CPU (it is faulted in only as it
 * fills). */
static void check(struct nb_run *r)
{
	if (opt.detours_given && !r->seconds_given) {
		opt.until_detours = 1;
		r->seconds_opt = UNTIL_DETOURS_MAX_S;
	}
	if (!opt.detours_given) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		uint64_t room = nb_memory_available() / 2 / (uint64_t)(cpus > 0 ? cpus : 1) /
				sizeof(struct nb_detour);

		opt.detours = room < GROWTH ? GROWTH : room > ((uint64_t)1 << 32) ? (uint64_t)1 << 32
											 : room;
	}
	r->samples = opt.detours;
}

static const char *configure(struct nb_run *r)
{
	run = r;
	r->seconds = r->seconds_opt;
	states = calloc(r->ranks.nlocal, sizeof(*states));
	if (!states)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	return NULL;
}

static void prepare(struct nb_thread *t)
{
	struct state *st = &states[t - run->ranks.local];

	/* Netgauge's calibration: the fastest iteration of a long run. */
	st->min_ticks = nb_selfish_min_iteration(10000000);
	st->threshold = st->min_ticks * opt.threshold_percent / 100;
	st->ordinary_ticks = nb_selfish_ordinary_iteration(1000000, st->threshold);
	st->faulted = opt.detours < GROWTH ? opt.detours : GROWTH;
	nb_samples_fault(t->samples, 0, st->faulted, sizeof(struct nb_detour));
}

/* --until-ci: after NB_UNTIL_CI_MIN_S, and then every CHECK_S or
 * CHECK_SHARE of the run so far, whichever is longer, the loop stops,
 * between two chunks, to see whether the k detours so far make the interval
 * narrow enough (over the run so far, the checks' own time left out as the
 * growths' is). A check reads every detour so far: spaced in proportion to
 * the run, the checks cost a fixed share of it however long it runs. */
#define CHECK_S 0.25
#define CHECK_SHARE 0.05

static int narrow_so_far(const struct state *st, const struct nb_detour *d, size_t k,
			 uint64_t start, uint64_t last)
{
	struct nb_speed s;
	double span = (double)(last - start) - (double)st->unmeasured_ticks;

	/* the interval only: the resolution (1 tick) is not read */
	nb_speed_detours(&d[0].start, &d[0].length, sizeof(*d) / sizeof(uint64_t), k, start,
			 (double)st->min_ticks, span, 1, run->cal.ticks_per_ns, &s);
	return nb_speed_narrow(s.ci_low, s.ci_high, run->until_ci);
}

/* The loop fills the room faulted in; when it is full the store grows, out
 * of the loop, and the loop goes on from a fresh read: the time the growth
 * took is not measured (counted apart, never a detour). It ends at --seconds,
 * or early when --detours are stored (said in the summary and the JSON), or
 * with --until-ci when the interval is narrow enough. */
static void measure(struct nb_thread *t)
{
	struct state *st = &states[t - run->ranks.local];
	struct nb_detour *d = t->samples;
	uint64_t start = nb_run_start_tick(run);
	double tpn = run->cal.ticks_per_ns;
	uint64_t end = start + (uint64_t)(run->seconds_opt * 1e9 * tpn);
	uint64_t check = run->until_ci > 0 ? start + (uint64_t)(NB_UNTIL_CI_MIN_S * 1e9 * tpn) : end;
	uint64_t last = 0;
	size_t k = 0;

	for (;;) {
		size_t n, room = st->faulted - k;
		uint64_t until = check < end ? check : end;

		st->iterations += nb_selfish_loop(d + k, room, st->threshold, until, &n, &last);
		k += n;
		if (n < room) {
			if (last >= end)
				break;
			/* a check of the interval, not measured */
			uint64_t paused = last;

			if (narrow_so_far(st, d, k, start, last)) {
				st->narrow = 1;
				break;
			}
			check = last + (uint64_t)fmax(CHECK_S * 1e9 * tpn,
						      CHECK_SHARE * (double)(last - start));
			last = nb_ticks_unfenced();
			st->unmeasured_ticks += last - paused;
			continue;
		}
		if (k == opt.detours) {
			st->full = 1;
			break;
		}
		uint64_t paused = nb_ticks();
		size_t more = opt.detours - k < GROWTH ? opt.detours - k : GROWTH;

		nb_samples_fault(d, st->faulted, more, sizeof(*d));
		__atomic_store_n(&st->faulted, st->faulted + more, __ATOMIC_RELEASE);
		last = nb_ticks_unfenced();
		st->unmeasured_ticks += last - paused;
		st->growths++;
	}
	st->detours = k;
	st->last_read = last;
	__atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
}

/* The stolen time: each detour's length beyond the minimal iteration, past
 * the one threshold (speed.h); the loop resolves the longer of an ordinary
 * iteration and what --threshold leaves unrecorded. The loop counts its
 * iterations in all, not when they ran: the time outside detours over the
 * ordinary iterations' count says how much slower they ran on average
 * than before the run (the slowdown). Not against the minimal iteration: a
 * fenced timer read's cost varies, and the ordinary iteration takes twice
 * the fastest on a machine at full speed. */
static void ordinary_speed(struct result *res, const struct state *st, uint64_t start,
			   double span, const struct nb_detour *d, size_t n, double tpn)
{
	struct nb_speed *s = &res->speed;
	double in_detours = 0,
	       unit = fmax(st->ordinary_ticks, (double)(st->threshold - res->min_ticks));

	nb_speed_detours(&d[0].start, &d[0].length, sizeof(*d) / sizeof(uint64_t), n, start,
			 (double)res->min_ticks, span, unit, tpn, s);
	for (size_t i = 0; i < n; i++)
		in_detours += (double)d[i].length;
	if (!res->iterations_known || res->iterations <= n)
		return;
	double ideal = (double)(res->iterations - n) * st->ordinary_ticks;
	/* beyond the ordinary iterations' time: the loop ran slower than
	 * before the run (none when it ran faster) */
	double beyond = fmax(span - in_detours - ideal, 0);

	s->slowdown_ticks = beyond;
	s->lost_ticks += beyond;
}

/* Interrupted: the detours stored so far, in the part faulted in. */
static size_t taken(struct nb_run *r, int local, int signo)
{
	if (!signo)
		return states[local].detours;
	return nb_samples_taken(r->ranks.local[local].samples,
				__atomic_load_n(&states[local].faulted, __ATOMIC_ACQUIRE),
				sizeof(struct nb_detour), offsetof(struct nb_detour, length));
}

/* --trace: each detour loses its length beyond the fastest iteration. */
static size_t detours(struct nb_run *r, int local, size_t n, struct nb_cause_detour **out)
{
	const struct nb_detour *d = r->ranks.local[local].samples;
	uint64_t min = states[local].min_ticks;
	struct nb_cause_detour *c = malloc((n ? n : 1) * sizeof(*c));

	if (!c)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (size_t i = 0; i < n; i++)
		c[i] = (struct nb_cause_detour){ d[i].start, d[i].start + d[i].length,
						 (double)(d[i].length - min) };
	*out = c;
	return n;
}

static void summarise(struct nb_run *r, int local, size_t n, void *record)
{
	struct state *st = &states[local];
	const struct nb_detour *d = r->ranks.local[local].samples;
	struct result *res = record;
	double tpn = r->cal.ticks_per_ns;
	uint64_t start = nb_run_start_tick(r);
	uint64_t stolen = 0, *lengths = malloc((n ? n : 1) * sizeof(*lengths));
	struct nb_stats s;

	if (!lengths)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	res->min_ticks = st->min_ticks;
	res->min_ns = (double)st->min_ticks / tpn;
	res->ordinary_ns = st->ordinary_ticks / tpn;
	res->detours = n;
	res->iterations_known = __atomic_load_n(&st->done, __ATOMIC_ACQUIRE);
	res->iterations = res->iterations_known ? st->iterations : 0;
	/* The run lasted until the loop's last read (its last detour's end when
	 * the store filled; else the end of the chunk that passed the time limit,
	 * far past it where the CPU is shared and a detour spans the limit), or
	 * until now when interrupted before it: every detour stored ended by
	 * then, so they never add up to more than the run. Less the time the
	 * store's growth took, which was not measured. */
	res->full = res->iterations_known && st->full;
	res->narrow = res->iterations_known && st->narrow;
	uint64_t end = res->iterations_known ? st->last_read : nb_ticks();
	res->growths = st->growths;
	res->unmeasured_ms = (double)st->unmeasured_ticks / tpn / 1e6;
	end -= st->unmeasured_ticks < end - start ? st->unmeasured_ticks : 0;
	/* a detour in the stretch it began in, with the time it took beyond
	 * an ordinary iteration (ns) */
	nb_stretches_init(&res->p.stretches, r->measured_s);
	for (size_t i = 0; i < n; i++) {
		stolen += d[i].length - st->min_ticks;
		lengths[i] = d[i].length;
		nb_stretches_add(&res->p.stretches, (double)(d[i].start - start) / tpn / 1e9,
				 (double)(d[i].length - st->min_ticks) / tpn);
	}
	res->period_s = (double)(end - start) / tpn / 1e9;
	ordinary_speed(res, st, start, (double)(end - start), d, n, tpn);
	res->overhead_percent = 100.0 * (double)stolen / (double)(end - start);
	res->detours_per_s = (double)n / res->period_s;
	nb_stats_compute(lengths, n, &s); /* sorts them */
	/* each detour beyond the minimal iteration */
	nb_tails_sorted(lengths, n, (double)st->min_ticks, 1 / tpn, 0, res->period_s,
			&res->p.tails);
	nb_tails_rescale(&res->p.tails, 1 / tpn); /* its files hold ns */
	res->median_detour_ns = s.median / tpn;
	free(lengths);
}

static void write_detours(struct nb_run *r, int local, size_t n)
{
	const struct nb_detour *d = r->ranks.local[local].samples;
	FILE *f = nb_run_file(r, local, 0);
	double tpn = r->cal.ticks_per_ns;
	uint64_t start = nb_run_start_tick(r);

	for (size_t i = 0; i < n; i++)
		fprintf(f, "%lld %lld\n", llround((double)(d[i].start - start) / tpn),
			llround((double)d[i].length / tpn));
}

/* Netgauge's summary: over the ranks, the run's figures, the root's. */
struct summary {
	double min_ns, overhead, period, rate;
	uint64_t iterations, detours;
	int known;
};

static struct summary run_summary;
/* Netgauge's head names each rank's shortest iteration: the root's copy, by
 * rank (8 bytes a rank, the one figure the root holds per rank). */
/* Netgauge's head line: every rank's minimal iteration, or with node files
 * (a line a rank no more) the smallest and largest of them */
static uint64_t *min_ticks;
static double min_ticks_range[2];

/* Sums, minima and maxima where the ranks are; each rank warns of its own
 * full store. */
static void reduce(struct nb_run *r, const void *mine, int nlocal, int signo)
{
	const struct result *x = mine;
	/* the largest of: -min_ns, period, -known, -min_ticks, min_ticks */
	double sums[2] = { 0 }, max[5] = { -INFINITY, 0, -1, -INFINITY, -INFINITY }, n;
	uint64_t counts[2] = { 0 }, *local;
	struct summary *s = &run_summary;
	int nranks;

	local = calloc(nlocal, sizeof(*local));
	if (!local)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (int i = 0; i < nlocal; i++) {
		if (x[i].full && !opt.until_detours)
			nb_warn("rank %d stored --detours %llu detours after %.3f s of the %.3f s "
				"asked: it stopped there (raise --detours)", x[i].p.rank,
				(unsigned long long)opt.detours, x[i].period_s, r->seconds_opt);
		max[0] = fmax(max[0], -x[i].min_ns);
		max[1] = fmax(max[1], x[i].period_s);
		max[2] = fmax(max[2], -(double)x[i].iterations_known);
		counts[0] += x[i].iterations;
		counts[1] += x[i].detours;
		sums[0] += x[i].overhead_percent;
		sums[1] += x[i].detours_per_s;
		max[3] = fmax(max[3], -(double)x[i].min_ticks);
		max[4] = fmax(max[4], (double)x[i].min_ticks);
		local[i] = x[i].min_ticks;
	}
	nb_run_sum(r, sums, 2, signo);
	nb_run_max(r, max, 5, signo);
	nb_run_sum_u64(r, counts, 2, signo);
	if (nb_run_node_files(r) && !signo)
		nranks = r->ranks.size;
	else
		min_ticks = nb_run_gather(r, local, sizeof(*local), signo, &nranks);
	free(local);
	min_ticks_range[0] = -max[3];
	min_ticks_range[1] = max[4];
	n = nranks;
	*s = (struct summary){ .min_ns = -max[0], .period = max[1], .known = max[2] < -0.5,
			       .iterations = counts[0], .detours = counts[1],
			       .overhead = sums[0] / n, .rate = sums[1] / n };
}

/* Netgauge's lines first, worded and formatted as Netgauge prints them, so
 * that its users' scripts read them: its "clock cycles" are its timer's
 * ticks, as ours are; a "cycle" is one iteration of the loop. */
static void print_head(const struct nb_run *r, int nranks)
{
	const struct summary *s = &run_summary;

	(void)r;
	if (min_ticks) {
		printf("# min clock cycles per rank:");
		for (int i = 0; i < nranks; i++)
			printf(" %llu", (unsigned long long)min_ticks[i]);
		printf(" \n");
	} else {
		printf("# min clock cycles per rank: %.0f to %.0f over the %d ranks (each rank's: "
		       "its node file's min_iteration_ticks)\n", min_ticks_range[0],
		       min_ticks_range[1], nranks);
	}
	printf("# Minimal cycle length [ns]: %f \n", s->min_ns);
	if (s->known)
		printf("# Number of iterations (recorded+unrecorded): %llu \n",
		       (unsigned long long)s->iterations);
	printf("# Threshold: [%% minimal cycle length]: %llu \n",
	       (unsigned long long)opt.threshold_percent);
	printf("# CPU overhead due to noise: %.2f%%\n", s->overhead);
	printf("# Measurement period: %.2f s\n", s->period);
}

static void print(const struct nb_run *r, const void *record, FILE *out)
{
	const struct result *x = record;

	(void)r;
	fprintf(out, " min_iteration_ticks=%llu min_iteration_ns=%.1f detours=%llu "
		"detours_per_s=%.1f median_detour_ns=%.0f cpu_overhead_percent=%.4f "
		"period_s=%.3f unmeasured_ms=%.3f stopped=%s",
		(unsigned long long)x->min_ticks, x->min_ns, (unsigned long long)x->detours,
		x->detours_per_s, x->median_detour_ns, x->overhead_percent, x->period_s,
		x->unmeasured_ms, x->full ? "detours_full" : x->narrow ? "interval" : "seconds");
	nb_speed_print(&x->speed, out);
}

static void print_run(const struct nb_run *r, int nranks)
{
	const struct summary *s = &run_summary;

	(void)r;
	printf("selfish summary ranks=%d min_iteration_ns=%.1f threshold_percent=%llu detours=%llu "
	       "detours_per_s=%.1f cpu_overhead_percent=%.4f period_s=%.3f\n",
	       nranks, s->min_ns, (unsigned long long)opt.threshold_percent,
	       (unsigned long long)s->detours, s->rate, s->overhead, s->period);
}

static void json_options(const struct nb_run *r, struct nb_json *j)
{
	nb_json_uint(j, "threshold_percent", opt.threshold_percent);
	nb_json_uint(j, "max_detours", opt.detours);
	nb_json_double(j, "max_seconds", r->seconds_opt);
	nb_json_double(j, "until_ci", r->until_ci);
	nb_json_string(j, "sample_unit", "start_ns length_ns per detour, from the start");
}

static void json_run(const struct nb_run *r, struct nb_json *j, int nranks)
{
	const struct summary *s = &run_summary;

	(void)r;
	nb_json_object(j, "summary");
	nb_json_int(j, "ranks", nranks);
	nb_json_double(j, "min_iteration_ns", s->min_ns);
	nb_json_uint(j, "detours", s->detours);
	nb_json_double(j, "detours_per_s", s->rate);
	nb_json_double(j, "cpu_overhead_percent", s->overhead);
	nb_json_double(j, "period_s", s->period);
	nb_json_end(j, '}');
}

static void json_rank(const struct nb_run *r, struct nb_json *j, const void *record)
{
	const struct result *x = record;

	nb_json_uint(j, "min_iteration_ticks", x->min_ticks);
	nb_json_double(j, "min_iteration_ns", x->min_ns);
	nb_json_double(j, "ordinary_iteration_ns", x->ordinary_ns);
	if (x->iterations_known)
		nb_json_uint(j, "iterations", x->iterations);
	else
		nb_json_null(j, "iterations");
	nb_json_uint(j, "detours", x->detours);
	nb_json_double(j, "detours_per_s", x->detours_per_s);
	nb_json_double(j, "median_detour_ns", x->median_detour_ns);
	nb_json_double(j, "cpu_overhead_percent", x->overhead_percent);
	nb_json_double(j, "period_s", x->period_s);
	nb_json_string(j, "stopped_by", x->full	      ? "detours"
					: x->narrow   ? "interval"
					: nb_run_signal(r) ? "signal"
							   : "seconds");
	nb_json_uint(j, "store_growths", x->growths);
	nb_json_double(j, "unmeasured_ms", x->unmeasured_ms);
	nb_speed_json(j, &x->speed);
}

static const struct option longopts[] = {
	{ "detours", required_argument, NULL, OPT_DETOURS },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ NULL, 0, NULL, 0 },
};

static const char *const suffixes[] = NB_SELFISH_FILES;

static const struct nb_kernel selfish = {
	.name = "selfish",
	.usage = "Selfish detour: record every loop iteration longer than THRESHOLD% of the\n"
		 "minimal one, on every CPU, for SECONDS (the store of detours grows as it fills).\n"
		 "Writes PREFIX_<rank>_detours.dat (start_ns length_ns) and PREFIX.json.\n"
		 "  --detours N          keep at most N detours a rank, 16 bytes each. Without\n"
		 "                       --seconds, run until each rank has N (Netgauge's end;\n"
		 "                       an hour at most); with it, stop early, saying so, when\n"
		 "                       they are full (default: half the memory available over\n"
		 "                       one rank per CPU)\n"
		 "  --threshold PCT      detour threshold, % of the minimal iteration (default 900)\n",
	.shortopts = "",
	.longopts = longopts,
	.nfiles = NB_SELFISH_NFILES,
	.suffixes = suffixes,
	.sample_size = sizeof(struct nb_detour),
	.done_word = offsetof(struct nb_detour, length),
	.grows = 1,
	.stops_at_ci = 1,
	.default_seconds = 60,
	.value_unit = NB_SELFISH_VALUE_UNIT,
	.option = option,
	.check = check,
	.configure = configure,
	.prepare = prepare,
	.measure = measure,
	.json_options = json_options,
	.results = {
		.size = sizeof(struct result),
		.taken = taken,
		.write = write_detours,
		.detours = detours,
		.summarise = summarise,
		.reduce = reduce,
		.print_head = print_head,
		.print = print,
		.print_run = print_run,
		.json_run = json_run,
		.json_rank = json_rank,
	},
};

int main(int argc, char **argv)
{
	return nb_driver_main(&selfish, argc, argv);
}
