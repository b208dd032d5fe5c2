/* The selfish detour benchmark (Netgauge's default noise pattern): on every
 * CPU, a tight loop reads the timer; an iteration longer than THRESHOLD% of
 * the minimal iteration (900% by default) is a detour, recorded with its
 * start and length. Runs until --detours detours or --seconds have passed.
 * Writes PREFIX_<rank>_detours.dat ("start_ns length_ns" per line, from the
 * start of the run: the trace format LogGOPSim reads) and PREFIX.json. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "kernel_files.h"
#include "report.h"
#include "samples.h"
#include "selfish.h"
#include "speed.h"
#include "stats.h"
#include "tails.h"

struct options {
	uint64_t detours, threshold_percent;
	double seconds;
};

struct result {
	struct nb_participant p;
	struct nb_speed speed;
	struct nb_tails tails; /* each detour beyond the minimal iteration */
	uint64_t min_ticks, iterations, detours;
	double min_ns, ordinary_ns, period_s, overhead_percent, detours_per_s, median_detour_ns;
	int iterations_known;
};

struct state {
	uint64_t min_ticks, threshold, iterations;
	double ordinary_ticks; /* an ordinary iteration's cost before the run */
	size_t detours;
	int done;
};

static struct options opt = { .detours = 10000, .seconds = 60, .threshold_percent = 900 };
static struct nb_run *run;
static struct state *states;

enum { OPT_DETOURS = NB_OPT_KERNEL, OPT_SECONDS, OPT_THRESHOLD };

static void option(struct nb_run *r, int c, const char *arg)
{
	(void)r;
	switch (c) {
	case OPT_DETOURS:
		opt.detours = nb_parse_u64("--detours", arg, 1, (uint64_t)1 << 32);
		break;
	case OPT_SECONDS:
		opt.seconds = nb_parse_double("--seconds", arg, 0.001, 1e7);
		break;
	case OPT_THRESHOLD:
		opt.threshold_percent = nb_parse_u64("--threshold", arg, 101, 1000000);
		break;
	}
}

/* The buffer holds --detours detours. */
static void check(struct nb_run *r)
{
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
}

static void measure(struct nb_thread *t)
{
	struct state *st = &states[t - run->ranks.local];
	uint64_t end = run->team.start_tick + (uint64_t)(opt.seconds * 1e9 * run->cal.ticks_per_ns);

	st->iterations = nb_selfish_loop(t->samples, opt.detours, st->threshold, end, &st->detours);
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
	/* The run lasted until its last detour when the buffer filled, else until
	 * the time limit, or until now when interrupted before it. */
	uint64_t now = nb_ticks();
	uint64_t limit = run->team.start_tick + (uint64_t)(opt.seconds * 1e9 * tpn);
	uint64_t end = res->iterations_known && n == opt.detours ? d[n - 1].start + d[n - 1].length
								 : (now < limit ? now : limit);
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
		printf("selfish rank=%d host=%s cpu=%d min_iteration_ticks=%llu min_iteration_ns=%.1f "
		       "detours=%llu detours_per_s=%.1f median_detour_ns=%.0f "
		       "cpu_overhead_percent=%.4f period_s=%.3f injections=%llu",
		       all[i].p.rank, all[i].p.host, all[i].p.cpu, (unsigned long long)all[i].min_ticks,
		       all[i].min_ns, (unsigned long long)all[i].detours, all[i].detours_per_s,
		       all[i].median_detour_ns, all[i].overhead_percent, all[i].period_s,
		       (unsigned long long)all[i].p.injections);
		nb_speed_print(&all[i].speed);
		nb_tails_print(&all[i].tails);
		nb_causes_print(&all[i].p.causes);
		putchar('\n');
	}
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
		size_t n = signo ? nb_run_taken(rr, i, signo) : states[i].detours;

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
		 "minimal one, on every CPU, until DETOURS are recorded or SECONDS have passed.\n"
		 "Writes PREFIX_<rank>_detours.dat (start_ns length_ns) and PREFIX.json.\n"
		 "  --detours N          stop after N detours per rank (default 10000)\n"
		 "  --seconds S          stop after S seconds (default 60)\n"
		 "  --threshold PCT      detour threshold, % of the minimal iteration (default 900)\n",
	.shortopts = "",
	.longopts = longopts,
	.nfiles = NB_SELFISH_NFILES,
	.suffixes = suffixes,
	.sample_size = sizeof(struct nb_detour),
	.done_word = offsetof(struct nb_detour, length),
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
