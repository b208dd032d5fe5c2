#include "quantum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

struct result {
	struct nb_participant p;
	struct nb_stats stats;
	struct nb_speed speed;
	struct nb_tails tails;
	double robust_best; /* best_is_max: the 99.9th percentile (type 1) */
	uint64_t at_max;    /* samples equal to the largest */
};

/* Sequoia's max-based figures move with a few unusually fast quanta; the
 * 99.9th percentile does not, and how many quanta reached the max says
 * whether it was one of those. */
static void robust_best(const uint64_t *sorted, size_t n, struct result *x)
{
	size_t k = (size_t)ceil(0.999 * (double)n);

	x->robust_best = n ? (double)sorted[(k ? k : 1) - 1] : NAN;
	x->at_max = 0;
	for (size_t i = n; i > 0 && sorted[i - 1] == sorted[n - 1]; i--)
		x->at_max++;
}

static double robust_noise_mean(const struct result *x)
{
	double m = x->robust_best;

	return m > 0 && m > x->stats.mean ? (m - x->stats.mean) / m : 0;
}

/* What a work loop costs, and the kernel's own keys. */
static void json_work(struct nb_run *r, const struct nb_quantum *q, struct nb_json *j)
{
	/* the minimum: _min says so */
	nb_json_double(j, "ticks_per_work_loop_min", nb_quantum_ticks_per_work_loop(r));
	q->json(r, j);
}

static void print_summary(struct nb_run *r, const struct nb_quantum *q, const struct result *x)
{
	const char *u = q->value_unit;
	const struct nb_stats *s = &x->stats;

	nb_run_rank_line(r, &x->p);
	printf(" work=%s samples=%zu min_%s=%.0f "
	       "mean_%s=%.2f max_%s=%.0f std_%s=%.2f median_%s=%.1f ci95_%s=%.2f:%.2f "
	       "scaled_noise_mean=%.6f",
	       r->work->name, s->n, u, s->min, u,
	       s->mean, u, s->max, u, s->std, u, s->median, u, s->ci95_low, s->ci95_high,
	       q->scaled_noise_mean(s));
	/* Sequoia's other two figures: the sd of the scaled noise (the values'
	 * sd over the best one) and its kurtosis, which no shift or scale changes */
	printf(" scaled_noise_sd=%.6g kurtosis=%.6g skewness=%.6g", s->std / q->best(s),
	       s->kurtosis, s->skewness);
	q->summary(&x->p, s);
	if (q->best_is_max)
		printf(" best_p99_9_%s=%.0f robust_noise_mean=%.6f samples_at_max=%llu", u,
		       x->robust_best, robust_noise_mean(x), (unsigned long long)x->at_max);
	nb_tails_print(&x->tails);
	if (q->speed)
		nb_speed_print(&x->speed);
	if (r->inject.duration_us)
		printf(" injections=%llu injections_missed=%llu",
		       (unsigned long long)x->p.injections,
		       (unsigned long long)x->p.injections_missed);
	nb_causes_print(&x->p.causes);
	putchar('\n');
}

static void report(struct nb_run *r, const struct nb_quantum *q, const struct result *all, int n,
		   int signo)
{
	struct nb_json j;
	uint64_t total = 0;

	for (int i = 0; i < n; i++) {
		print_summary(r, q, &all[i]);
		total += all[i].p.samples;
	}
	nb_run_json_head(r, &j, signo);
	json_work(r, q, &j);
	nb_json_array(&j, "ranks");
	for (int i = 0; i < n; i++) {
		nb_run_json_participant(r, &j, &all[i].p);
		if (q->speed)
			nb_speed_json(&j, &all[i].speed);
		nb_json_stats(&j, &all[i].stats, q->value_unit,
			      q->scaled_noise_mean(&all[i].stats));
		if (!q->best_is_max && r->work_loops)
			nb_json_double(&j, "run_ticks_per_work_loop_min",
				       all[i].stats.min / (double)r->work_loops);
		if (q->best_is_max) {
			nb_json_double(&j, "best_p99_9", all[i].robust_best);
			nb_json_double(&j, "robust_noise_mean", robust_noise_mean(&all[i]));
			nb_json_uint(&j, "samples_at_max", all[i].at_max);
		}
		nb_tails_json(&j, &all[i].tails);
		nb_json_end(&j, '}');
	}
	nb_json_end(&j, ']');
	nb_run_json_tail(r, &j, n, total);
}

/* --stream: what a participant's stream found, gathered as bytes. */
struct stream_result {
	struct nb_participant p;
	uint64_t lost_samples, min, max, memory_bytes, checkpoints, reference;
	double seconds, mean, lost_percent, checkpoint_ms_max;
	double loss[4]; /* p50, p99, p99.9 and the max, in the kernel's unit */
	double us_per_unit;  /* FTQ: a count of the reference quantum as time */
};

static const double stream_probs[] = { 0.5, 0.99, 0.999, 1 };
static const char *const stream_loss_names[] = { "p50", "p99", "p99_9", "max" };

static void stream_summary(struct nb_run *r, const struct nb_quantum *q,
			   const struct stream_result *x)
{
	const char *u = q->value_unit;

	nb_run_rank_line(r, &x->p);
	printf(" work=%s samples=%llu lost_samples=%llu "
	       "seconds=%.3f min_%s=%llu mean_%s=%.2f max_%s=%llu lost_percent=%.4f",
	       r->work->name, (unsigned long long)x->p.samples, (unsigned long long)x->lost_samples, x->seconds, u,
	       (unsigned long long)x->min, u, x->mean, u, (unsigned long long)x->max,
	       x->lost_percent);
	for (int k = 0; k < 4; k++)
		printf(" loss_%s_%s=%.6g", stream_loss_names[k], u, x->loss[k]);
	for (int k = 0; k < 4; k++)
		printf(" loss_%s_us=%.6g", stream_loss_names[k], x->loss[k] * x->us_per_unit);
	printf(" memory_bytes=%llu checkpoints=%llu", (unsigned long long)x->memory_bytes,
	       (unsigned long long)x->checkpoints);
	if (r->inject.duration_us)
		printf(" injections=%llu injections_missed=%llu",
		       (unsigned long long)x->p.injections,
		       (unsigned long long)x->p.injections_missed);
	putchar('\n');
}

static void stream_report(struct nb_run *r, const struct nb_quantum *q,
			  const struct stream_result *all, int n, int signo)
{
	struct nb_json j;
	uint64_t total = 0;
	char name[4200];

	for (int i = 0; i < n; i++) {
		stream_summary(r, q, &all[i]);
		total += all[i].p.samples;
	}
	nb_run_json_head(r, &j, signo);
	json_work(r, q, &j);
	nb_json_object(&j, "stream");
	nb_json_double(&j, "seconds_requested", r->stream.seconds);
	nb_json_double(&j, "checkpoint_s", r->stream.checkpoint_s);
	nb_json_int(&j, "top", r->stream.top);
	nb_json_double(&j, "context_s", r->stream.context_s);
	nb_json_int(&j, "writer_cpu", r->writer_cpu);
	nb_json_double(&j, "writer_cpu_ms", r->writer_cpu_ms);
	nb_json_end(&j, '}');
	nb_json_array(&j, "ranks");
	for (int i = 0; i < n; i++) {
		const struct stream_result *x = &all[i];
		const char *slash = strrchr(r->prefix, '/');

		nb_run_json_participant(r, &j, &x->p);
		snprintf(name, sizeof(name), "%s_%d_stream.json", slash ? slash + 1 : r->prefix,
			 x->p.rank);
		nb_json_string(&j, "stream_file", name);
		nb_json_uint(&j, "lost_samples", x->lost_samples);
		nb_json_double(&j, "seconds", x->seconds);
		nb_json_uint(&j, "reference", x->reference);
		nb_json_double(&j, "lost_percent", x->lost_percent);
		nb_json_object(&j, "loss");
		nb_json_string(&j, "unit", q->value_unit);
		for (int k = 0; k < 4; k++)
			nb_json_double(&j, stream_loss_names[k], x->loss[k]);
		nb_json_end(&j, '}');
		nb_json_object(&j, "loss_us");
		for (int k = 0; k < 4; k++)
			nb_json_double(&j, stream_loss_names[k], x->loss[k] * x->us_per_unit);
		nb_json_end(&j, '}');
		nb_json_uint(&j, "memory_bytes", x->memory_bytes);
		nb_json_uint(&j, "checkpoints", x->checkpoints);
		nb_json_double(&j, "checkpoint_ms_max", x->checkpoint_ms_max);
		nb_json_end(&j, '}');
	}
	nb_json_end(&j, ']');
	nb_run_json_tail(r, &j, n, total);
}

static void finish_stream(struct nb_run *r, const struct nb_quantum *q, int signo)
{
	struct nb_ranks *rk = &r->ranks;
	struct stream_result *mine = calloc(rk->nlocal, sizeof(*mine)), *all;
	int n;

	if (!mine)
		nb_fail(NB_EXIT_FAILURE, "out of memory while writing the results");
	r->writer_cpu = nb_stream_writer_finish(r->writer, signo == 0, &r->writer_cpu_ms);
	nb_run_commit_files(r);
	for (int i = 0; i < rk->nlocal; i++) {
		const struct nb_stream *s = &r->streams[i];
		struct stream_result *x = &mine[i];
		double span = s->samples ? (double)(s->last_tick - s->start_tick) : 0;

		nb_run_participant(r, i, s->samples, &x->p);
		x->lost_samples = s->lost;
		x->min = s->samples ? s->min : 0;
		x->max = s->max;
		x->mean = s->samples ? s->sum / (double)s->samples : NAN;
		x->seconds = span / s->ticks_per_s;
		x->lost_percent = span > 0 ? 100.0 * s->lost_ticks / span : NAN;
		x->reference = s->reference;
		x->us_per_unit = (s->kind == NB_STREAM_FWQ ? 1 : (double)s->quantum_ticks /
								   (double)(s->reference ? s->reference : 1)) /
				 (s->ticks_per_s / 1e9) / 1e3;
		x->loss[3] = 0;
		for (int e = 0; e < s->top; e++)
			x->loss[3] = s->events[e].loss > x->loss[3] ? s->events[e].loss : x->loss[3];
		/* a bucket's upper edge, but never past the longest loss itself */
		for (int k = 0; k < 3; k++)
			x->loss[k] = fmin(nb_stream_quantile(s, stream_probs[k]), x->loss[3]);
		x->memory_bytes = s->memory_bytes;
		x->checkpoints = s->checkpoints;
		x->checkpoint_ms_max = s->checkpoint_ms_max;
	}
	all = nb_run_collect(r, mine, sizeof(*mine), signo, &n);
	if (rk->root)
		stream_report(r, q, all, n, signo);
	free(all);
	free(mine);
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

		r->work->fwq(&t->work, ring + slot * s->chunk_samples, s->chunk_samples, loops,
			     &s->chunks[slot].first_tick);
		if (seq == 0)
			t->start_tick = s->chunks[0].first_tick;
		__atomic_store_n(&s->chunks[slot].seq, seq + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&s->done, seq + 1, __ATOMIC_RELEASE);
	}
}

void nb_quantum_finish(struct nb_run *r, const struct nb_quantum *q, int signo)
{
	struct nb_ranks *rk = &r->ranks;

	if (r->stream.on) {
		finish_stream(r, q, signo);
		return;
	}
	struct result *mine = calloc(rk->nlocal, sizeof(*mine)), *all;
	int n;

	if (!mine)
		nb_fail(NB_EXIT_FAILURE, "out of memory while writing the results");
	for (int i = 0; i < rk->nlocal; i++) {
		size_t taken = nb_run_taken(r, i, signo);

		if (r->to_stdout)
			printf("# rank %d cpu %d\n", rk->local[i].index, rk->local[i].cpu);
		q->write(r, i, taken);
		nb_run_participant(r, i, taken, &mine[i].p);
	}
	nb_run_commit_files(r);
	/* The samples are on disk: the buffers may now be reordered for the
	 * stats, once their order has been read for the speed and the causes. */
	for (int i = 0; i < rk->nlocal; i++) {
		struct nb_thread *t = &rk->local[i];
		size_t taken = mine[i].p.samples;

		if (r->trace_opt) {
			struct nb_cause_detour *d = NULL;
			size_t nd = q->detours(r, t, taken, &d);

			nb_run_attribute(r, i, d, nd, &mine[i].p.causes);
			free(d);
		}
		if (q->speed)
			q->speed(t, taken, &mine[i].speed);
		uint64_t *values = q->values(t, taken);

		nb_stats_compute(values, taken, &mine[i].stats); /* sorts them */
		q->tails(&mine[i].p, values, taken, &mine[i].tails);
		robust_best(values, taken, &mine[i]);
	}
	all = nb_run_collect(r, mine, sizeof(*mine), signo, &n);
	if (rk->root)
		report(r, q, all, n, signo);
	free(all);
	free(mine);
}

double nb_quantum_ticks_per_work_loop(struct nb_run *r)
{
	static double ticks;
	struct nb_work_ctx ctx;

	if (ticks == 0) {
		nb_work_ctx_init(&ctx, r->daxpy_len);
		ticks = nb_work_ticks_per_loop(r->work, &ctx, r->cal.ticks_per_ns);
		nb_work_ctx_free(&ctx);
	}
	return ticks;
}
