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

#include "driver.h"
#include "kernel_files.h"
#include "errors.h"
#include "samples.h"
#include "selfish.h"
#include "speed.h"
#include "stats.h"
#include "tails.h"

struct options {
	uint64_t detours, threshold_percent;
	double seconds;
	int detours_given;
};

struct result {
	struct nb_participant p;
	struct nb_speed speed;
	struct nb_tails tails; /* each detour beyond the minimal iteration */
	uint64_t min_ticks, iterations, detours, growths;
	double min_ns, ordinary_ns, period_s, overhead_percent, detours_per_s, median_detour_ns;
	double unmeasured_ms; /* the store's growth, between loops */
	int iterations_known, full;
};

struct state {
	uint64_t min_ticks, threshold, iterations;
	double ordinary_ticks; /* an ordinary iteration's cost before the run */
	size_t detours;
	size_t faulted;          /* detours the store has room for, faulted in */
	uint64_t growths, unmeasured_ticks;
	int done, full;
};

/* The detour store grows by this many detours (4 MiB) when it fills. */
enum { GROWTH = 1 << 18 };

static struct options opt = { .detours = 0, .seconds = 60, .threshold_percent = 900 };
static struct nb_run *run;
static struct state *states;

enum { OPT_DETOURS = NB_OPT_KERNEL, OPT_SECONDS, OPT_THRESHOLD };

static void option(struct nb_run *r, int c, const char *arg)
{
	(void)r;
	switch (c) {
	case OPT_DETOURS:
		opt.detours = nb_parse_u64("--detours", arg, 1, (uint64_t)1 << 32);
		opt.detours_given = 1;
		break;
	case OPT_SECONDS:
		opt.seconds = nb_parse_double("--seconds", arg, 0.001, 1e7);
		break;
	case OPT_THRESHOLD:
		opt.threshold_percent = nb_parse_u64("--threshold", arg, 101, 1000000);
		break;
	}
}

/* The store may hold --detours detours; by default as many as half the
 * memory available holds for one rank per CPU (it is faulted in only as it
 * fills). */
static void check(struct nb_run *r)
{
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
	r->seconds = opt.seconds;
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

/* The loop fills the room faulted in; when it is full the store grows, out
 * of the loop, and the loop goes on from a fresh read: the time the growth
 * took is not measured (counted apart, never a detour). It ends at --seconds,
 * or early when --detours are stored (said in the summary and the JSON). */
static void measure(struct nb_thread *t)
{
	struct state *st = &states[t - run->ranks.local];
	struct nb_detour *d = t->samples;
	uint64_t end = run->team.start_tick + (uint64_t)(opt.seconds * 1e9 * run->cal.ticks_per_ns);
	uint64_t last = 0;
	size_t k = 0;

	for (;;) {
		size_t n, room = st->faulted - k;

		st->iterations += nb_selfish_loop(d + k, room, st->threshold, end, &n, &last);
		k += n;
		if (n < room)
			break;
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
	__atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
}

/* The loop counts its iterations in all, not when they ran: the time outside
 * detours over the ordinary iterations' count says how much slower they ran
 * on average than before the run, not when (slow_time_percent unknown). Not
 * against the minimal iteration: a fenced timer read's cost varies, and the
 * ordinary iteration takes twice the fastest on a machine at full speed. */
static void ordinary_speed(struct result *res, double span, const struct nb_detour *d, size_t n,
			   double ordinary_ticks)
{
	struct nb_speed *s = &res->speed;
	double in_detours = 0;

	for (size_t i = 0; i < n; i++)
		in_detours += (double)d[i].length;
	memset(s, 0, sizeof(*s));
	s->total_ticks = span;
	s->detours = n;
	s->detour_ticks = in_detours - (double)n * (double)res->min_ticks;
	s->slow_span_ticks = NAN;
	s->slow_factor = NAN;
	if (!res->iterations_known || res->iterations <= n)
		return;
	double ideal = (double)(res->iterations - n) * ordinary_ticks;

	s->slow_factor = (span - in_detours) / ideal;
	if (s->slow_factor > 1 + NB_SPEED_THRESHOLD)
		s->slow_ticks = span - in_detours - ideal;
}

/* --trace: each detour loses its length beyond the fastest iteration. */
static void attribute(int local, size_t n, struct nb_cause_totals *tot)
{
	const struct nb_detour *d = run->ranks.local[local].samples;
	struct nb_cause_detour *c;
	uint64_t min = states[local].min_ticks;

	if (!run->trace_opt)
		return;
	c = malloc((n ? n : 1) * sizeof(*c));
	if (!c)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (size_t i = 0; i < n; i++)
		c[i] = (struct nb_cause_detour){ d[i].start, d[i].start + d[i].length,
						 (double)(d[i].length - min) };
	nb_run_attribute(run, local, c, n, tot);
	free(c);
}

static void compute(int local, size_t n, struct result *res)
{
	struct nb_thread *t = &run->ranks.local[local];
	struct state *st = &states[local];
	const struct nb_detour *d = t->samples;
	double tpn = run->cal.ticks_per_ns;
	uint64_t stolen = 0, *lengths = malloc((n ? n : 1) * sizeof(*lengths));
	struct nb_stats s;

	if (!lengths)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	memset(res, 0, sizeof(*res));
	res->min_ticks = st->min_ticks;
	res->min_ns = (double)st->min_ticks / tpn;
	res->ordinary_ns = st->ordinary_ticks / tpn;
	res->detours = n;
	nb_run_participant(run, local, n, &res->p);
	attribute(local, n, &res->p.causes);
	res->iterations_known = __atomic_load_n(&st->done, __ATOMIC_ACQUIRE);
	res->iterations = res->iterations_known ? st->iterations : 0;
	/* The run lasted until its last detour when the store filled, else until
	 * the time limit, or until now when interrupted before it; less the time
	 * the store's growth took, which was not measured. */
	uint64_t now = nb_ticks();
	uint64_t limit = run->team.start_tick + (uint64_t)(opt.seconds * 1e9 * tpn);
	res->full = res->iterations_known && st->full;
	uint64_t end = res->full && n ? d[n - 1].start + d[n - 1].length
				      : (now < limit ? now : limit);
	res->growths = st->growths;
	res->unmeasured_ms = (double)st->unmeasured_ticks / tpn / 1e6;
	end -= st->unmeasured_ticks < end - run->team.start_tick ? st->unmeasured_ticks : 0;
	for (size_t i = 0; i < n; i++) {
		stolen += d[i].length - st->min_ticks;
		lengths[i] = d[i].length;
	}
	res->period_s = (double)(end - run->team.start_tick) / tpn / 1e9;
	ordinary_speed(res, (double)(end - run->team.start_tick), d, n, st->ordinary_ticks);
	res->overhead_percent = 100.0 * (double)stolen / (double)(end - run->team.start_tick);
	res->detours_per_s = (double)n / res->period_s;
	nb_stats_compute(lengths, n, &s); /* sorts them */
	nb_tails_sorted(lengths, n, (double)st->min_ticks, 1 / tpn, 0, res->period_s, &res->tails);
	res->median_detour_ns = s.median / tpn;
	free(lengths);
}

static void write_detours(int local, size_t n)
{
	const struct nb_detour *d = run->ranks.local[local].samples;
	FILE *f = nb_run_file(run, local, 0);
	double tpn = run->cal.ticks_per_ns;

	for (size_t i = 0; i < n; i++)
		fprintf(f, "%lld %lld\n", llround((double)(d[i].start - run->team.start_tick) / tpn),
			llround((double)d[i].length / tpn));
}

static void report(const struct result *all, int nranks, int signo)
{
	double min_ns = INFINITY, overhead = 0, period = 0, rate = 0;
	uint64_t iterations = 0, detours = 0;
	int known = 1;
	struct nb_json j;

	printf("# min ticks per iteration per rank:");
	for (int i = 0; i < nranks; i++)
		printf(" %llu", (unsigned long long)all[i].min_ticks);
	printf("\n");
	for (int i = 0; i < nranks; i++) {
		min_ns = fmin(min_ns, all[i].min_ns);
		iterations += all[i].iterations;
		detours += all[i].detours;
		overhead += all[i].overhead_percent / nranks;
		rate += all[i].detours_per_s / nranks;
		period = fmax(period, all[i].period_s);
		known &= all[i].iterations_known;
	}
	printf("# Minimal iteration length [ns]: %.1f\n", min_ns);
	if (known)
		printf("# Number of iterations (recorded+unrecorded): %llu\n",
		       (unsigned long long)iterations);
	printf("# Threshold: [%% minimal iteration length]: %llu\n",
	       (unsigned long long)opt.threshold_percent);
	printf("# CPU overhead due to noise: %.2f%%\n", overhead);
	printf("# Measurement period: %.2f s\n", period);
	for (int i = 0; i < nranks; i++) {
		nb_run_rank_line(run, &all[i].p);
		printf(" min_iteration_ticks=%llu min_iteration_ns=%.1f "
		       "detours=%llu detours_per_s=%.1f median_detour_ns=%.0f "
		       "cpu_overhead_percent=%.4f period_s=%.3f unmeasured_ms=%.3f stopped=%s "
		       "injections=%llu",
		       (unsigned long long)all[i].min_ticks,
		       all[i].min_ns, (unsigned long long)all[i].detours, all[i].detours_per_s,
		       all[i].median_detour_ns, all[i].overhead_percent, all[i].period_s,
		       all[i].unmeasured_ms, all[i].full ? "detours_full" : "seconds",
		       (unsigned long long)all[i].p.injections);
		nb_speed_print(&all[i].speed);
		nb_tails_print(&all[i].tails);
		nb_causes_print(&all[i].p.causes);
		putchar('\n');
	}
	for (int i = 0; i < nranks; i++)
		if (all[i].full)
			nb_warn("rank %d stored --detours %llu detours after %.3f s of the %.3f s asked: "
				"it stopped there (raise --detours)", all[i].p.rank,
				(unsigned long long)opt.detours, all[i].period_s, opt.seconds);
	printf("selfish summary ranks=%d min_iteration_ns=%.1f threshold_percent=%llu detours=%llu "
	       "detours_per_s=%.1f cpu_overhead_percent=%.4f period_s=%.3f\n",
	       nranks, min_ns, (unsigned long long)opt.threshold_percent,
	       (unsigned long long)detours, rate, overhead, period);

	nb_run_json_head(run, &j, signo);
	nb_json_uint(&j, "threshold_percent", opt.threshold_percent);
	nb_json_uint(&j, "max_detours", opt.detours);
	nb_json_double(&j, "max_seconds", opt.seconds);
	nb_json_string(&j, "sample_unit", "start_ns length_ns per detour, from the start");
	nb_json_object(&j, "summary");
	nb_json_int(&j, "ranks", nranks);
	nb_json_double(&j, "min_iteration_ns", min_ns);
	nb_json_uint(&j, "detours", detours);
	nb_json_double(&j, "detours_per_s", rate);
	nb_json_double(&j, "cpu_overhead_percent", overhead);
	nb_json_double(&j, "period_s", period);
	nb_json_end(&j, '}');
	nb_json_array(&j, "ranks");
	for (int i = 0; i < nranks; i++) {
		nb_run_json_participant(run, &j, &all[i].p);
		nb_json_uint(&j, "min_iteration_ticks", all[i].min_ticks);
		nb_json_double(&j, "min_iteration_ns", all[i].min_ns);
		nb_json_double(&j, "ordinary_iteration_ns", all[i].ordinary_ns);
		if (all[i].iterations_known)
			nb_json_uint(&j, "iterations", all[i].iterations);
		else
			nb_json_null(&j, "iterations");
		nb_json_uint(&j, "detours", all[i].detours);
		nb_json_double(&j, "detours_per_s", all[i].detours_per_s);
		nb_json_double(&j, "median_detour_ns", all[i].median_detour_ns);
		nb_json_double(&j, "cpu_overhead_percent", all[i].overhead_percent);
		nb_json_double(&j, "period_s", all[i].period_s);
		nb_json_string(&j, "stopped_by", all[i].full ? "detours" : signo ? "signal" : "seconds");
		nb_json_uint(&j, "store_growths", all[i].growths);
		nb_json_double(&j, "unmeasured_ms", all[i].unmeasured_ms);
		nb_speed_json(&j, &all[i].speed);
		nb_tails_json(&j, &all[i].tails);
		nb_json_end(&j, '}');
	}
	nb_json_end(&j, ']');
	nb_run_json_tail(run, &j, nranks, detours);
}

static void finish(struct nb_run *rr, int signo)
{
	struct nb_ranks *r = &rr->ranks;
	struct result *mine = calloc(r->nlocal, sizeof(*mine)), *all;
	int nranks;

	if (!mine)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the results");
	for (int i = 0; i < r->nlocal; i++) {
		/* interrupted: the detours stored so far, in the part faulted in */
		size_t n = signo ? nb_samples_taken(r->local[i].samples,
						    __atomic_load_n(&states[i].faulted, __ATOMIC_ACQUIRE),
						    sizeof(struct nb_detour),
						    offsetof(struct nb_detour, length))
				 : states[i].detours;

		write_detours(i, n);
		compute(i, n, &mine[i]);
	}
	nb_run_commit_files(rr);
	all = nb_run_collect(rr, mine, sizeof(*mine), signo, &nranks);
	if (r->root)
		report(all, nranks, signo);
	fflush(stdout);
	free(all);
	free(mine);
}

static const struct option longopts[] = {
	{ "detours", required_argument, NULL, OPT_DETOURS },
	{ "seconds", required_argument, NULL, OPT_SECONDS },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ NULL, 0, NULL, 0 },
};

static const char *const suffixes[] = NB_SELFISH_FILES;

static const struct nb_kernel selfish = {
	.name = "selfish",
	.usage = "Selfish detour: record every loop iteration longer than THRESHOLD% of the\n"
		 "minimal one, on every CPU, for SECONDS (the store of detours grows as it fills).\n"
		 "Writes PREFIX_<rank>_detours.dat (start_ns length_ns) and PREFIX.json.\n"
		 "  --seconds S          run for S seconds (default 60)\n"
		 "  --detours N          keep at most N detours a rank, 16 bytes each, and stop\n"
		 "                       early, saying so, when they are full (default: half the\n"
		 "                       memory available over one rank per CPU)\n"
		 "  --threshold PCT      detour threshold, % of the minimal iteration (default 900)\n",
	.shortopts = "",
	.longopts = longopts,
	.nfiles = NB_SELFISH_NFILES,
	.suffixes = suffixes,
	.sample_size = sizeof(struct nb_detour),
	.done_word = offsetof(struct nb_detour, length),
	.grows = 1,
	.option = option,
	.check = check,
	.configure = configure,
	.prepare = prepare,
	.measure = measure,
	.finish = finish,
};

int main(int argc, char **argv)
{
	return nb_driver_main(&selfish, argc, argv);
}
