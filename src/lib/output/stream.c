#define _GNU_SOURCE
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpuset.h"
#include "speed.h"
#include "json.h"
#include "errors.h"
#include "outfile.h"
#include "samples.h"
#include "tails.h"
#include "timer.h"

/* A chunk lasts about this long: the threads stop within it of being told. */
#define CHUNK_S 0.01
/* How far the writer may fall behind before samples are overwritten unread,
 * beyond what the events' samples need kept. */
#define LAG_S 4.0
#define POLL_NS 20000000L
/* --until-ci looks at the intervals this often. A look bootstraps one
 * stream after another and stops at the first not yet narrow, so it
 * usually costs one bootstrap, and every stream's only near the end. */
#define UNTIL_CI_EVERY_S 0.5

struct nb_stream_writer {
	struct nb_stream **s;
	int n;
	const struct nb_stream_opts *o;
	pthread_t thread;
	int cpu;
	int quit;
	double cpu_ms;
};

static size_t chunk_samples_for(double sample_time_ticks, double ticks_per_ns)
{
	double per_chunk = CHUNK_S * 1e9 * ticks_per_ns / sample_time_ticks;

	/* at most 4096: the writer copies a chunk onto its stack */
	return per_chunk < 1 ? 1 : per_chunk > 4096 ? 4096 : (size_t)per_chunk;
}

static uint64_t context_samples_for(const struct nb_stream_opts *o, double sample_time_ticks,
				    double ticks_per_ns)
{
	return (uint64_t)ceil(o->context_s * 1e9 * ticks_per_ns / sample_time_ticks);
}

/* Chunks enough for the events' samples and the writer's lag, twice over:
 * the writer clears the quarter of the ring ahead of the thread (so that the
 * chunk under way at a signal tells its new samples from old ones). */
static unsigned nchunks_for(const struct nb_stream_opts *o, size_t chunk_samples,
			    double sample_time_ticks, double ticks_per_ns)
{
	double chunk_s = (double)chunk_samples * sample_time_ticks / ticks_per_ns / 1e9;
	double want = 2 * (2 * o->context_s + LAG_S) / chunk_s + 8;
	unsigned n = 16;

	while (n < want && n < (1u << 30))
		n <<= 1;
	return n;
}

size_t nb_stream_memory(const struct nb_stream_opts *o, double sample_time_ticks,
			double ticks_per_ns, size_t sample_size)
{
	size_t m = chunk_samples_for(sample_time_ticks, ticks_per_ns);
	unsigned n = nchunks_for(o, m, sample_time_ticks, ticks_per_ns);
	uint64_t raw = 2 * context_samples_for(o, sample_time_ticks, ticks_per_ns) + 1;

	return (size_t)n * m * sample_size + n * (sizeof(struct nb_stream_chunk) + sizeof(uint64_t)) +
	       sizeof(struct nb_stream) +
	       (size_t)o->top * (sizeof(struct nb_stream_event) + raw * 2 * sizeof(uint64_t));
}

void nb_stream_init(struct nb_stream *s, const struct nb_stream_opts *o, enum nb_stream_kind kind,
		    double sample_time_ticks, double ticks_per_ns)
{
	s->kind = kind;
	s->sample_size = kind == NB_STREAM_FIXED_WORK ? sizeof(uint64_t) : 2 * sizeof(uint64_t);
	s->done_word = kind == NB_STREAM_FIXED_WORK ? 0 : sizeof(uint64_t);
	s->ticks_per_s = ticks_per_ns * 1e9;
	s->chunk_samples = chunk_samples_for(sample_time_ticks, ticks_per_ns);
	s->nchunks = nchunks_for(o, s->chunk_samples, sample_time_ticks, ticks_per_ns);
	s->ring = nb_samples_alloc((size_t)s->nchunks * s->chunk_samples, s->sample_size);
	s->chunks = nb_samples_alloc(s->nchunks, sizeof(*s->chunks));
	memset(s->chunks, 0, s->nchunks * sizeof(*s->chunks));
	s->top = o->top;
	s->context_samples = context_samples_for(o, sample_time_ticks, ticks_per_ns);
	s->raw_capacity = 2 * s->context_samples + 1;
	s->events = calloc((size_t)o->top, sizeof(*s->events));
	s->gaps = calloc(s->nchunks, sizeof(*s->gaps));
	if (!s->events || !s->gaps)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the stream's events");
	for (int i = 0; i < o->top; i++)
		s->events[i].raw = nb_samples_alloc(s->raw_capacity, 2 * sizeof(uint64_t));
	s->min = UINT64_MAX;
	s->memory_bytes = nb_stream_memory(o, sample_time_ticks, ticks_per_ns, s->sample_size);
}

void nb_stream_free(struct nb_stream *s)
{
	nb_samples_free(s->ring, (size_t)s->nchunks * s->chunk_samples, s->sample_size);
	nb_samples_free(s->chunks, s->nchunks, sizeof(*s->chunks));
	for (int i = 0; s->events && i < s->top; i++)
		nb_samples_free(s->events[i].raw, s->raw_capacity, 2 * sizeof(uint64_t));
	free(s->events);
	free(s->gaps);
	if (s->seconds_file)
		fclose(s->seconds_file);
	memset(s, 0, sizeof(*s));
}

static void file_path(const struct nb_stream *s, const char *suffix, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", s->path, suffix);
}

/* The part after the directory, as the JSON names files. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static uint64_t *sample_at(const struct nb_stream *s, uint64_t seq, size_t i)
{
	size_t slot = (size_t)(seq & (s->nchunks - 1));

	return (uint64_t *)((char *)s->ring + (slot * s->chunk_samples + i) * s->sample_size);
}

static int bucket_of(double loss)
{
	if (loss < 1)
		return 0;
	int b = 1 + (int)floor(log(loss) / log(NB_STREAM_GROWTH));

	return b < NB_STREAM_BUCKETS ? b : NB_STREAM_BUCKETS - 1;
}

double nb_stream_quantile(const struct nb_stream *s, double p)
{
	uint64_t total = 0, seen = 0;

	for (int b = 0; b < NB_STREAM_BUCKETS; b++)
		total += s->hist[b];
	if (!total)
		return NAN;
	uint64_t k = (uint64_t)ceil(p * (double)total);

	k = k ? k : 1;
	for (int b = 0; b < NB_STREAM_BUCKETS; b++) {
		seen += s->hist[b];
		if (seen >= k)
			return b ? pow(NB_STREAM_GROWTH, b) : 0;
	}
	return NAN;
}

/* The loss of a sample (nb_loss, against the reference), in its unit and in
 * ticks: an FTQ count short of the reference is that share of a quantum. */
static double loss_of(const struct nb_stream *s, uint64_t value, double *ticks)
{
	int falling = s->kind == NB_STREAM_FIXED_TIME;
	double l = nb_loss((double)value, (double)s->reference, 1, falling);

	*ticks = !falling ? l : s->reference ? l / (double)s->reference * (double)s->quantum_ticks : 0;
	return l;
}

double nb_stream_stolen_percent(const struct nb_stream *s)
{
	return s->covered_ticks > 0 ? 100.0 * s->stolen_ticks / s->covered_ticks : NAN;
}

void nb_stream_stolen_interval(const struct nb_stream *s, double *low, double *high)
{
	nb_speed_interval(s->group_stolen, s->group_covered, s->groups, low, high);
}

/* A chunk's split into the groups: a fixed number of them however long the
 * run, so the interval costs the same at any length. */
static void group_add(struct nb_stream *s, double stolen, double covered)
{
	if (s->groups == 0 || s->group_fill == s->group_chunks) {
		if (s->groups == NB_STOLEN_GROUPS) {
			for (size_t k = 0; k < NB_STOLEN_GROUPS / 2; k++) {
				s->group_stolen[k] = s->group_stolen[2 * k] + s->group_stolen[2 * k + 1];
				s->group_covered[k] = s->group_covered[2 * k] + s->group_covered[2 * k + 1];
			}
			s->groups = NB_STOLEN_GROUPS / 2;
			s->group_chunks *= 2;
		}
		s->group_chunks = s->group_chunks ? s->group_chunks : 1;
		s->group_stolen[s->groups] = s->group_covered[s->groups] = 0;
		s->groups++;
		s->group_fill = 0;
	}
	s->group_stolen[s->groups - 1] += stolen;
	s->group_covered[s->groups - 1] += covered;
	s->group_fill++;
}

static void emit_second(struct nb_stream *s)
{
	const struct nb_stream_second *n = &s->now;

	if (!n->n || !s->seconds_file)
		return;
	/* of the time its samples covered: the first and last second are partial */
	double covered = s->kind == NB_STREAM_FIXED_WORK ? n->sum : (double)n->n * (double)s->quantum_ticks;

	fprintf(s->seconds_file, "%llu %llu %llu %llu %.3f %.6f %.6f\n",
		(unsigned long long)s->second, (unsigned long long)n->n,
		(unsigned long long)n->min, (unsigned long long)n->max, n->sum / (double)n->n,
		covered > 0 ? 100.0 * n->lost_ticks / covered : 0,
		n->covered_ticks > 0 ? 100.0 * n->stolen_ticks / n->covered_ticks : NAN);
}

static void events_file(const struct nb_stream *s, unsigned gen, char *buf, size_t size)
{
	char name[64];

	snprintf(name, sizeof(name), "events_%u.dat", gen);
	file_path(s, name, buf, size);
}

static void forget_event(struct nb_stream *s, struct nb_stream_event *e)
{
	/* its bytes stay in the events file, which the last checkpoint names,
	 * until a checkpoint writes the kept events into a new one */
	if (e->written)
		s->events_live_bytes -= e->bytes;
	uint64_t *raw = e->raw;

	memset(e, 0, sizeof(*e));
	e->raw = raw;
}

/* Keeps the K longest losses: a new one takes the place of the shortest. */
static void consider_event(struct nb_stream *s, uint64_t index, uint64_t value, uint64_t tick,
			   double loss)
{
	struct nb_stream_event *low = NULL;

	for (int i = 0; i < s->top; i++) {
		struct nb_stream_event *e = &s->events[i];

		if (e->loss == 0) {
			low = e;
			break;
		}
		if (!low || e->loss < low->loss)
			low = e;
	}
	if (!low || (low->loss != 0 && low->loss >= loss))
		return;
	forget_event(s, low);
	low->index = index;
	low->value = value;
	low->tick = tick;
	low->loss = loss;
	low->first = index > s->context_samples ? index - s->context_samples : 0;
}

static void fold_sample(struct nb_stream *s, uint64_t index, uint64_t value, uint64_t tick)
{
	double ticks, loss = loss_of(s, value, &ticks);
	uint64_t second = (uint64_t)((double)(tick - s->start_tick) / s->ticks_per_s);

	s->samples++;
	s->min = value < s->min ? value : s->min;
	s->max = value > s->max ? value : s->max;
	s->sum += (double)value;
	s->lost_ticks += ticks;
	s->hist[bucket_of(loss)]++;
	s->last_tick = tick;
	if (second != s->second && s->now.n) {
		emit_second(s);
		memset(&s->now, 0, sizeof(s->now));
	}
	s->second = second;
	struct nb_stream_second *n = &s->now;

	n->min = n->n == 0 || value < n->min ? value : n->min;
	n->max = value > n->max ? value : n->max;
	n->n++;
	n->sum += (double)value;
	n->lost_ticks += ticks;
	if (loss > 0)
		consider_event(s, index, value, tick, loss);
}

/* Each sample of chunk `seq` (the first `count`), as value and end tick. */
static void chunk_samples(const struct nb_stream *s, uint64_t seq, size_t count, uint64_t *value,
			  uint64_t *tick)
{
	uint64_t at = s->chunks[seq & (s->nchunks - 1)].first_tick;

	for (size_t i = 0; i < count; i++) {
		const uint64_t *x = sample_at(s, seq, i);

		value[i] = x[0];
		if (s->kind == NB_STREAM_FIXED_WORK) {
			at += x[0];
			tick[i] = at;
		} else {
			tick[i] = x[1];
		}
	}
}

/* The chunk `seq` still holds its own samples: the thread has not come
 * round to its slot again. */
static int chunk_intact(const struct nb_stream *s, uint64_t seq)
{
	uint64_t done = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);

	/* the thread is filling chunk `done` (seq done + 1 stored when it ends) */
	return seq + s->nchunks > done;
}

/* Copies the samples around each event whose later samples are all folded
 * in; at the end of the run (`final`), with the later samples there are. */
static void capture_events(struct nb_stream *s, uint64_t folded_samples_end, int final)
{
	for (int i = 0; i < s->top; i++) {
		struct nb_stream_event *e = &s->events[i];

		if (e->loss == 0 || e->n ||
		    (!final && e->index + s->context_samples >= folded_samples_end))
			continue;
		uint64_t first = e->first, last = e->index + s->context_samples, k = 0;

		if (last >= folded_samples_end)
			last = folded_samples_end - 1;
		uint64_t m = s->chunk_samples;
		uint64_t values[m], ticks[m];

		for (uint64_t seq = first / m; seq <= last / m; seq++) {
			/* the chunk under way at the end holds the samples it took */
			int under_way = final && seq == __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);

			if (!chunk_intact(s, seq) ||
			    (!under_way && __atomic_load_n(&s->chunks[seq & (s->nchunks - 1)].seq,
							   __ATOMIC_ACQUIRE) != seq + 1)) {
				k = 0; /* gone: the event keeps no samples */
				break;
			}
			chunk_samples(s, seq, m, values, ticks);
			values[0] += s->gaps[seq & (s->nchunks - 1)]; /* as folded in */
			for (uint64_t j = 0; j < m; j++) {
				uint64_t idx = seq * m + j;

				if (idx < first || idx > last || k >= s->raw_capacity)
					continue;
				e->raw[2 * k] = values[j];
				e->raw[2 * k + 1] = ticks[j];
				k++;
			}
		}
		if (!chunk_intact(s, first / m))
			k = 0;
		/* samples overwritten before the writer came to them: the event is
		 * kept without them */
		e->n = k ? k : UINT64_MAX;
	}
}

/* FWQ: the ticks between the sample that ended at `prev_end` (0: none) and
 * chunk seq's first, the loop returning and being called again. They belong
 * to that first sample, so that every tick of the run is in some sample. */
static uint64_t gap_before(const struct nb_stream *s, uint64_t seq, uint64_t prev_end)
{
	uint64_t first = s->chunks[seq & (s->nchunks - 1)].first_tick;

	return s->kind == NB_STREAM_FIXED_WORK && prev_end && first > prev_end ? first - prev_end : 0;
}

/* The reference: the best sample of the chunks that cover the first second
 * (or all of a shorter run's), each as fold_chunk will fold it in. */
static void choose_reference(struct nb_stream *s, uint64_t done)
{
	uint64_t m = s->chunk_samples, values[m], ticks[m], prev_end = 0;
	uint64_t best = s->kind == NB_STREAM_FIXED_WORK ? UINT64_MAX : 0;

	for (uint64_t seq = 0; seq < done && seq < s->nchunks; seq++) {
		chunk_samples(s, seq, m, values, ticks);
		values[0] += gap_before(s, seq, prev_end);
		prev_end = ticks[m - 1];
		for (uint64_t j = 0; j < m; j++)
			best = s->kind == NB_STREAM_FIXED_WORK ? (values[j] < best ? values[j] : best)
							: (values[j] > best ? values[j] : best);
		if ((double)(ticks[m - 1] - s->start_tick) >= s->ticks_per_s)
			break;
	}
	s->reference = best;
	s->have_reference = 1;
}

static int first_second_done(const struct nb_stream *s, uint64_t done)
{
	if (done == 0)
		return 0;
	uint64_t m = s->chunk_samples, values[m], ticks[m];

	if (done >= s->nchunks / 2)
		return 1;
	chunk_samples(s, done - 1, m, values, ticks);
	return (double)(ticks[m - 1] - s->start_tick) >= s->ticks_per_s;
}

/* A chunk's samples as speed.h reads them: fixed work's one unit each,
 * fixed time's the quantum since the one before with its count. */
struct chunk_view {
	const uint64_t *values, *ticks;
	uint64_t before; /* the tick the first sample started at */
	enum nb_stream_kind kind;
};

static struct nb_speed_sample chunk_sample(const void *ctx, size_t i)
{
	const struct chunk_view *c = ctx;

	if (c->kind == NB_STREAM_FIXED_WORK)
		return (struct nb_speed_sample){ (double)c->values[i], 1 };
	uint64_t from = i ? c->ticks[i - 1] : c->before;

	return (struct nb_speed_sample){ (double)(c->ticks[i] - from), (double)c->values[i] };
}

/* What the system stole in a chunk of samples, the chunk its own window. */
static void stolen_in(struct nb_stream *s, const uint64_t *values, const uint64_t *ticks,
		      size_t count, uint64_t before)
{
	struct chunk_view c = { values, ticks, before, s->kind };
	struct nb_speed split;

	nb_speed_split(count, chunk_sample, &c, 0, 0, s->ticks_per_s / 1e9, &split);
	s->stolen_ticks += split.stolen_ticks;
	s->covered_ticks += split.total_ticks;
	/* a chunk (about 10 ms) counts in the second its last sample is in */
	s->now.stolen_ticks += split.stolen_ticks;
	s->now.covered_ticks += split.total_ticks;
	group_add(s, split.stolen_ticks, split.total_ticks);
}

/* Folds chunk seq's first `count` samples in, if they are still its own. */
static void fold_chunk(struct nb_stream *s, uint64_t seq, size_t count)
{
	uint64_t m = s->chunk_samples, values[m], ticks[m];

	chunk_samples(s, seq, count, values, ticks);
	s->gaps[seq & (s->nchunks - 1)] = 0;
	int ok = chunk_intact(s, seq);

	for (size_t j = 0; ok && j < count; j++)
		if (values[j] == NB_SAMPLE_UNSET || (s->kind == NB_STREAM_FIXED_TIME && ticks[j] == NB_SAMPLE_UNSET))
			ok = 0;
	if (!ok) {
		s->lost += count;
		s->after_loss = 1;
		return;
	}
	/* after a lost chunk the gap would span the lost chunks' time: none */
	if (count && !s->after_loss) {
		s->gaps[seq & (s->nchunks - 1)] = gap_before(s, seq, s->last_tick);
		values[0] += s->gaps[seq & (s->nchunks - 1)];
	}
	s->after_loss = 0;
	uint64_t before = s->last_tick ? s->last_tick : s->start_tick;

	for (size_t j = 0; j < count; j++)
		fold_sample(s, seq * m + j, values[j], ticks[j]);
	stolen_in(s, values, ticks, count, before);
}

/* Clears the slot a quarter of the ring ahead of chunk seq, if the thread
 * has not reached it. */
static void clear_ahead(struct nb_stream *s, uint64_t seq)
{
	uint64_t ahead = seq + s->nchunks / 4;

	if (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) + 1 >= ahead)
		return;
	memset(sample_at(s, ahead, 0), 0xff, s->chunk_samples * s->sample_size);
}

/* Folds every chunk done since the last call; with `partial`, also the
 * samples of the chunk under way (the threads are stopping). */
static void fold_ready(struct nb_stream *s, int partial)
{
	uint64_t done = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);

	if (!s->have_reference) {
		if (!first_second_done(s, done) && !partial)
			return;
		choose_reference(s, done);
	}
	if (done > s->folded_seq + s->nchunks) {
		/* the thread came round before the writer: those chunks are gone */
		uint64_t skip = done - s->nchunks - s->folded_seq;

		s->lost += skip * s->chunk_samples;
		s->folded_seq += skip;
		s->after_loss = 1;
	}
	for (; s->folded_seq < done; s->folded_seq++) {
		fold_chunk(s, s->folded_seq, s->chunk_samples);
		clear_ahead(s, s->folded_seq);
	}
	if (partial) {
		size_t taken = nb_samples_taken(sample_at(s, done, 0), s->chunk_samples,
						s->sample_size, s->done_word);

		if (taken)
			fold_chunk(s, done, taken);
	}
	capture_events(s, s->samples + s->lost, partial);
}

static int sync_file(FILE *f)
{
	return fflush(f) != 0 || fdatasync(fileno(f)) != 0 ? -1 : 0;
}

/* Writes `path` through a temporary name, on disk before the rename: whole
 * or not at all, and a checkpoint survives a crash. */
static int write_atomically(const char *path, void (*fill)(struct nb_stream *s, FILE *f),
			    struct nb_stream *s)
{
	struct nb_outfile *o = nb_outfile_open(path);

	if (!o)
		return -1;
	fill(s, o->f);
	if (nb_outfile_sync(o) != 0) {
		nb_outfile_discard(o);
		return -1;
	}
	return nb_outfile_commit(o);
}

/* An event's samples, a line each; returns the bytes written, or -1. */
static int64_t write_event(FILE *f, const struct nb_stream_event *e)
{
	int64_t bytes = 0;

	for (uint64_t k = 0; k < e->n; k++) {
		int w = fprintf(f, "%llu %llu\n", (unsigned long long)e->raw[2 * k],
				(unsigned long long)e->raw[2 * k + 1]);

		if (w < 0)
			return -1;
		bytes += w;
	}
	return bytes;
}

static int event_pending(const struct nb_stream_event *e)
{
	return e->loss != 0 && !e->written && e->n && e->n != UINT64_MAX;
}

/* Writes the samples of the events not yet on disk, appended to the rank's
 * one events file (a file an event would make a soak of 10^6 cores 10^7
 * files). Ranges the last checkpoint's JSON names are never rewritten: when
 * more than half of the file is dropped events, the kept ones and the new go
 * into the next generation's file, under a temporary name, and *old is set to
 * the generation to remove once the JSON naming the new one is written. */
static int write_events(struct nb_stream *s, int *old)
{
	char path[4200];
	int pending = 0;

	*old = -1;
	for (int i = 0; i < s->top; i++)
		pending |= event_pending(&s->events[i]);
	if (!pending)
		return 0;
	int fresh = s->events_file_bytes == 0 ||
		    s->events_file_bytes - s->events_live_bytes > s->events_live_bytes;
	struct nb_outfile *o = NULL;
	FILE *f;
	uint64_t at = fresh ? 0 : s->events_file_bytes;

	if (fresh && s->events_file_bytes) {
		*old = (int)s->events_gen;
		s->events_gen++;
	}
	events_file(s, s->events_gen, path, sizeof(path));
	if (fresh) {
		if (!(o = nb_outfile_open(path)))
			return -1;
		f = o->f;
	} else if (!(f = fopen(path, "a"))) {
		return -1;
	}
	for (int i = 0; i < s->top; i++) {
		struct nb_stream_event *e = &s->events[i];

		if (!event_pending(e) && !(fresh && e->loss != 0 && e->written))
			continue;
		int64_t bytes = write_event(f, e);

		if (bytes < 0)
			break;
		e->offset = at;
		e->bytes = (uint64_t)bytes;
		e->written = 1;
		at += (uint64_t)bytes;
	}
	int failed = ferror(f);

	if (fresh) {
		if (failed || nb_outfile_sync(o) != 0) {
			nb_outfile_discard(o);
			return -1;
		}
		if (nb_outfile_commit(o) != 0)
			return -1;
	} else if (failed | sync_file(f) | fclose(f)) {
		return -1;
	}
	s->events_file_bytes = at;
	s->events_live_bytes = 0;
	for (int i = 0; i < s->top; i++)
		if (s->events[i].loss != 0 && s->events[i].written)
			s->events_live_bytes += s->events[i].bytes;
	return 0;
}

static int complete_flag;

static void fill_json(struct nb_stream *s, FILE *f)
{
	struct nb_json j;
	char path[4200];

	nb_json_open(&j, f);
	nb_json_object(&j, NULL);
	nb_json_string(&j, "stream_of", s->kernel);
	nb_json_bool(&j, "complete", complete_flag);
	nb_json_int(&j, "rank", s->rank);
	nb_json_int(&j, "cpu", s->cpu);
	nb_json_string(&j, "host", s->host);
	nb_json_string(&j, "work", s->work);
	if (s->kind == NB_STREAM_FIXED_WORK)
		nb_json_uint(&j, "work_loops_per_sample",
			     __atomic_load_n(&s->loops, __ATOMIC_RELAXED));
	else
		nb_json_uint(&j, "quantum_ticks", s->quantum_ticks);
	nb_json_double(&j, "ticks_per_ns", s->ticks_per_s / 1e9);
	nb_json_uint(&j, "start_tick", s->start_tick);
	nb_json_string(&j, "unit", s->kind == NB_STREAM_FIXED_WORK ? "ticks" : "counts");
	nb_json_uint(&j, "reference", s->reference);
	nb_json_uint(&j, "samples", s->samples);
	nb_json_uint(&j, "lost_samples", s->lost);
	nb_json_double(&j, "seconds", s->samples ? (double)(s->last_tick - s->start_tick) /
							   s->ticks_per_s : 0);
	nb_json_uint(&j, "min", s->samples ? s->min : 0);
	nb_json_uint(&j, "max", s->max);
	nb_json_double(&j, "mean", s->samples ? s->sum / (double)s->samples : NAN);
	nb_json_double(&j, "lost_percent",
		       s->samples ? 100.0 * s->lost_ticks /
				    (double)(s->last_tick - s->start_tick) : NAN);
	double low, high;

	nb_stream_stolen_interval(s, &low, &high);
	nb_json_double(&j, "stolen_percent", nb_stream_stolen_percent(s));
	nb_json_double(&j, "stolen_ci95_low", low);
	nb_json_double(&j, "stolen_ci95_high", high);
	if (s->stop_s > 0) {
		/* --until-ci: what it stopped at (samples of the chunk under way
		 * came in after it) */
		nb_json_object(&j, "until_ci_stop");
		nb_json_double(&j, "at_s", s->stop_s);
		nb_json_double(&j, "ci95_low", s->stop_ci_low);
		nb_json_double(&j, "ci95_high", s->stop_ci_high);
		nb_json_end(&j, '}');
	}
	nb_json_uint(&j, "checkpoints", s->checkpoints);
	nb_json_double(&j, "checkpoint_ms_max", s->checkpoint_ms_max);
	nb_json_uint(&j, "memory_bytes", s->memory_bytes);
	nb_json_uint(&j, "chunk_samples", s->chunk_samples);
	nb_json_uint(&j, "ring_chunks", s->nchunks);
	nb_json_uint(&j, "context_samples", s->context_samples);
	file_path(s, "seconds.dat", path, sizeof(path));
	nb_json_string(&j, "seconds_file", base_name(path));
	nb_json_object(&j, "histogram");
	nb_json_double(&j, "growth", NB_STREAM_GROWTH);
	nb_json_array(&j, "buckets");
	for (int b = 0; b < NB_STREAM_BUCKETS; b++) {
		if (!s->hist[b])
			continue;
		nb_json_array(&j, NULL);
		nb_json_int(&j, NULL, b);
		nb_json_uint(&j, NULL, s->hist[b]);
		nb_json_end(&j, ']');
	}
	nb_json_end(&j, ']');
	nb_json_end(&j, '}');
	nb_json_array(&j, "events");
	for (int i = 0; i < s->top; i++) {
		const struct nb_stream_event *e = &s->events[i];

		if (e->loss == 0)
			continue;
		nb_json_object(&j, NULL);
		nb_json_uint(&j, "index", e->index);
		nb_json_uint(&j, "tick", e->tick);
		nb_json_uint(&j, "value", e->value);
		nb_json_double(&j, "loss", e->loss);
		if (e->written) {
			events_file(s, s->events_gen, path, sizeof(path));
			nb_json_string(&j, "file", base_name(path));
			nb_json_uint(&j, "offset", e->offset);
			nb_json_uint(&j, "bytes", e->bytes);
			nb_json_uint(&j, "first", e->first);
			nb_json_uint(&j, "samples", e->n);
		} else {
			nb_json_null(&j, "file");
		}
		nb_json_end(&j, '}');
	}
	nb_json_end(&j, ']');
	nb_json_end(&j, '}');
	fputc('\n', f);
}

static double now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Writes a thread's figures out; returns 0, or -1 with errno. */
static int checkpoint(struct nb_stream *s, int complete)
{
	char path[4200];
	double t0 = now_ms(CLOCK_MONOTONIC);
	int old;

	if (s->seconds_file && sync_file(s->seconds_file) != 0)
		return -1;
	if (write_events(s, &old) != 0)
		return -1;
	s->checkpoints++;
	complete_flag = complete;
	file_path(s, "stream.json", path, sizeof(path));
	if (write_atomically(path, fill_json, s) != 0)
		return -1;
	if (old >= 0) {
		events_file(s, (unsigned)old, path, sizeof(path));
		unlink(path);
	}
	double ms = now_ms(CLOCK_MONOTONIC) - t0;

	s->checkpoint_ms_max = ms > s->checkpoint_ms_max ? ms : s->checkpoint_ms_max;
	return 0;
}

static void checkpoint_or_fail(struct nb_stream *s, int complete)
{
	if (checkpoint(s, complete) != 0)
		nb_fail(NB_EXIT_FAILURE, "--stream: cannot write %sstream.json: %s", s->path,
			strerror(errno));
}

/* --until-ci: whether every stream has measured NB_UNTIL_CI_MIN_S and its
 * interval is narrow enough (each stream keeps the interval it was judged
 * by); then the threads stop together, so that none measures beside a CPU
 * already idle. */
static int narrow_enough(const struct nb_stream_writer *w)
{
	for (int i = 0; i < w->n; i++) {
		struct nb_stream *s = w->s[i];
		double at = s->samples ? (double)(s->last_tick - s->start_tick) / s->ticks_per_s : 0;

		if (at < NB_UNTIL_CI_MIN_S)
			return 0;
		nb_stream_stolen_interval(s, &s->stop_ci_low, &s->stop_ci_high);
		s->stop_s = at;
		if (!nb_speed_narrow(s->stop_ci_low, s->stop_ci_high, w->o->until_ci))
			return 0;
	}
	return 1;
}

static void *writer_main(void *arg)
{
	struct nb_stream_writer *w = arg;
	double next = now_ms(CLOCK_MONOTONIC) + w->o->checkpoint_s * 1e3;
	double next_ci = now_ms(CLOCK_MONOTONIC) + UNTIL_CI_EVERY_S * 1e3;
	struct timespec poll = { 0, POLL_NS };

	if (w->cpu >= 0)
		nb_pin_self(w->cpu);
	while (!__atomic_load_n(&w->quit, __ATOMIC_ACQUIRE)) {
		nanosleep(&poll, NULL);
		for (int i = 0; i < w->n; i++) {
			struct nb_stream *s = w->s[i];

			fold_ready(s, 0);
			/* By the clock, not by the samples folded: a writer that
			 * fell behind (a loaded or sanitized machine) would
			 * otherwise let the run go on by its lag. */
			if (w->o->seconds > 0 && s->samples &&
			    (double)(int64_t)(nb_ticks() - s->start_tick) >=
				    w->o->seconds * s->ticks_per_s)
				__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
		}
		/* judged once: after the stop, samples still come in */
		if (w->o->until_ci > 0 && !__atomic_load_n(&w->s[0]->stop, __ATOMIC_ACQUIRE) &&
		    now_ms(CLOCK_MONOTONIC) >= next_ci) {
			if (narrow_enough(w))
				for (int i = 0; i < w->n; i++)
					__atomic_store_n(&w->s[i]->stop, 1, __ATOMIC_RELEASE);
			else
				for (int i = 0; i < w->n; i++)
					w->s[i]->stop_s = 0;
			next_ci += UNTIL_CI_EVERY_S * 1e3;
		}
		if (now_ms(CLOCK_MONOTONIC) >= next) {
			for (int i = 0; i < w->n; i++)
				if (__atomic_load_n(&w->s[i]->done, __ATOMIC_ACQUIRE))
					checkpoint_or_fail(w->s[i], 0);
			next += w->o->checkpoint_s * 1e3;
		}
	}
	w->cpu_ms = now_ms(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

struct nb_stream_writer *nb_stream_writer_start(struct nb_stream **s, int n,
						const struct nb_stream_opts *o, const int *busy_cpus,
						int nbusy)
{
	static struct nb_stream_writer w;
	int cpus[1024], ncpus = nb_cpus_allowed(cpus, 1024);
	char path[4200];

	w = (struct nb_stream_writer){ .s = s, .n = n, .o = o, .cpu = -1 };
	/* a CPU no thread measures, if there is one */
	for (int i = 0; i < ncpus && w.cpu < 0; i++) {
		int busy = 0;

		for (int k = 0; k < nbusy; k++)
			busy |= busy_cpus[k] == cpus[i];
		if (!busy)
			w.cpu = cpus[i];
	}
	for (int i = 0; i < n; i++) {
		file_path(s[i], "seconds.dat", path, sizeof(path));
		s[i]->seconds_file = fopen(path, "w");
		if (!s[i]->seconds_file)
			nb_fail(NB_EXIT_FAILURE, "--stream: cannot create %s: %s", path,
				strerror(errno));
		fputs("# second samples min max mean lost_percent stolen_percent\n",
		      s[i]->seconds_file);
	}
	if (pthread_create(&w.thread, NULL, writer_main, &w) != 0)
		nb_fail(NB_EXIT_FAILURE, "--stream: cannot start the writer thread");
	return &w;
}

int nb_stream_writer_finish(struct nb_stream_writer *w, int complete, double *cpu_ms)
{
	for (int i = 0; i < w->n; i++)
		__atomic_store_n(&w->s[i]->stop, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&w->quit, 1, __ATOMIC_RELEASE);
	pthread_join(w->thread, NULL);
	for (int i = 0; i < w->n; i++) {
		struct nb_stream *s = w->s[i];

		fold_ready(s, 1);
		emit_second(s);
		memset(&s->now, 0, sizeof(s->now));
		checkpoint_or_fail(s, complete);
	}
	*cpu_ms = w->cpu_ms;
	free(w->s);
	w->s = NULL;
	w->n = 0;
	return w->cpu;
}
