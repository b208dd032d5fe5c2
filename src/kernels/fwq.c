/* FWQ, fixed work quantum: every sample does the same work (2^w work loops)
 * and records how many ticks it took.  Noise makes samples longer. */
#include <stdlib.h>

#include "kernel_files.h"
#include "quantum.h"
#include "errors.h"
#include "outfile.h"

static unsigned work_bits = 12;
static uint64_t loops; /* work loops per sample */

static void option(struct nb_run *r, int c, const char *arg)
{
	(void)r;
	(void)c; /* -w, its only one */
	work_bits = (unsigned)nb_parse_u64("-w", arg, 0, 40);
}

static const char *configure(struct nb_run *r)
{
	loops = (uint64_t)1 << work_bits;
	r->work_loops = loops;
	r->sample_ticks = (double)loops * nb_run_ticks_per_work_loop(r);
	nb_run_samples_for(r, nb_ticks_to_ns(&r->cal, r->sample_ticks) / 1e9);
	r->seconds = r->stream.on ? r->stream.seconds
				  : nb_ticks_to_ns(&r->cal, (double)r->samples * r->sample_ticks) / 1e9;
	return NULL;
}

static void measure(struct nb_thread *t)
{
	struct nb_run *r = t->arg;

	if (r->stream.on) {
		nb_quantum_stream_fixed_work(t, loops);
		return;
	}
	r->work->fixed_work(&t->work, t->samples, r->samples, loops, &t->start_tick);
}

static void write_samples(struct nb_run *r, int local, size_t n)
{
	nb_write_u64_column(nb_run_file(r, local, 0), r->ranks.local[local].samples, n, 1);
}

static uint64_t *values(struct nb_thread *t, size_t n)
{
	(void)n;
	return t->samples;
}

/* Sequoia's scaled noise (t - min) / min, averaged over the samples. */
static double scaled_noise_mean(const struct nb_stats *s)
{
	return (s->mean - s->min) / s->min;
}

static double best(const struct nb_stats *s)
{
	return s->min;
}

/* Lost against the fastest sample, Sequoia's ideal; a sample resolves a
 * timer read. */
static void speed(struct nb_thread *t, size_t n, struct nb_speed *s)
{
	const struct nb_run *r = t->arg;
	const uint64_t *x = t->samples;
	uint64_t min = UINT64_MAX;

	for (size_t i = 0; i < n; i++)
		min = x[i] < min ? x[i] : min;
	nb_speed_fixed_work(x, n, (double)min, r->cal.timer_read_ticks, r->cal.ticks_per_ns, s);
}

/* Samples follow each other: each ends where the ticks so far add up to. */
static void stretches(const struct nb_run *r, const struct nb_thread *t, size_t n,
		      struct nb_stretches *s)
{
	const uint64_t *x = t->samples;
	uint64_t ticks = 0;

	for (size_t i = 0; i < n; i++) {
		ticks += x[i];
		nb_stretches_add(s, (double)ticks / r->cal.ticks_per_ns / 1e9, (double)x[i]);
	}
}

static size_t detours(struct nb_run *r, int local, size_t n, struct nb_cause_detour **out)
{
	const struct nb_thread *t = &r->ranks.local[local];

	return nb_detours_fixed_work(t->samples, n, t->start_tick, r->cal.timer_read_ticks, out);
}

static void json_options(const struct nb_run *r, struct nb_json *j)
{
	(void)r;
	nb_json_uint(j, "work_bits", work_bits);
	nb_json_uint(j, "work_loops_per_sample", loops);
	nb_json_string(j, "sample_unit", "ticks");
}

static void summary(const struct nb_participant *p, const struct nb_stats *s, FILE *out)
{
	fprintf(out, " mean_ns=%.1f", s->mean / p->ticks_per_ns);
}

/* A sample's loss: its time beyond the fastest sample's. */
static void tails(const struct nb_participant *p, const uint64_t *sorted, size_t n,
		  struct nb_tails *t)
{
	double ticks = 0;

	for (size_t i = 0; i < n; i++)
		ticks += (double)sorted[i];
	nb_tails_sorted(sorted, n, n ? (double)sorted[0] : 0, 1 / p->ticks_per_ns, 0,
			ticks / p->ticks_per_ns / 1e9, t);
}

static const struct nb_quantum quantum = {
	.values = values,
	.scaled_noise_mean = scaled_noise_mean,
	.best = best,
	.speed = speed,
	.stretches = stretches,
	.summary = summary,
	.tails = tails,
};

static const char *const suffixes[] = NB_FWQ_FILES;

static const struct nb_kernel fwq = {
	.name = "fwq",
	.usage = "Fixed work quantum: time 2^BITS work loops, SAMPLES times, on each participant.\n"
		 "Writes PREFIX_<rank>_times.dat (ticks per sample) and PREFIX.json.\n"
		 "  -n SAMPLES           samples per participant (default 10000)\n"
		 "  -w BITS              2^BITS work loops per sample (default 12, at most 40)\n",
	.shortopts = "w:",
	.default_samples = 10000,
	.has_work = 1,
	.has_stdout = 1,
	.has_stream = NB_FWQ_STREAM,
	.stream_kind = NB_STREAM_FIXED_WORK,
	.value_unit = NB_FWQ_VALUE_UNIT,
	.nfiles = NB_FWQ_NFILES,
	.suffixes = suffixes,
	.sample_size = sizeof(uint64_t),
	.done_word = 0,
	.option = option,
	.configure = configure,
	.measure = measure,
	.json_options = json_options,
	.results = NB_QUANTUM_RESULTS(write_samples, detours),
	.shared = &quantum,
};

int main(int argc, char **argv)
{
	return nb_driver_main(&fwq, argc, argv);
}
