/* A streamed run's results (--stream, stream.h), whatever its kernel: what
 * each participant's stream found, in the kernel's unit and as time. */
#include <math.h>
#include <string.h>

#include "driver.h"

struct record {
	struct nb_participant p;
	uint64_t lost_samples, min, max, memory_bytes, checkpoints, reference;
	double seconds, mean, lost_percent, stolen_percent, checkpoint_ms_max;
	double ci_low, ci_high; /* the stolen share's 95% interval */
	int narrow;             /* --until-ci stopped it */
	double loss[4]; /* p50, p99, p99.9 and the max, in the kernel's unit */
	double us_per_unit;  /* FTQ: a count of the reference quantum as time */
};

static const double probs[] = { 0.5, 0.99, 0.999, 1 };
static const char *const loss_names[] = { "p50", "p99", "p99_9", "max" };

/* A fixed-work stream's values are ticks (P-SNAP's too); FTQ's, its unit. */
static const char *unit(const struct nb_run *r)
{
	return r->k->stream_kind == NB_STREAM_FIXED_WORK ? "ticks" : r->k->value_unit;
}

static size_t taken(struct nb_run *r, int local, int signo)
{
	(void)signo;
	return r->ranks.local[local].stream->samples;
}

static void summarise(struct nb_run *r, int local, size_t n, void *record)
{
	const struct nb_stream *s = r->ranks.local[local].stream;
	struct record *x = record;
	double span = n ? (double)(s->last_tick - s->start_tick) : 0;

	x->lost_samples = s->lost;
	x->min = n ? s->min : 0;
	x->max = s->max;
	x->mean = n ? s->sum / (double)n : NAN;
	x->seconds = span / s->ticks_per_s;
	x->lost_percent = span > 0 ? 100.0 * s->lost_ticks / span : NAN;
	x->stolen_percent = nb_stream_stolen_percent(s);
	nb_stream_stolen_interval(s, &x->ci_low, &x->ci_high);
	x->narrow = s->stop_s > 0;
	x->reference = s->reference;
	x->us_per_unit = (s->kind == NB_STREAM_FIXED_WORK ? 1 : (double)s->quantum_ticks /
							   (double)(s->reference ? s->reference : 1)) /
			 (s->ticks_per_s / 1e9) / 1e3;
	x->loss[3] = 0;
	for (int e = 0; e < s->top; e++)
		x->loss[3] = s->events[e].loss > x->loss[3] ? s->events[e].loss : x->loss[3];
	/* a bucket's upper edge, but never past the longest loss itself */
	for (int k = 0; k < 3; k++)
		x->loss[k] = fmin(nb_stream_quantile(s, probs[k]), x->loss[3]);
	x->memory_bytes = s->memory_bytes;
	x->checkpoints = s->checkpoints;
	x->checkpoint_ms_max = s->checkpoint_ms_max;
}

static void print(const struct nb_run *r, const void *record, FILE *out)
{
	const struct record *x = record;
	const char *u = unit(r);

	fprintf(out, " work=%s samples=%llu lost_samples=%llu seconds=%.3f min_%s=%llu "
		"mean_%s=%.2f max_%s=%llu stolen_percent=%.4f stolen_ci95_low=%.4f "
		"stolen_ci95_high=%.4f lost_percent=%.4f",
		r->work->name, (unsigned long long)x->p.samples,
		(unsigned long long)x->lost_samples,
		x->seconds, u, (unsigned long long)x->min, u, x->mean, u,
		(unsigned long long)x->max, x->stolen_percent, x->ci_low, x->ci_high,
		x->lost_percent);
	/* named as every rank line names its tail (p99_9_loss_us, max_loss_us),
	 * so that a site's rules on the tail judge a soak's lines too */
	for (int k = 0; k < 4; k++)
		fprintf(out, " %s_loss_%s=%.6g", loss_names[k], u, x->loss[k]);
	for (int k = 0; k < 4; k++)
		fprintf(out, " %s_loss_us=%.6g", loss_names[k], x->loss[k] * x->us_per_unit);
	fprintf(out, " memory_bytes=%llu checkpoints=%llu", (unsigned long long)x->memory_bytes,
		(unsigned long long)x->checkpoints);
}

static void json_run(const struct nb_run *r, struct nb_json *j, int n)
{
	(void)n;
	nb_json_double(j, "ticks_per_work_loop_min", nb_run_ticks_per_work_loop(r));
	nb_json_object(j, "stream");
	nb_json_double(j, "seconds_requested", r->stream.seconds);
	nb_json_double(j, "checkpoint_s", r->stream.checkpoint_s);
	nb_json_int(j, "top", r->stream.top);
	nb_json_double(j, "context_s", r->stream.context_s);
	nb_json_double(j, "until_ci", r->stream.until_ci);
	nb_json_int(j, "writer_cpu", r->d->writer_cpu);
	nb_json_double(j, "writer_cpu_ms", r->d->writer_cpu_ms);
	nb_json_end(j, '}');
}

static void json_rank(const struct nb_run *r, struct nb_json *j, const void *record)
{
	const struct record *x = record;
	const char *slash = strrchr(r->prefix, '/');
	char name[4200];

	snprintf(name, sizeof(name), "%s_%d_stream.json", slash ? slash + 1 : r->prefix,
		 x->p.rank);
	nb_json_string(j, "stream_file", name);
	nb_json_uint(j, "lost_samples", x->lost_samples);
	nb_json_double(j, "seconds", x->seconds);
	nb_json_string(j, "stopped_by", x->narrow		? "interval"
					: nb_run_signal(r) ? "signal"
							   : "seconds");
	nb_json_uint(j, "reference", x->reference);
	nb_json_double(j, "stolen_percent", x->stolen_percent);
	nb_json_double(j, "stolen_ci95_low", x->ci_low);
	nb_json_double(j, "stolen_ci95_high", x->ci_high);
	nb_json_double(j, "lost_percent", x->lost_percent);
	nb_json_object(j, "loss");
	nb_json_string(j, "unit", unit(r));
	for (int k = 0; k < 4; k++)
		nb_json_double(j, loss_names[k], x->loss[k]);
	nb_json_end(j, '}');
	nb_json_object(j, "loss_us");
	for (int k = 0; k < 4; k++)
		nb_json_double(j, loss_names[k], x->loss[k] * x->us_per_unit);
	nb_json_end(j, '}');
	nb_json_uint(j, "memory_bytes", x->memory_bytes);
	nb_json_uint(j, "checkpoints", x->checkpoints);
	nb_json_double(j, "checkpoint_ms_max", x->checkpoint_ms_max);
}

const struct nb_results nb_stream_results = {
	.size = sizeof(struct record),
	.taken = taken,
	.summarise = summarise,
	.print = print,
	.json_run = json_run,
	.json_rank = json_rank,
};
