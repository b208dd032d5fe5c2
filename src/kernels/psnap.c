/* P-SNAP: a spin loop calibrated to take the granularity (1 ms by default),
 * repeated REPS times on one participant per CPU; the time of every
 * iteration is kept. Prints P-SNAP's calibration lines and per-rank
 * histograms (with each rank's correlation with rank 0), and the PRACE
 * summary: calibration time, mean run time, its standard deviation across
 * ranks, and the OS noise in %.
 *
 * The spin loop is FWQ's measured loop with the multiiter work, its work
 * amount (the count) calibrated per participant. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "kernel_files.h"
#include "quantum.h"
#include "errors.h"
#include "samples.h"
#include "speed.h"
#include "tails.h"
#include "work.h"

enum { MAX_STEPS = 24, MAX_BINS = 8192, CALIBRATION_SAMPLES = 5 };
/* Up to this many ranks stdout has each rank's histogram, as P-SNAP printed
 * it; beyond, the histogram of all ranks together, summed where the ranks
 * are: rank 0 never holds a histogram per rank of a large run (32 KiB each). */
enum { HISTOGRAMS_PER_RANK_MAX = 64 };

struct options {
	uint64_t warmup_reps, count, granularity_us, bucket_us;
	int warmup_given;
};

/* What each participant sends the root: fixed size, so it gathers as bytes. */
struct result {
	struct nb_participant p;
	struct nb_speed speed;
	struct nb_tails tails; /* each iteration's time beyond the ideal */
	uint64_t count;
	double calibrated_us, ideal_us, total_us, min_us, mean_us, max_us, std_us, correlation;
	uint32_t nsteps;
	uint64_t step_count[MAX_STEPS];
	double step_us[MAX_STEPS];
};

/* Iterations by time: nbins buckets of bucket_us, and those beyond. */
struct histogram {
	uint64_t overflow;
	uint64_t bins[MAX_BINS];
};

/* Per participant, beside its nb_thread. */
struct state {
	uint64_t count;
	double calibrated_us; /* the fastest iteration at `count` before the run */
	uint32_t nsteps;
	uint64_t step_count[MAX_STEPS];
	double step_us[MAX_STEPS];
};

static struct options opt = { .granularity_us = 1000, .bucket_us = 1 };
static struct nb_run *run;
static struct state *states;
static double bucket_us; /* the histogram's, after widening to fit MAX_BINS */
static int nbins;

enum { OPT_BUCKET = NB_OPT_KERNEL };

static void option(struct nb_run *r, int c, const char *arg)
{
	(void)r;
	switch (c) {
	case 'w':
		opt.warmup_reps = nb_parse_u64("-w", arg, 0, (uint64_t)1 << 36);
		opt.warmup_given = 1;
		break;
	case 'c':
		opt.count = nb_parse_u64("-c", arg, 1, (uint64_t)1 << 40);
		break;
	case 'g':
		opt.granularity_us = nb_parse_u64("-g", arg, 1, 60000000);
		break;
	case OPT_BUCKET:
		opt.bucket_us = nb_parse_u64("--bucket-us", arg, 1, 60000000);
		break;
	}
}

/* P-SNAP warms up for a tenth of the run; a stream, which may run for
 * days, for a second. */
static uint64_t default_warmup_reps(const struct nb_run *r)
{
	return r->stream.on ? (uint64_t)ceil(1e6 / (double)opt.granularity_us) : r->samples / 10;
}

static void check(struct nb_run *r)
{
	if (r->samples > (uint64_t)1 << 36)
		nb_fail(NB_EXIT_USAGE, "-n %llu: at most 2^36 repetitions",
			(unsigned long long)r->samples);
	if (!opt.warmup_given)
		opt.warmup_reps = default_warmup_reps(r);
	bucket_us = (double)opt.bucket_us;
	if (4.0 * opt.granularity_us / bucket_us > MAX_BINS)
		bucket_us = ceil(4.0 * opt.granularity_us / MAX_BINS);
	nbins = (int)ceil(4.0 * opt.granularity_us / bucket_us);
}

static const char *configure(struct nb_run *r)
{
	run = r;
	nb_run_samples_for(r, (double)opt.granularity_us / 1e6);
	if (!opt.warmup_given)
		opt.warmup_reps = default_warmup_reps(r);
	r->sample_ticks = (double)opt.granularity_us * 1000.0 * r->cal.ticks_per_ns;
	r->seconds = r->stream.on ? r->stream.seconds
				  : (double)r->samples * (double)opt.granularity_us / 1e6;
	states = calloc(r->ranks.nlocal, sizeof(*states));
	if (!states)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	return NULL;
}

static double ticks_to_us(double ticks)
{
	return ticks / run->cal.ticks_per_ns / 1000.0;
}

/* P-SNAP's calibration: adjust the count until the fastest of a few
 * iterations takes the granularity (to 0.1%), recording each step. */
static void calibrate_count(struct nb_thread *t, struct state *st)
{
	uint64_t s[CALIBRATION_SAMPLES], first;
	double target = (double)opt.granularity_us * 1000.0 * run->cal.ticks_per_ns;
	uint64_t count = opt.count;

	if (!count) {
		double per_loop = nb_work_ticks_per_loop(run->work, &t->work, run->cal.ticks_per_ns);

		count = (uint64_t)fmax(1.0, target / per_loop);
	}
	for (st->nsteps = 0; st->nsteps < MAX_STEPS;) {
		uint64_t best = UINT64_MAX;

		run->work->fwq(&t->work, s, CALIBRATION_SAMPLES, count, &first);
		for (int i = 0; i < CALIBRATION_SAMPLES; i++)
			best = s[i] < best ? s[i] : best;
		st->step_count[st->nsteps] = count;
		st->step_us[st->nsteps++] = ticks_to_us((double)best);
		if (opt.count || fabs((double)best - target) <= 0.001 * target)
			break;
		count = (uint64_t)fmax(1.0, (double)count * target / (double)best);
	}
	st->count = count;
}

static void prepare(struct nb_thread *t)
{
	struct state *st = &states[t - run->ranks.local];

	calibrate_count(t, st);
	st->calibrated_us = st->nsteps ? st->step_us[st->nsteps - 1] : NAN;
	if (opt.warmup_reps) {
		uint64_t *scratch = nb_samples_alloc(opt.warmup_reps, sizeof(uint64_t));
		uint64_t best = UINT64_MAX, first;

		run->work->fwq(&t->work, scratch, opt.warmup_reps, st->count, &first);
		/* The warm-up runs the calibrated count too: its fastest iteration
		 * joins the calibration's 5, as a VM's speed moves by a few % over
		 * milliseconds and a calibration in a slow stretch would make the
		 * run look faster than the loop and hide that much noise. */
		for (uint64_t i = 0; i < opt.warmup_reps; i++)
			best = scratch[i] < best ? scratch[i] : best;
		st->calibrated_us = fmin(st->calibrated_us, ticks_to_us((double)best));
		nb_samples_free(scratch, opt.warmup_reps, sizeof(uint64_t));
	}
	/* the writer labels its checkpoints with it */
	if (t->stream)
		__atomic_store_n(&t->stream->loops, st->count, __ATOMIC_RELAXED);
}

static void measure(struct nb_thread *t)
{
	uint64_t count = states[t - run->ranks.local].count;

	if (run->stream.on) {
		nb_quantum_stream_fixed_work(t, count);
		return;
	}
	run->work->fwq(&t->work, t->samples, run->samples, count, &t->start_tick);
}

static double correlation(const uint64_t *a, const uint64_t *b, size_t n)
{
	double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;

	for (size_t i = 0; i < n; i++) {
		ma += (double)a[i];
		mb += (double)b[i];
	}
	ma /= (double)n;
	mb /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double da = (double)a[i] - ma, db = (double)b[i] - mb;

		sab += da * db;
		saa += da * da;
		sbb += db * db;
	}
	return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

static void compute(int local, size_t n, const uint64_t *rank0, size_t n0, struct result *res,
		    struct histogram *h)
{
	struct nb_thread *t = &run->ranks.local[local];
	struct state *st = &states[local];
	const uint64_t *v = t->samples;
	double sum = 0, sq = 0, min = INFINITY, max = 0;

	memset(res, 0, sizeof(*res));
	res->count = st->count;
	nb_run_participant(run, local, n, &res->p);
	if (run->trace_opt) {
		struct nb_cause_detour *d;
		size_t nd = nb_detours_fixed_work(v, n, t->start_tick, run->cal.timer_read_ticks, &d);

		nb_run_attribute(run, local, d, nd, &res->p.causes);
		free(d);
	}
	res->calibrated_us = st->calibrated_us;
	res->nsteps = st->nsteps;
	memcpy(res->step_count, st->step_count, sizeof(res->step_count));
	memcpy(res->step_us, st->step_us, sizeof(res->step_us));
	for (size_t i = 0; i < n; i++) {
		double us = ticks_to_us((double)v[i]);
		size_t bin = (size_t)(us / bucket_us);

		sum += us;
		sq += us * us;
		min = us < min ? us : min;
		max = us > max ? us : max;
		if (bin < (size_t)nbins)
			h->bins[bin]++;
		else
			h->overflow++;
	}
	res->total_us = sum;
	res->min_us = n ? min : NAN;
	res->max_us = n ? max : NAN;
	res->mean_us = n ? sum / (double)n : NAN;
	res->std_us = n > 1 ? sqrt(fmax(0, (sq - sum * sum / (double)n) / (double)(n - 1))) : 0;
	res->correlation = correlation(v, rank0, n < n0 ? n : n0);
	/* The noise is measured against the fastest iteration seen, the run's
	 * too: were the machine faster during the run than while calibrating,
	 * the calibrated time alone would hide that much of the noise. */
	res->ideal_us = fmin(st->calibrated_us, res->min_us);
	nb_speed_split(v, n, res->ideal_us * 1000.0 * run->cal.ticks_per_ns, &res->speed);
}

static double noise_percent(const struct result *r)
{
	double ideal = (double)r->p.samples * r->ideal_us;

	return 100.0 * (r->total_us - ideal) / ideal;
}

static void write_times(int local, size_t n)
{
	const uint64_t *v = run->ranks.local[local].samples;
	FILE *f = nb_run_file(run, local, 0);

	for (size_t i = 0; i < n; i++)
		fprintf(f, "%lld\n", llround((double)v[i] / run->cal.ticks_per_ns));
}

static void json_options(struct nb_json *j)
{
	nb_json_uint(j, "warmup_reps", opt.warmup_reps);
	nb_json_uint(j, "granularity_us", opt.granularity_us);
	nb_json_bool(j, "count_given", opt.count != 0);
}

static void print_bins(const struct histogram *h)
{
	for (int b = 0; b < nbins; b++)
		if (h->bins[b])
			printf("%g %llu\n", b * bucket_us, (unsigned long long)h->bins[b]);
	if (h->overflow)
		printf("overflow %llu\n", (unsigned long long)h->overflow);
}

/* hists: each rank's histogram (per_rank), else one of all ranks summed */
static void print_histograms(const struct result *all, int nranks, const struct histogram *hists,
			     int per_rank)
{
	const struct result *r0 = &all[0];

	for (uint32_t s = 0; s < r0->nsteps; s++)
		printf("count = %llu, time = %.0f\n", (unsigned long long)r0->step_count[s],
		       r0->step_us[s]);
	if (!per_rank) {
		printf("#columns: '# all ranks=N', then per line 'iteration_time_us iterations' "
		       "over every rank (buckets of %g us; 'overflow' counts %g us or more)\n",
		       bucket_us, nbins * bucket_us);
		printf("# all ranks=%d\n", nranks);
		print_bins(hists);
		return;
	}
	for (int i = 0; i < nranks; i++)
		printf("#rank %d host %s cpu %d count %llu calibrated_us %.3f ideal_us %.3f\n",
		       all[i].p.rank, all[i].p.host, all[i].p.cpu, (unsigned long long)all[i].count,
		       all[i].calibrated_us, all[i].ideal_us);
	printf("#columns: '# rank correlation_with_rank_0 total_time_us host', then per line "
	       "'iteration_time_us iterations' (buckets of %g us; 'overflow' counts %g us or more)\n",
	       bucket_us, nbins * bucket_us);
	for (int i = 0; i < nranks; i++) {
		const struct result *r = &all[i];

		printf("# %d %.6f %.0f %s\n", r->p.rank, r->correlation, r->total_us, r->p.host);
		print_bins(&hists[i]);
	}
}

static void report(const struct result *all, int nranks, const struct histogram *hists,
		   int per_rank, int signo)
{
	double calib = 0, mean = 0, sd = 0, maxcorr = NAN;
	struct nb_json j;

	print_histograms(all, nranks, hists, per_rank);
	for (int i = 0; i < nranks; i++) {
		const struct result *r = &all[i];

		calib += (double)r->p.samples * r->ideal_us / 1e6 / nranks;
		mean += r->total_us / 1e6 / nranks;
		if (i > 0 && (isnan(maxcorr) || fabs(r->correlation) > maxcorr))
			maxcorr = fabs(r->correlation);
	}
	for (int i = 0; i < nranks; i++)
		sd += pow(all[i].total_us / 1e6 - mean, 2);
	sd = nranks > 1 ? sqrt(sd / (nranks - 1)) : 0;
	double noise = 100.0 * (mean - calib) / calib;

	for (int i = 0; i < nranks; i++) {
		nb_run_rank_line(run, &all[i].p);
		printf(" count=%llu iterations=%llu total_time_us=%.0f "
		       "min_us=%.3f mean_us=%.3f max_us=%.3f correlation=%.6f noise_percent=%.4f "
		       "injections=%llu",
		       (unsigned long long)all[i].count,
		       (unsigned long long)all[i].p.samples, all[i].total_us, all[i].min_us,
		       all[i].mean_us, all[i].max_us, all[i].correlation, noise_percent(&all[i]),
		       (unsigned long long)all[i].p.injections);
		nb_speed_print(&all[i].speed);
		nb_tails_print(&all[i].tails);
		nb_causes_print(&all[i].p.causes);
		putchar('\n');
	}
	printf("psnap summary ranks=%d reps=%llu granularity_us=%llu calibration_time_s=%.3f "
	       "mean_run_time_s=%.3f sd_run_time_s=%.6f os_noise_percent=%.4f max_correlation=%.6f\n",
	       nranks, (unsigned long long)run->samples, (unsigned long long)opt.granularity_us, calib,
	       mean, sd, noise, maxcorr);

	nb_run_json_head(run, &j, signo);
	nb_json_uint(&j, "reps", run->samples);
	json_options(&j);
	nb_json_double(&j, "histogram_bucket_us", bucket_us);
	nb_json_string(&j, "sample_unit", "ns per iteration");
	nb_json_object(&j, "summary");
	nb_json_int(&j, "ranks", nranks);
	nb_json_double(&j, "calibration_time_s", calib);
	nb_json_double(&j, "mean_run_time_s", mean);
	nb_json_double(&j, "sd_run_time_s", sd);
	nb_json_double(&j, "os_noise_percent", noise);
	nb_json_double(&j, "max_correlation", maxcorr);
	nb_json_end(&j, '}');
	nb_json_array(&j, "ranks");
	for (int i = 0; i < nranks; i++) {
		nb_run_json_participant(run, &j, &all[i].p);
		nb_json_uint(&j, "count", all[i].count);
		nb_json_double(&j, "calibrated_us", all[i].calibrated_us);
		nb_json_double(&j, "ideal_us", all[i].ideal_us);
		nb_speed_json(&j, &all[i].speed);
		nb_tails_json(&j, &all[i].tails);
		nb_json_double(&j, "total_time_us", all[i].total_us);
		nb_json_double(&j, "min_us", all[i].min_us);
		nb_json_double(&j, "mean_us", all[i].mean_us);
		nb_json_double(&j, "max_us", all[i].max_us);
		nb_json_double(&j, "std_us", all[i].std_us);
		nb_json_double(&j, "correlation", all[i].correlation);
		nb_json_double(&j, "noise_percent", noise_percent(&all[i]));
		nb_json_end(&j, '}');
	}
	nb_json_end(&j, ']');
	uint64_t total = 0;

	for (int i = 0; i < nranks; i++)
		total += all[i].p.samples;
	nb_run_json_tail(run, &j, nranks, total);
}

static void stream_json(struct nb_run *r, struct nb_json *j)
{
	(void)r;
	json_options(j);
}

/* --stream: the figures of every stream (quantum.c), with P-SNAP's options;
 * no histogram to print nor correlation with rank 0, which would need every
 * iteration of the run. */
static const struct nb_quantum stream_figures = {
	.value_unit = "ticks",
	.json = stream_json,
};

/* Complete: every rank writes its files, rank 0's series goes to all for the
 * correlations, and the root gathers one result per rank and reports.
 * Interrupted: no collective is safe any more; each process writes what its
 * participants measured and the root reports on its own participants. */
static void finish(struct nb_run *rr, int signo)
{
	struct nb_ranks *r = &rr->ranks;
	size_t *taken;
	struct result *mine, *all;
	struct histogram *hist, *hists;
	int nranks, per_rank = signo || r->size <= HISTOGRAMS_PER_RANK_MAX;

	if (rr->stream.on) {
		nb_quantum_finish(rr, &stream_figures, signo);
		return;
	}
	taken = calloc(r->nlocal, sizeof(*taken));
	mine = calloc(r->nlocal, sizeof(*mine));
	hist = calloc(r->nlocal, sizeof(*hist));
	if (!taken || !mine || !hist)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the results");
	for (int i = 0; i < r->nlocal; i++) {
		taken[i] = nb_run_taken(rr, i, signo);
		write_times(i, taken[i]);
	}
	nb_run_commit_files(rr);

	const uint64_t *rank0 = r->local[0].samples;
	uint64_t *copy = NULL;

	if (!signo && !r->root) {
		copy = malloc(run->samples * sizeof(*copy));
		if (!copy)
			nb_fail(NB_EXIT_FAILURE, "out of memory for rank 0's series");
		rank0 = copy;
	}
	if (!signo)
		nb_ranks_bcast(r, (void *)rank0, run->samples * sizeof(*rank0));
	for (int i = 0; i < r->nlocal; i++)
		compute(i, taken[i], rank0, signo ? taken[0] : run->samples, &mine[i], &hist[i]);
	/* every correlation taken: the series may now be sorted for the tails */
	for (int i = 0; i < r->nlocal; i++) {
		uint64_t *v = r->local[i].samples;
		double tpn = rr->cal.ticks_per_ns;

		nb_sort_u64(v, taken[i]);
		nb_tails_sorted(v, taken[i], mine[i].ideal_us * 1e3 * tpn, 1 / tpn, 0,
				mine[i].total_us / 1e6, &mine[i].tails);
	}
	all = nb_run_collect(rr, mine, sizeof(*mine), signo, &nranks);
	if (per_rank) {
		hists = nb_run_collect(rr, hist, sizeof(*hist), signo, &nranks);
	} else {
		for (int i = 1; i < r->nlocal; i++) {
			hist[0].overflow += hist[i].overflow;
			for (int b = 0; b < nbins; b++)
				hist[0].bins[b] += hist[i].bins[b];
		}
		nb_ranks_sum_u64(r, &hist[0].overflow, 1 + MAX_BINS);
		hists = NULL;
	}
	if (r->root)
		report(all, nranks, per_rank ? hists : hist, per_rank, signo);
	fflush(stdout);
	free(copy);
	free(all);
	free(hists);
	free(hist);
	free(mine);
	free(taken);
}

static const struct option longopts[] = {
	{ "bucket-us", required_argument, NULL, OPT_BUCKET },
	{ NULL, 0, NULL, 0 },
};

static const char *const suffixes[] = NB_PSNAP_FILES;

static const struct nb_kernel psnap = {
	.name = "psnap",
	.usage = "P-SNAP: a spin loop calibrated to GRANULARITY us, REPS times, on every CPU.\n"
		 "Writes PREFIX_<rank>_times.dat (ns per iteration) and PREFIX.json; prints\n"
		 "histograms per rank and the PRACE summary.\n"
		 "  -n REPS              repetitions (default 100000)\n"
		 "  -w REPS              warm-up repetitions, not recorded (default 10% of -n)\n"
		 "  -c COUNT             spin count per iteration (default: calibrate)\n"
		 "  -g USECS             granularity: the time of one iteration (default 1000)\n"
		 "  --bucket-us US       histogram bucket width (default 1)\n",
	.shortopts = "w:c:g:",
	.longopts = longopts,
	.default_samples = 100000,
	.has_work = 1,
	.has_stream = 1,
	.stream_kind = NB_STREAM_FWQ,
	.nfiles = NB_PSNAP_NFILES,
	.suffixes = suffixes,
	.sample_size = sizeof(uint64_t),
	.done_word = 0,
	.option = option,
	.check = check,
	.configure = configure,
	.prepare = prepare,
	.measure = measure,
	.finish = finish,
};

int main(int argc, char **argv)
{
	return nb_driver_main(&psnap, argc, argv);
}
