/* FTQ, fixed time quantum: count the work done in each quantum of a fixed
 * grid measured from a common start, in counts of per_count work loops.
 * Noise makes counts smaller. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "kernel_files.h"
#include "quantum.h"
#include "errors.h"
#include "outfile.h"

enum { OPT_FREQ = NB_OPT_KERNEL };

static int interval_bits = -1; /* -i, -1 when not given */
static double freq_hz;         /* --freq, 0 when not given */
static uint64_t interval_ticks; /* the quantum, on this host */
/* work loops a count holds: enough that the timer read each count costs is
 * at most a tenth of it (brho's FTQ notes: a count that is mostly the read
 * makes the best quantum a matter of how fast the reads went) */
static uint64_t per_count;
enum { READ_SHARE_MAX = 10 }; /* a count is at least 10 timer reads' worth of work */

static void option(struct nb_run *r, int c, const char *arg)
{
	(void)r;
	if (c == 'i')
		interval_bits = (int)nb_parse_u64("-i", arg, 8, 40);
	else
		freq_hz = nb_parse_double("--freq", arg, 0.001, 1e6);
}

static void check(struct nb_run *r)
{
	(void)r;
	if (interval_bits >= 0 && freq_hz > 0)
		nb_fail(NB_EXIT_USAGE, "-i and --freq both set the quantum: give one of them");
	if (interval_bits < 0 && freq_hz == 0)
		freq_hz = 10000;
}

static const char *configure(struct nb_run *r)
{
	static char why[512];
	double per_loop = nb_run_ticks_per_work_loop(r);

	per_count = (uint64_t)ceil(READ_SHARE_MAX * r->cal.timer_read_ticks / per_loop);
	per_count = per_count ? per_count : 1;
	double count_ns = nb_ticks_to_ns(&r->cal, (double)per_count * per_loop +
						       r->cal.timer_read_ticks);

	if (interval_bits >= 0)
		interval_ticks = (uint64_t)1 << interval_bits;
	else
		interval_ticks = (uint64_t)llround(1e9 / freq_hz * r->cal.ticks_per_ns);
	double quantum_ns = nb_ticks_to_ns(&r->cal, (double)interval_ticks);

	r->sample_ticks = (double)interval_ticks;
	nb_run_samples_for(r, quantum_ns / 1e9);
	r->seconds = r->stream.on ? r->stream.seconds : quantum_ns * (double)r->samples / 1e9;
	if (quantum_ns < 10 * count_ns) {
		snprintf(why, sizeof(why),
			 "a quantum of %.0f ns holds fewer than 10 counts of %llu %s work loops "
			 "(%.0f ns each with the timer read) on %s: choose a lower --freq or a "
			 "larger -i",
			 quantum_ns, (unsigned long long)per_count, r->work->name, count_ns,
			 r->ranks.host);
		return why;
	}
	return NULL;
}

/* --stream: the same loop a chunk of the ring at a time (stream.h), each
 * chunk's quanta on the run's one grid. */
static void measure_stream(struct nb_thread *t)
{
	struct nb_run *r = t->arg;
	struct nb_stream *s = t->stream;
	struct nb_quantum_sample *ring = s->ring;
	uint64_t start = nb_run_start_tick(r), chunk_ticks = s->chunk_samples * interval_ticks;

	s->start_tick = start;
	for (uint64_t seq = 0; !__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE); seq++) {
		size_t slot = (size_t)(seq & (s->nchunks - 1));

		r->work->fixed_time(&t->work, ring + slot * s->chunk_samples, s->chunk_samples,
			     start + seq * chunk_ticks, interval_ticks, per_count);
		__atomic_store_n(&s->chunks[slot].seq, seq + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&s->done, seq + 1, __ATOMIC_RELEASE);
	}
}

static void measure(struct nb_thread *t)
{
	struct nb_run *r = t->arg;

	if (r->stream.on) {
		measure_stream(t);
		return;
	}
	r->work->fixed_time(&t->work, t->samples, r->samples, nb_run_start_tick(r), interval_ticks,
		     per_count);
}

static void write_samples(struct nb_run *r, int local, size_t n)
{
	const uint64_t *words = r->ranks.local[local].samples;

	if (r->to_stdout) { /* "end_tick count" per line, as the original -s */
		const struct nb_quantum_sample *s = r->ranks.local[local].samples;

		for (size_t i = 0; i < n; i++)
			printf("%llu %llu\n", (unsigned long long)s[i].tick,
			       (unsigned long long)s[i].count);
		return;
	}
	nb_write_u64_column(nb_run_file(r, local, 0),
			    words + offsetof(struct nb_quantum_sample, count) / 8, n, 2);
	nb_write_u64_column(nb_run_file(r, local, 1),
			    words + offsetof(struct nb_quantum_sample, tick) / 8, n, 2);
}

/* Moves the counts to the front of the buffer: sample i is read at word 2i
 * before word i is written, so nothing is overwritten before it is read. */
static uint64_t *values(struct nb_thread *t, size_t n)
{
	uint64_t *words = t->samples;

	for (size_t i = 0; i < n; i++)
		words[i] = words[2 * i + offsetof(struct nb_quantum_sample, count) / 8];
	return words;
}

/* The share of work missing against the best quantum: mean of (max - c) / max. */
static double scaled_noise_mean(const struct nb_stats *s)
{
	return (s->max - s->mean) / s->max;
}

static double best(const struct nb_stats *s)
{
	return s->max;
}

/* A quantum's loss is its length less what its count of work takes at the
 * run's best rate (the short-of-work of FTQ, against the best quantum as
 * nb_detours_fixed_work is against the fastest sample); it is a detour when
 * that exceeds 1% of the quantum beyond a unit of work and a timer read at
 * each end (where the quantum's edges fall). */
static size_t detours(struct nb_run *r, int local, size_t n, struct nb_cause_detour **out)
{
	const struct nb_quantum_sample *s = r->ranks.local[local].samples;
	double rate = INFINITY,
	       unit = (double)per_count * nb_run_ticks_per_work_loop(r) + r->cal.timer_read_ticks;
	double threshold = NB_CAUSE_THRESHOLD * (double)interval_ticks + unit +
			   2 * r->cal.timer_read_ticks;
	struct nb_cause_detour *d = malloc((n ? n : 1) * sizeof(*d));
	size_t m = 0;

	if (!d)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (size_t i = 0; i < n; i++) {
		uint64_t start = i ? s[i - 1].tick : nb_run_start_tick(r);

		if (s[i].count)
			rate = fmin(rate, (double)(s[i].tick - start) / (double)s[i].count);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t start = i ? s[i - 1].tick : nb_run_start_tick(r);
		double lost = (double)(s[i].tick - start) - (double)s[i].count * rate;

		if (lost > threshold)
			d[m++] = (struct nb_cause_detour){ start, s[i].tick, lost };
	}
	*out = d;
	return m;
}

static void json_options(const struct nb_run *r, struct nb_json *j)
{
	nb_json_uint(j, "quantum_ticks", interval_ticks);
	nb_json_double(j, "quantum_ns", nb_ticks_to_ns(&r->cal, (double)interval_ticks));
	if (interval_bits >= 0)
		nb_json_int(j, "interval_bits", interval_bits);
	else
		nb_json_double(j, "frequency_hz", freq_hz);
	nb_json_uint(j, "work_loops_per_count", per_count);
	nb_json_string(j, "sample_unit", "counts of work_loops_per_count work loops per quantum; "
					 "times in ticks");
}

static void summary(const struct nb_participant *p, const struct nb_stats *s, FILE *out)
{
	(void)s;
	fprintf(out, " quantum_ns=%.1f", (double)interval_ticks / p->ticks_per_ns);
}

/* A quantum's count, at the tick it ended. */
static void stretches(const struct nb_run *r, const struct nb_thread *t, size_t n,
		      struct nb_stretches *s)
{
	const struct nb_quantum_sample *x = t->samples;
	uint64_t start = nb_run_start_tick(r);

	for (size_t i = 0; i < n; i++)
		nb_stretches_add(s, (double)(x[i].tick - start) / r->cal.ticks_per_ns / 1e9,
				 (double)x[i].count);
}

/* A quantum's loss: the share of the best quantum's work it lacks, as time. */
static void tails(const struct nb_participant *p, const uint64_t *sorted, size_t n,
		  struct nb_tails *t)
{
	double best = n ? (double)sorted[n - 1] : 0,
	       quantum_ns = (double)interval_ticks / p->ticks_per_ns;

	nb_tails_sorted(sorted, n, best, best > 0 ? quantum_ns / best : NAN, 1,
			(double)n * quantum_ns / 1e9, t);
}

/* A quantum's time and its work, for the split of speed.h: it ran from the
 * tick the one before ended (the first from the run's start) to its own. */
struct quanta {
	const struct nb_quantum_sample *s;
	uint64_t start;
};

static struct nb_speed_sample quantum_sample(const void *ctx, size_t i)
{
	const struct quanta *q = ctx;
	uint64_t from = i ? q->s[i - 1].tick : q->start;

	return (struct nb_speed_sample){ (double)(q->s[i].tick - from), (double)q->s[i].count };
}

/* In shares of time, as every kernel's: a quantum's stolen time is its
 * length beyond what its count takes at the usual rate. Lost against the
 * best quantum's rate; a count's time is what a quantum resolves. */
static void speed(struct nb_thread *t, size_t n, struct nb_speed *s)
{
	const struct nb_run *r = t->arg;
	struct quanta q = { t->samples, nb_run_start_tick(r) };
	double best = INFINITY,
	       unit = (double)per_count * nb_run_ticks_per_work_loop(r) + r->cal.timer_read_ticks;

	for (size_t i = 0; i < n; i++) {
		struct nb_speed_sample x = quantum_sample(&q, i);

		if (x.work > 0)
			best = fmin(best, x.ticks / x.work);
	}
	nb_speed_split(n, quantum_sample, &q, isinf(best) ? 0 : best, unit, r->cal.ticks_per_ns, s);
}

/* a quantum a sample, on the participant's own tick */
static double sampling_hz(const struct nb_participant *p)
{
	return 1e9 * p->ticks_per_ns / (double)interval_ticks;
}

static const struct nb_quantum quantum = {
	.values = values,
	.scaled_noise_mean = scaled_noise_mean,
	.best = best,
	.speed = speed,
	.stretches = stretches,
	.summary = summary,
	.tails = tails,
	.sampling_hz = sampling_hz,
	.best_is_max = 1,
};

static const char *const suffixes[] = NB_FTQ_FILES;

static const struct option longopts[] = {
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ NULL, 0, NULL, 0 },
};

static const struct nb_kernel ftq = {
	.name = "ftq",
	.usage = "Fixed time quantum: count work loops in each quantum, SAMPLES quanta, on each\n"
		 "participant.  Writes PREFIX_<rank>_counts.dat (work loops per quantum),\n"
		 "PREFIX_<rank>_times.dat (tick at the end of each quantum) and PREFIX.json.\n"
		 "  -n SAMPLES           quanta per participant (default 10000)\n"
		 "  --freq HZ            sampling frequency (default 10000: a 100 us quantum)\n"
		 "  -i BITS              a quantum of 2^BITS ticks instead of --freq\n",
	.shortopts = "i:",
	.longopts = longopts,
	.default_samples = 10000,
	.has_work = 1,
	.has_stdout = 1,
	.has_stream = NB_FTQ_STREAM,
	.stream_kind = NB_STREAM_FIXED_TIME,
	.value_unit = NB_FTQ_VALUE_UNIT,
	.nfiles = NB_FTQ_NFILES,
	.suffixes = suffixes,
	.sample_size = sizeof(struct nb_quantum_sample),
	.done_word = offsetof(struct nb_quantum_sample, tick),
	.option = option,
	.check = check,
	.configure = configure,
	.measure = measure,
	.json_options = json_options,
	.results = NB_QUANTUM_RESULTS(write_samples, detours),
	.shared = &quantum,
};

int main(int argc, char **argv)
{
	return nb_driver_main(&ftq, argc, argv);
}
