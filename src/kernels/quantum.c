#include "quantum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct nb_quantum *quantum_of(const struct nb_run *r)
{
	return r->k->shared;
}

/* Sequoia's max-based figures move with a few unusually fast quanta; the
 * 99.9th percentile does not, and how many quanta reached the max says
 * whether it was one of those. */
static void robust_best(const uint64_t *sorted, size_t n, struct nb_quantum_record *x)
{
	size_t k = (size_t)ceil(0.999 * (double)n);

	x->robust_best = n ? (double)sorted[(k ? k : 1) - 1] : NAN;
	x->at_max = 0;
	for (size_t i = n; i > 0 && sorted[i - 1] == sorted[n - 1]; i--)
		x->at_max++;
}

static double robust_noise_mean(const struct nb_quantum_record *x)
{
	double m = x->robust_best;

	return m > 0 && m > x->stats.mean ? (m - x->stats.mean) / m : 0;
}

void nb_quantum_summarise(struct nb_run *r, int local, size_t n, void *record)
{
	const struct nb_quantum *q = quantum_of(r);
	struct nb_thread *t = &r->ranks.local[local];
	struct nb_quantum_record *x = record;

	if (q->speed)
		q->speed(t, n, &x->speed);
	nb_stretches_init(&x->p.stretches, r->measured_s);
	q->stretches(r, t, n, &x->p.stretches);
	uint64_t *values = q->values(t, n);

	if (q->sampling_hz) /* before the sort: the values in time order */
		nb_spectrum_lines(values, n, q->sampling_hz(&x->p), &x->spectrum);
	nb_stats_compute(values, n, &x->stats); /* sorts them */
	q->tails(&x->p, values, n, &x->p.tails);
	robust_best(values, n, x);
}

/* Where no noise took the quantum: the median's, or the best's when noise
 * took most quanta whole (a median of 0), so that a share stays a number. */
static double undisturbed(const struct nb_stats *s)
{
	return s->median > 0 ? s->median : s->max;
}

/* The frequency and share (%) of the strongest line of the record's
 * spectrum; 0 without one. */
static double line_hz(const struct nb_quantum_record *x)
{
	return x->spectrum.n > 0 ? x->spectrum.line[0].frequency_hz : 0;
}

static double line_share(const struct nb_quantum_record *x)
{
	return x->spectrum.n > 0 ? nb_spectral_line_share_percent(&x->spectrum.line[0],
								   undisturbed(&x->stats))
				 : 0;
}

/* The run's strongest line: the largest share of any rank's, and its
 * frequency (the highest, where ranks tie). */
static struct {
	double hz, share;
} run_line;

void nb_quantum_reduce(struct nb_run *r, const void *mine, int nlocal, int signo)
{
	const struct nb_quantum_record *x = mine;
	double share = 0, hz = 0;

	if (!quantum_of(r)->sampling_hz)
		return;
	for (int i = 0; i < nlocal; i++)
		share = fmax(share, line_share(&x[i]));
	if (!signo)
		share = nb_ranks_max(&r->ranks, share);
	for (int i = 0; i < nlocal; i++)
		if (line_share(&x[i]) == share)
			hz = fmax(hz, line_hz(&x[i]));
	nb_run_max(r, &hz, 1, signo);
	run_line.share = share;
	run_line.hz = hz;
}

void nb_quantum_print_run(const struct nb_run *r, int n)
{
	if (quantum_of(r)->sampling_hz)
		printf("%s summary ranks=%d line_hz=%.6g line_share_percent=%.4g\n", r->k->name, n,
		       run_line.hz, run_line.share);
}

void nb_quantum_print(const struct nb_run *r, const void *record, FILE *out)
{
	const struct nb_quantum *q = quantum_of(r);
	const struct nb_quantum_record *x = record;
	const char *u = r->k->value_unit;
	const struct nb_stats *s = &x->stats;

	fprintf(out, " work=%s samples=%zu min_%s=%.0f "
		"mean_%s=%.2f max_%s=%.0f std_%s=%.2f median_%s=%.1f ci95_%s=%.2f:%.2f "
		"scaled_noise_mean=%.6g",
		r->work->name, s->n, u, s->min, u, s->mean, u, s->max, u, s->std, u, s->median,
		u, s->ci95_low, s->ci95_high, q->scaled_noise_mean(s));
	/* Sequoia's other two figures: the sd of the scaled noise (the values'
	 * sd over the best one) and its kurtosis, which no shift or scale changes */
	fprintf(out, " scaled_noise_sd=%.6g kurtosis=%.6g skewness=%.6g", s->std / q->best(s),
		s->kurtosis, s->skewness);
	q->summary(&x->p, s, out);
	if (q->best_is_max)
		fprintf(out, " best_p99_9_%s=%.0f robust_noise_mean=%.6f samples_at_max=%llu", u,
			x->robust_best, robust_noise_mean(x), (unsigned long long)x->at_max);
	if (q->sampling_hz) /* the strongest spectral line; 0 0 when none stands out */
		fprintf(out, " line_hz=%.6g line_share_percent=%.4g", line_hz(x), line_share(x));
	if (q->speed)
		nb_speed_print(&x->speed, out);
}

void nb_quantum_json_run(const struct nb_run *r, struct nb_json *j, int n)
{
	(void)n;
	/* the minimum: _min says so */
	nb_json_double(j, "ticks_per_work_loop_min", nb_run_ticks_per_work_loop(r));
}

void nb_quantum_json_rank(const struct nb_run *r, struct nb_json *j, const void *record)
{
	const struct nb_quantum *q = quantum_of(r);
	const struct nb_quantum_record *x = record;

	if (q->speed)
		nb_speed_json(j, &x->speed);
	nb_stats_json(j, &x->stats, r->k->value_unit, q->scaled_noise_mean(&x->stats));
	if (!q->best_is_max && r->work_loops)
		nb_json_double(j, "run_ticks_per_work_loop_min",
			       x->stats.min / (double)r->work_loops);
	if (q->best_is_max) {
		nb_json_double(j, "best_p99_9", x->robust_best);
		nb_json_double(j, "robust_noise_mean", robust_noise_mean(x));
		nb_json_uint(j, "samples_at_max", x->at_max);
	}
	if (q->sampling_hz)
		nb_spectrum_lines_json(j, &x->spectrum, undisturbed(&x->stats));
}

/* --stream: the fixed-work loop a chunk of the ring at a time (stream.h);
 * the ticks between two chunks go to the next chunk's first sample. */
void nb_quantum_stream_fixed_work(struct nb_thread *t, uint64_t loops)
{
	struct nb_run *r = t->arg;
	struct nb_stream *s = t->stream;
	uint64_t *ring = s->ring;

	s->start_tick = t->start_tick;
	for (uint64_t seq = 0; !__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE); seq++) {
		size_t slot = (size_t)(seq & (s->nchunks - 1));

		r->work->fixed_work(&t->work, ring + slot * s->chunk_samples, s->chunk_samples, loops,
			     &s->chunks[slot].first_tick);
		if (seq == 0)
			t->start_tick = s->chunks[0].first_tick;
		__atomic_store_n(&s->chunks[slot].seq, seq + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&s->done, seq + 1, __ATOMIC_RELEASE);
	}
}
