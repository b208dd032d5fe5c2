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
 * are: rank 0 never holds a histogram per rank of a large run (64 KiB each).
 * Each rank's, with its '#' line, is also in its node's HISTOGRAMS file,
 * written where the ranks are, so that the PRACE notes' grep of the '#'
 * lines works on the same files at any size. */
enum { HISTOGRAMS_PER_RANK_MAX = 64 };
static const char HISTOGRAMS[] = "histograms.txt";

struct options {
	uint64_t warmup_reps, count, granularity_us, bucket_us;
	int warmup_given;
};

/* What each participant sends the root: fixed size, so it gathers as bytes. */
struct result {
	struct nb_participant p;
	struct nb_speed speed;
	struct nb_stats stats; /* of the iterations, in ns */
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
	double correlation; /* with rank 0's series (exchange) */
};

/* PRACE's summary: the calibrated and the mean run time, its sd across the
 * ranks, and the noise in %. */
struct summary {
	double calib, mean, sd, noise, maxcorr;
};

/* With per_rank: what the head says of each rank, gathered (at most
 * HISTOGRAMS_PER_RANK_MAX ranks). */
struct rank_head {
	int32_t rank, cpu;
	char host[64];
	uint64_t count;
	double calibrated_us, ideal_us, correlation, total_us;
};

static struct options opt = { .granularity_us = 1000, .bucket_us = 1 };
static struct nb_run *run;
static struct state *states;
static double bucket_us; /* the histogram's, after widening to fit MAX_BINS */
static int nbins;
/* exchange's: this process's participants' histograms, and the root's to
 * print: each rank's (per_rank) or, in hist[0], all of them summed; and
 * the root's sum of every one, the JSON's iteration_histogram */
static struct histogram *hist, *hists, total;
static int per_rank;
static int nodes; /* the root's count of them, when the nodes' files hold the histograms */
static struct rank_head *heads;
static struct summary run_summary; /* the root's: reduce */

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

		run->work->fixed_work(&t->work, s, CALIBRATION_SAMPLES, count, &first);
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

		run->work->fixed_work(&t->work, scratch, opt.warmup_reps, st->count, &first);
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
	run->work->fixed_work(&t->work, t->samples, run->samples, count, &t->start_tick);
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

static void add_histogram(struct histogram *sum, const struct histogram *h)
{
	sum->overflow += h->overflow;
	for (int b = 0; b < nbins; b++)
		sum->bins[b] += h->bins[b];
}

/* Complete runs: rank 0's series goes to every rank for the correlations,
 * and the histograms reach the root, a rank's each or all summed. After a
 * signal: this process's participants against its first. */
static void exchange(struct nb_run *r, const size_t *n, int signo)
{
	struct nb_ranks *rk = &r->ranks;
	const uint64_t *rank0 = rk->local[0].samples;
	size_t n0 = signo ? n[0] : r->samples;
	uint64_t *copy = NULL;
	int nranks;

	/* with node files the root prints no line a rank: no block either */
	per_rank = signo || (rk->size <= HISTOGRAMS_PER_RANK_MAX && !nb_run_node_files(r));
	hist = calloc(rk->nlocal, sizeof(*hist));
	if (!hist)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the histograms");
	if (!signo && !rk->root) {
		copy = malloc(r->samples * sizeof(*copy));
		if (!copy)
			nb_fail(NB_EXIT_FAILURE, "out of memory for rank 0's series");
		rank0 = copy;
	}
	if (!signo)
		nb_ranks_bcast(rk, (void *)rank0, r->samples * sizeof(*rank0));
	for (int i = 0; i < rk->nlocal; i++) {
		const uint64_t *v = rk->local[i].samples;

		states[i].correlation = correlation(v, rank0, n[i] < n0 ? n[i] : n0);
		for (size_t k = 0; k < n[i]; k++) {
			size_t bin = (size_t)(ticks_to_us((double)v[k]) / bucket_us);

			if (bin < (size_t)nbins)
				hist[i].bins[bin]++;
			else
				hist[i].overflow++;
		}
	}
	free(copy);
	if (per_rank) {
		hists = nb_run_gather(r, hist, sizeof(*hist), signo, &nranks);
		for (int i = 0; i < nranks && hists; i++)
			add_histogram(&total, &hists[i]);
		return;
	}
	/* each participant's stays whole for its node's file (reduce) */
	for (int i = 0; i < rk->nlocal; i++)
		add_histogram(&total, &hist[i]);
	nb_ranks_sum_u64(rk, &total.overflow, 1 + MAX_BINS);
	hists = &total;
}

static void summarise(struct nb_run *r, int local, size_t n, void *record)
{
	struct nb_thread *t = &r->ranks.local[local];
	struct state *st = &states[local];
	uint64_t *v = t->samples;
	struct result *res = record;
	struct nb_stats s;
	double tpn = r->cal.ticks_per_ns;
	uint64_t min = UINT64_MAX;

	res->count = st->count;
	res->calibrated_us = st->calibrated_us;
	res->correlation = st->correlation;
	res->nsteps = st->nsteps;
	memcpy(res->step_count, st->step_count, sizeof(res->step_count));
	memcpy(res->step_us, st->step_us, sizeof(res->step_us));
	for (size_t i = 0; i < n; i++)
		min = v[i] < min ? v[i] : min;
	res->min_us = n ? ticks_to_us((double)min) : NAN;
	/* The noise is measured against the fastest iteration seen, the run's
	 * too: were the machine faster during the run than while calibrating,
	 * the calibrated time alone would hide that much of the noise. */
	res->ideal_us = fmin(st->calibrated_us, res->min_us);
	/* in time order: running slow is a stretch of slow iterations */
	nb_speed_fixed_work(v, n, res->ideal_us * 1000.0 * tpn, r->cal.timer_read_ticks, tpn,
			    &res->speed);
	/* iterations follow each other; its files hold ns */
	nb_stretches_init(&res->p.stretches, r->measured_s);
	uint64_t ticks = 0;
	for (size_t i = 0; i < n; i++) {
		ticks += v[i];
		nb_stretches_add(&res->p.stretches, (double)ticks / tpn / 1e9, (double)v[i] / tpn);
	}
	nb_stats_compute(v, n, &s); /* sorts them */
	res->stats = s;
	nb_stats_scale(&res->stats, 1 / tpn); /* its files hold ns */
	res->total_us = n ? ticks_to_us(s.mean) * (double)n : 0;
	res->max_us = n ? ticks_to_us(s.max) : NAN;
	res->mean_us = n ? ticks_to_us(s.mean) : NAN;
	res->std_us = n > 1 ? ticks_to_us(s.std) : 0;
	/* each iteration's time beyond the ideal */
	nb_tails_sorted(v, n, res->ideal_us * 1e3 * tpn, 1 / tpn, 0, res->total_us / 1e6,
			&res->p.tails);
	nb_tails_rescale(&res->p.tails, 1 / tpn); /* its files hold ns */
}

static double noise_percent(const struct result *r)
{
	double ideal = (double)r->p.samples * r->ideal_us;

	return 100.0 * (r->total_us - ideal) / ideal;
}

static size_t detours(struct nb_run *r, int local, size_t n, struct nb_cause_detour **out)
{
	const struct nb_thread *t = &r->ranks.local[local];

	return nb_detours_fixed_work(t->samples, n, t->start_tick, r->cal.timer_read_ticks, out);
}

static void write_times(struct nb_run *r, int local, size_t n)
{
	const uint64_t *v = r->ranks.local[local].samples;
	FILE *f = nb_run_file(r, local, 0);

	for (size_t i = 0; i < n; i++)
		fprintf(f, "%lld\n", llround((double)v[i] / r->cal.ticks_per_ns));
}

static void json_options(const struct nb_run *r, struct nb_json *j)
{
	(void)r;
	nb_json_uint(j, "warmup_reps", opt.warmup_reps);
	nb_json_uint(j, "granularity_us", opt.granularity_us);
	nb_json_bool(j, "count_given", opt.count != 0);
}

static void print_bins(FILE *f, const struct histogram *h)
{
	for (int b = 0; b < nbins; b++)
		if (h->bins[b])
			fprintf(f, "%g %llu\n", b * bucket_us, (unsigned long long)h->bins[b]);
	if (h->overflow)
		fprintf(f, "overflow %llu\n", (unsigned long long)h->overflow);
}

/* A rank's calibration line ('#rank', which the PRACE notes grep for the
 * counts), the '#columns' line of the blocks, and a rank's block: its '#'
 * line (rank, correlation with rank 0, total time, host) and its bins. */
static void print_calibration(FILE *f, const struct rank_head *x)
{
	fprintf(f, "#rank %d host %s cpu %d count %llu calibrated_us %.3f ideal_us %.3f\n", x->rank,
		x->host, x->cpu, (unsigned long long)x->count, x->calibrated_us, x->ideal_us);
}

static void print_columns(FILE *f)
{
	/* no "# " in it: the PRACE notes' grep takes every line with one */
	fprintf(f, "#columns: a rank's block: '#' rank correlation_with_rank_0 total_time_us host, "
		"then per line 'iteration_time_us iterations' (buckets of %g us; 'overflow' counts "
		"%g us or more)\n", bucket_us, nbins * bucket_us);
}

static void print_block(FILE *f, const struct rank_head *x, const struct histogram *h)
{
	fprintf(f, "# %d %.6f %.0f %s\n", x->rank, x->correlation, x->total_us, x->host);
	print_bins(f, h);
}

static struct rank_head head_of(const struct result *x)
{
	struct rank_head h = { .rank = x->p.rank, .cpu = x->p.cpu, .count = x->count,
			       .calibrated_us = x->calibrated_us, .ideal_us = x->ideal_us,
			       .correlation = x->correlation, .total_us = x->total_us };

	memcpy(h.host, x->p.host, sizeof(h.host));
	return h;
}

/* nb_node_writer of the node's histograms file: the columns line first,
 * then each participant's calibration line and block. */
static int write_histograms(struct nb_run *r, FILE **files, void *arg)
{
	const struct result *x = arg;

	for (int i = 0; i < r->ranks.nlocal; i++) {
		struct rank_head h = head_of(&x[i]);

		if (i == 0 && r->ranks.node_first)
			print_columns(files[i]);
		print_calibration(files[i], &h);
		print_block(files[i], &h, &hist[i]);
	}
	return r->ranks.nlocal;
}

/* P-SNAP's own lines first: the calibration (rank 0's, the root's first
 * participant), then each rank's histogram (per_rank), else one of all ranks
 * summed. */
static void print_head(const struct nb_run *r, int nranks)
{
	(void)r;
	for (uint32_t s = 0; s < states[0].nsteps; s++)
		printf("count = %llu, time = %.0f\n", (unsigned long long)states[0].step_count[s],
		       states[0].step_us[s]);
	if (!per_rank) {
		printf("#columns: '#all ranks=N', then per line 'iteration_time_us iterations' "
		       "over every rank (buckets of %g us; 'overflow' counts %g us or more)\n",
		       bucket_us, nbins * bucket_us);
		printf("#all ranks=%d\n", nranks);
		print_bins(stdout, hists);
	} else {
		for (int i = 0; i < nranks; i++)
			print_calibration(stdout, &heads[i]);
		print_columns(stdout);
		for (int i = 0; i < nranks; i++)
			print_block(stdout, &heads[i], &hists[i]);
	}
	if (nodes) {
		char name[4096];

		nb_run_node_text_name(r, HISTOGRAMS, name, sizeof(name));
		printf("#histograms of each rank: in its node's file, %s, {node} from 0 to %d\n",
		       name, nodes - 1);
	}
}

static void print(const struct nb_run *r, const void *record, FILE *out)
{
	const struct result *x = record;

	(void)r;
	fprintf(out, " count=%llu iterations=%llu total_time_us=%.0f min_us=%.3f mean_us=%.3f "
		"max_us=%.3f correlation=%.6f noise_percent=%.4f",
		(unsigned long long)x->count, (unsigned long long)x->p.samples, x->total_us,
		x->min_us, x->mean_us, x->max_us, x->correlation, noise_percent(x));
	nb_speed_print(&x->speed, out);
}

/* The run's figures over every rank, summed where the ranks are: PRACE's
 * mean run time and its sd across the ranks come from the sums of each
 * rank's time and of its square, shifted by the run's nominal time so that
 * the squares keep the sd's digits. */
static void reduce(struct nb_run *r, const void *mine, int nlocal, int signo)
{
	const struct result *x = mine;
	double nominal_s = (double)r->samples * (double)opt.granularity_us / 1e6;
	double sums[4] = { 0 }, maxcorr = -INFINITY, n;
	struct rank_head *local;
	struct summary *s = &run_summary;
	int nheads;

	for (int i = 0; i < nlocal; i++) {
		double d = x[i].total_us / 1e6 - nominal_s;

		sums[0] += (double)x[i].p.samples * x[i].ideal_us / 1e6;
		sums[1] += x[i].total_us / 1e6;
		sums[2] += d;
		sums[3] += d * d;
		if (x[i].p.rank != 0 && !isnan(x[i].correlation))
			maxcorr = fmax(maxcorr, fabs(x[i].correlation));
	}
	nb_run_sum(r, sums, 4, signo);
	nb_run_max(r, &maxcorr, 1, signo);
	n = signo ? nlocal : r->ranks.size;
	s->calib = sums[0] / n;
	s->mean = sums[1] / n;
	s->sd = n > 1 ? sqrt(fmax(0, (sums[3] - sums[2] * sums[2] / n) / (n - 1))) : 0;
	s->noise = 100.0 * (s->mean - s->calib) / s->calib;
	s->maxcorr = maxcorr == -INFINITY ? NAN : maxcorr;
	if (!signo) {
		double first = r->ranks.node_first;

		nb_run_node_text(r, HISTOGRAMS, write_histograms, (void *)x);
		nb_run_sum(r, &first, 1, signo);
		nodes = (int)first;
	}
	if (!per_rank)
		return;
	local = calloc(nlocal, sizeof(*local));
	if (!local)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (int i = 0; i < nlocal; i++)
		local[i] = head_of(&x[i]);
	heads = nb_run_gather(r, local, sizeof(*local), signo, &nheads);
	free(local);
}

static void print_run(const struct nb_run *r, int nranks)
{
	const struct summary *s = &run_summary;

	printf("psnap summary ranks=%d reps=%llu granularity_us=%llu calibration_time_s=%.3f "
	       "mean_run_time_s=%.3f sd_run_time_s=%.6f os_noise_percent=%.4f max_correlation=%.6f\n",
	       nranks, (unsigned long long)r->samples, (unsigned long long)opt.granularity_us,
	       s->calib, s->mean, s->sd, s->noise, s->maxcorr);
}

/* Every iteration of the run (of the root process's participants after a
 * signal) by time, as the P-SNAP histogram lines count them: counts[k] those
 * of first_us + k to first_us + k + 1 buckets, from the first bucket used to
 * the last, and the overflow. */
static void iteration_histogram_json(struct nb_json *j)
{
	int first = 0, used = nbins;

	while (used > 0 && total.bins[used - 1] == 0)
		used--;
	while (first < used && total.bins[first] == 0)
		first++;
	nb_json_object(j, "iteration_histogram");
	nb_json_double(j, "bucket_us", bucket_us);
	nb_json_double(j, "first_us", first * bucket_us);
	nb_json_array(j, "counts");
	for (int b = first; b < used; b++)
		nb_json_uint(j, NULL, total.bins[b]);
	nb_json_end(j, ']');
	nb_json_uint(j, "overflow", total.overflow);
	nb_json_double(j, "overflow_from_us", nbins * bucket_us);
	nb_json_end(j, '}');
}

static void json_run(const struct nb_run *r, struct nb_json *j, int nranks)
{
	const struct summary *s = &run_summary;

	nb_json_uint(j, "reps", r->samples);
	iteration_histogram_json(j);
	if (nodes) {
		char name[4096];

		nb_run_node_text_name(r, HISTOGRAMS, name, sizeof(name));
		nb_json_object(j, "rank_histograms");
		nb_json_string(j, "file_name", name);
		nb_json_int(j, "nodes", nodes);
		nb_json_end(j, '}');
	}
	nb_json_string(j, "sample_unit", "ns per iteration");
	nb_json_object(j, "summary");
	nb_json_int(j, "ranks", nranks);
	nb_json_double(j, "calibration_time_s", s->calib);
	nb_json_double(j, "mean_run_time_s", s->mean);
	nb_json_double(j, "sd_run_time_s", s->sd);
	nb_json_double(j, "os_noise_percent", s->noise);
	nb_json_double(j, "max_correlation", s->maxcorr);
	nb_json_end(j, '}');
}

static void json_rank(const struct nb_run *r, struct nb_json *j, const void *record)
{
	const struct result *x = record;

	(void)r;
	nb_json_uint(j, "count", x->count);
	nb_json_double(j, "calibrated_us", x->calibrated_us);
	nb_json_double(j, "ideal_us", x->ideal_us);
	nb_speed_json(j, &x->speed);
	nb_json_double(j, "total_time_us", x->total_us);
	nb_json_double(j, "min_us", x->min_us);
	nb_json_double(j, "mean_us", x->mean_us);
	nb_json_double(j, "max_us", x->max_us);
	nb_json_double(j, "std_us", x->std_us);
	nb_json_double(j, "correlation", x->correlation);
	nb_json_double(j, "noise_percent", noise_percent(x));
	/* Sequoia's scaled noise against the fastest iteration, as FWQ's */
	nb_stats_json(j, &x->stats, "ns", (x->stats.mean - x->stats.min) / x->stats.min);
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
	.has_stream = NB_PSNAP_STREAM,
	.stream_kind = NB_STREAM_FIXED_WORK,
	.value_unit = NB_PSNAP_VALUE_UNIT,
	.nfiles = NB_PSNAP_NFILES,
	.suffixes = suffixes,
	.sample_size = sizeof(uint64_t),
	.done_word = 0,
	.option = option,
	.check = check,
	.configure = configure,
	.prepare = prepare,
	.measure = measure,
	.json_options = json_options,
	.results = {
		.size = sizeof(struct result),
		.write = write_times,
		.exchange = exchange,
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
	return nb_driver_main(&psnap, argc, argv);
}
