/* bsp: a bulk-synchronous application of known shape, to hold the predicted
 * slowdown at scale (analysis/R/scale.R) against a real one. Each of PHASES
 * phases computes for T (the work calibrated on each participant to take T
 * when undisturbed), then all participants synchronise (a barrier, or an
 * allreduce of one double). A phase lasts as long as its slowest
 * participant's compute, plus the collective.
 *
 * Per participant and phase it records the compute's ticks and the tick the
 * collective returned; the data file has, a line per phase, the compute and
 * the whole phase in ns. The JSON gives the measured slowdown: the mean
 * phase less the collective's undisturbed cost (the fastest of back-to-back
 * collectives before the phases), over the calibrated compute. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "errors.h"
#include "samples.h"
#include "timer.h"

enum { CALIBRATION_SAMPLES = 7, MAX_STEPS = 16, COLLECTIVE_PROBES = 200 };

/* a phase's record: the compute's ticks, then (stored last) the collective's
 * return tick */
struct phase {
	uint64_t work_ticks, end_tick;
};

struct state {
	uint64_t count;          /* work loops per phase */
	double work_ticks;       /* the fastest compute at `count` */
	uint64_t collective_ticks; /* the fastest collective alone */
	uint64_t first;
};

struct result {
	struct nb_participant p;
	uint64_t count;
	double calibrated_us, collective_us, mean_work_us, mean_phase_us, max_phase_us;
};

static struct nb_run *run;
static struct state *states;
static uint64_t phase_us = 1000;
static int allreduce;

enum { OPT_PHASE = NB_OPT_KERNEL, OPT_ALLREDUCE };

static void option(struct nb_run *r, int c, const char *arg)
{
	(void)r;
	if (c == OPT_PHASE)
		phase_us = nb_parse_u64("--phase-us", arg, 1, 60000000);
	else
		allreduce = 1;
}

static void barrier(double *value)
{
	(void)value;
	nb_ranks_barrier(&run->ranks);
}

static void allreduce_sum(double *value)
{
	*value = nb_ranks_allreduce_sum(&run->ranks, *value);
}

/* chosen once, so that the phases hold no branch on an option */
static void (*collective)(double *value) = barrier;

static const char *configure(struct nb_run *r)
{
	run = r;
	collective = allreduce ? allreduce_sum : barrier;
	nb_run_samples_for(r, (double)phase_us / 1e6);
	r->seconds = (double)r->samples * (double)phase_us / 1e6;
	states = calloc(r->ranks.nlocal, sizeof(*states));
	if (!states)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	return NULL;
}

/* The work count whose fastest of a few computes takes T (to 0.5%). */
static void prepare(struct nb_thread *t)
{
	struct state *st = &states[t - run->ranks.local];
	double target = (double)phase_us * 1000.0 * run->cal.ticks_per_ns;
	uint64_t s[CALIBRATION_SAMPLES], first;
	uint64_t count = (uint64_t)fmax(1.0, target / nb_work_ticks_per_loop(run->work, &t->work,
									  run->cal.ticks_per_ns));

	for (int step = 0; step < MAX_STEPS; step++) {
		uint64_t best = UINT64_MAX;

		run->work->fixed_work(&t->work, s, CALIBRATION_SAMPLES, count, &first);
		for (int i = 0; i < CALIBRATION_SAMPLES; i++)
			best = s[i] < best ? s[i] : best;
		st->count = count;
		st->work_ticks = (double)best;
		if (fabs((double)best - target) <= 0.005 * target)
			break;
		count = (uint64_t)fmax(1.0, (double)count * target / (double)best);
	}
}

/* The phases. The collective is the application's: it is what is measured,
 * with the compute before it. */
static void measure(struct nb_thread *t)
{
	struct state *st = &states[t - run->ranks.local];
	struct phase *ph = t->samples;
	const struct nb_work_kind *w = run->work;
	uint64_t best = UINT64_MAX, count = st->count, before;
	double value = 1.0;

	for (int i = 0; i < COLLECTIVE_PROBES; i++) {
		before = nb_ticks();
		collective(&value);
		uint64_t took = nb_ticks() - before;

		best = took < best ? took : best;
	}
	st->collective_ticks = best;
	collective(&value);
	t->start_tick = nb_ticks();
	for (uint64_t i = 0; i < run->samples; i++) {
		w->fixed_work(&t->work, &ph[i].work_ticks, 1, count, &st->first);
		collective(&value);
		ph[i].end_tick = nb_ticks();
	}
}

static void write_phases(struct nb_run *r, int local, size_t n)
{
	struct nb_thread *t = &r->ranks.local[local];
	const struct phase *ph = t->samples;
	FILE *f = nb_run_file(r, local, 0);
	double tpn = r->cal.ticks_per_ns;
	uint64_t prev = t->start_tick;

	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%.0f %.0f\n", (double)ph[i].work_ticks / tpn,
			(double)(ph[i].end_tick - prev) / tpn);
		prev = ph[i].end_tick;
	}
}

static void summarise(struct nb_run *r, int local, size_t n, void *record)
{
	struct nb_thread *t = &r->ranks.local[local];
	struct state *st = &states[local];
	const struct phase *ph = t->samples;
	struct result *res = record;
	double tpn = r->cal.ticks_per_ns, work = 0, phase = 0, longest = 0;
	uint64_t prev = t->start_tick;

	for (size_t i = 0; i < n; i++) {
		double p = (double)(ph[i].end_tick - prev);

		work += (double)ph[i].work_ticks;
		phase += p;
		longest = p > longest ? p : longest;
		prev = ph[i].end_tick;
	}
	res->count = st->count;
	res->calibrated_us = st->work_ticks / tpn / 1e3;
	res->collective_us = (double)st->collective_ticks / tpn / 1e3;
	res->mean_work_us = n ? work / (double)n / tpn / 1e3 : NAN;
	res->mean_phase_us = n ? phase / (double)n / tpn / 1e3 : NAN;
	res->max_phase_us = longest / tpn / 1e3;
}

/* What the phases cost beyond an undisturbed compute and collective. */
static double slowdown(const struct result *r)
{
	return (r->mean_phase_us - r->collective_us) / r->calibrated_us;
}

static void print(const struct nb_run *r, const void *record, FILE *out)
{
	const struct result *x = record;

	(void)r;
	fprintf(out, " phases=%llu calibrated_us=%.3f collective_us=%.3f mean_work_us=%.3f "
		"mean_phase_us=%.3f max_phase_us=%.3f slowdown=%.4f",
		(unsigned long long)x->p.samples, x->calibrated_us, x->collective_us,
		x->mean_work_us, x->mean_phase_us, x->max_phase_us, slowdown(x));
}

/* The mean over the ranks of each one's calibrated compute and slowdown,
 * summed where the ranks are: the root's. */
static double mean_calibrated_us, mean_slowdown;

static void reduce(struct nb_run *r, const void *mine, int nlocal, int signo)
{
	const struct result *x = mine;
	double sums[2] = { 0 }, n = signo ? nlocal : r->ranks.size;

	for (int i = 0; i < nlocal; i++) {
		sums[0] += x[i].calibrated_us;
		sums[1] += slowdown(&x[i]);
	}
	nb_run_sum(r, sums, 2, signo);
	mean_calibrated_us = sums[0] / n;
	mean_slowdown = sums[1] / n;
}

static void print_run(const struct nb_run *r, int n)
{
	printf("bsp summary ranks=%d phases=%llu phase_us=%llu collective=%s slowdown=%.4f\n", n,
	       (unsigned long long)r->samples, (unsigned long long)phase_us,
	       allreduce ? "allreduce" : "barrier", mean_slowdown);
}

static void json_options(const struct nb_run *r, struct nb_json *j)
{
	(void)r;
	nb_json_uint(j, "phase_us", phase_us);
	nb_json_string(j, "collective", allreduce ? "allreduce" : "barrier");
}

static void json_run(const struct nb_run *r, struct nb_json *j, int n)
{
	(void)r;
	(void)n;
	nb_json_double(j, "calibrated_us", mean_calibrated_us);
	nb_json_double(j, "slowdown", mean_slowdown);
}

static void json_rank(const struct nb_run *r, struct nb_json *j, const void *record)
{
	const struct result *x = record;

	(void)r;
	nb_json_uint(j, "count", x->count);
	nb_json_double(j, "calibrated_us", x->calibrated_us);
	nb_json_double(j, "collective_us", x->collective_us);
	nb_json_double(j, "mean_work_us", x->mean_work_us);
	nb_json_double(j, "mean_phase_us", x->mean_phase_us);
	nb_json_double(j, "max_phase_us", x->max_phase_us);
	nb_json_double(j, "slowdown", slowdown(x));
}

static const struct option longopts[] = {
	{ "phase-us", required_argument, NULL, OPT_PHASE },
	{ "allreduce", no_argument, NULL, OPT_ALLREDUCE },
	{ NULL, 0, NULL, 0 },
};

static const char *const suffixes[] = { "phases.dat" };

static const struct nb_kernel bsp = {
	.name = "bsp",
	.usage = "A bulk-synchronous application: PHASES times, compute for T on every\n"
		 "participant, then synchronise them all. Writes PREFIX_<rank>_phases.dat\n"
		 "('compute_ns phase_ns' a line) and PREFIX.json (the measured slowdown).\n"
		 "  -n PHASES            phases (default 1000)\n"
		 "  --phase-us T         compute per phase, calibrated (default 1000)\n"
		 "  --allreduce          an allreduce of one double, not a barrier\n",
	.shortopts = "",
	.longopts = longopts,
	.default_samples = 1000,
	.has_work = 1,
	.value_unit = "us",
	.nfiles = 1,
	.suffixes = suffixes,
	.sample_size = sizeof(struct phase),
	.done_word = offsetof(struct phase, end_tick),
	.option = option,
	.configure = configure,
	.prepare = prepare,
	.measure = measure,
	.json_options = json_options,
	.results = {
		.size = sizeof(struct result),
		.write = write_phases,
		.summarise = summarise,
		.print = print,
		.reduce = reduce,
		.print_run = print_run,
		.json_run = json_run,
		.json_rank = json_rank,
	},
};

int main(int argc, char **argv)
{
	return nb_driver_main(&bsp, argc, argv);
}
