/* Streamed runs (--stream): FWQ, FTQ and P-SNAP for any length in fixed
 * memory (P-SNAP's iterations are fixed work, streamed as FWQ's samples).
 *
 * Each measuring thread's loop (the kernel's own, unchanged) fills one chunk
 * of a ring at a time, about 10 ms of samples, and marks it done. A writer
 * thread, on a CPU not measured where there is one, folds every done chunk
 * into the thread's figures: a histogram of the loss in 1% buckets, the K
 * longest losses with the raw samples around each, and one summary line a
 * second. Every checkpoint interval it writes them out: the per-second lines
 * and the events' samples appended and synced, the rest under a temporary
 * name and renamed, so that a run killed by anything loses at most the last
 * interval.
 *
 * The loss of a sample is measured against the reference, the best sample of
 * the run's first second (FWQ: fewest ticks; FTQ: largest count): in ticks
 * for FWQ, in counts for FTQ. Samples better than it lose 0. What the system
 * stole is every kernel's headline (speed.h), each chunk of about 10 ms its
 * own window. */
#ifndef NB_STREAM_H
#define NB_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "speed.h"

enum nb_stream_kind { NB_STREAM_FIXED_WORK, NB_STREAM_FIXED_TIME };

/* The loss (nb_loss, tails.h) on buckets 1% wide, so that a streamed run's
 * percentiles are known to 1% without its samples (the tails' 1-2-5 buckets
 * are for sums over ranks): bucket 0 a loss under 1 unit, bucket b > 0
 * [g^(b-1), g^b), g = 1.01 */
enum { NB_STREAM_BUCKETS = 4500 };
#define NB_STREAM_GROWTH 1.01

struct nb_stream_opts {
	int on;
	double seconds;      /* 0: until SIGINT or SIGTERM */
	double checkpoint_s; /* how often the figures are written out */
	int top;             /* K: the longest losses kept */
	double context_s;    /* raw samples kept before and after each */
	double until_ci;     /* --until-ci: stop once every local stream's
			      * interval is this narrow (points); 0: never */
};

/* The thread's part of a chunk: the loop fills its samples, then stores seq. */
struct nb_stream_chunk {
	uint64_t seq;        /* the chunk's number in the run plus one; 0: never done */
	uint64_t first_tick; /* FWQ: the read that starts its first sample */
};

struct nb_stream_event {
	uint64_t index;  /* the sample's number in the run */
	uint64_t tick;   /* when it ended */
	uint64_t value;  /* as the kernel stores it: ticks (FWQ), counts (FTQ) */
	double loss;     /* beyond the reference, in the same unit */
	uint64_t first;  /* the raw samples around it: [first, first + n) */
	uint64_t n;      /* 0 until the samples after it are in */
	int written;     /* its samples are on disk, in the events file */
	uint64_t offset, bytes; /* where: that file's byte range */
	uint64_t *raw;   /* n pairs: value, end tick */
};

struct nb_stream_second {
	uint64_t n, min, max;
	double sum, lost_ticks;
	/* the stolen time of the chunks that ended in this second, and the
	 * time they covered: the headline, a second at a time */
	double stolen_ticks, covered_ticks;
};

struct nb_stream {
	/* written by the measuring thread */
	void *ring;
	struct nb_stream_chunk *chunks;
	size_t chunk_samples;
	unsigned nchunks; /* a power of two */
	uint64_t done;    /* chunks done, as the last seq stored */
	int stop;

	/* what the writer needs of the kernel */
	enum nb_stream_kind kind;
	size_t sample_size, done_word;
	uint64_t start_tick;     /* the team's start */
	double ticks_per_s;
	uint64_t quantum_ticks;  /* FTQ */
	int rank, cpu;
	char host[64];
	const char *kernel;      /* the kernel's name: fwq, ftq, psnap */
	const char *work;        /* the work kind's name */
	uint64_t loops;          /* fixed work: loops a sample (P-SNAP sets its
				  * own, atomically, once calibrated) */
	char path[4096];         /* PREFIX_<rank>_ */

	/* the writer's */
	uint64_t folded_seq;     /* chunks folded in */
	uint64_t samples, lost;  /* samples folded in; lost when the writer fell behind */
	uint64_t last_tick;      /* end of the last sample folded in */
	int after_loss;          /* the chunk before the next was lost */
	uint64_t reference;
	int have_reference;
	uint64_t min, max;
	double sum, lost_ticks;
	double stolen_ticks, covered_ticks; /* speed.h's split, a chunk at a time */
	/* the same in groups of whole chunks for the interval: groups in use,
	 * each of group_chunks chunks (doubled, the groups merged in pairs,
	 * when all are full), the last holding group_fill so far */
	double group_stolen[NB_STOLEN_GROUPS], group_covered[NB_STOLEN_GROUPS];
	size_t groups, group_chunks, group_fill;
	/* --until-ci: the interval when it was found narrow, and when (s into
	 * the run); stop_s 0 until then */
	double stop_ci_low, stop_ci_high, stop_s;
	uint64_t hist[NB_STREAM_BUCKETS];
	struct nb_stream_second now;
	uint64_t second;         /* the second `now` sums */
	FILE *seconds_file;
	/* fixed work (FWQ, P-SNAP): the ticks between each chunk and the one
	 * before it, added to its first sample (the events' samples are copied
	 * as they were folded) */
	uint64_t *gaps;
	struct nb_stream_event *events;
	int top;
	/* the events file: PREFIX_<rank>_events_<gen>.dat, its length and the
	 * bytes in it of the events kept (the rest are events since dropped) */
	unsigned events_gen;
	uint64_t events_file_bytes, events_live_bytes;
	uint64_t context_samples, raw_capacity;
	size_t memory_bytes;
	uint64_t checkpoints;
	double checkpoint_ms_max; /* the longest checkpoint write */
};

/* Sets up a thread's stream on the thread itself (its ring faulted in on its
 * NUMA node): samples of about sample_time_ticks each. The caller fills in
 * what the figures are labelled with (rank, cpu, host, kernel, work, loops,
 * quantum_ticks, start_tick, path: PREFIX_<rank>_) before the writer starts. */
void nb_stream_init(struct nb_stream *s, const struct nb_stream_opts *o, enum nb_stream_kind kind,
		    double sample_time_ticks, double ticks_per_ns);
void nb_stream_free(struct nb_stream *s);

/* Bytes a thread's stream holds (ring, histogram, events and their samples). */
size_t nb_stream_memory(const struct nb_stream_opts *o, double sample_time_ticks,
			double ticks_per_ns, size_t sample_size);

/* The writer: started before the measurement with every local stream (the
 * array s, malloc'd, is the writer's from then on); stops the threads after
 * o->seconds (if set). */
struct nb_stream_writer;
struct nb_stream_writer *nb_stream_writer_start(struct nb_stream **s, int n,
						const struct nb_stream_opts *o, const int *busy_cpus,
						int nbusy);
/* Stops the threads and the writer, folds in every sample taken (the chunk
 * under way included) and writes the final figures; returns the writer's CPU
 * (-1: it shared the measured ones) and its CPU time in *cpu_ms. */
int nb_stream_writer_finish(struct nb_stream_writer *w, int complete, double *cpu_ms);

/* What the system stole of the time the folded samples covered, percent
 * (NaN before any). */
double nb_stream_stolen_percent(const struct nb_stream *s);
/* Its 95% interval over the groups of time (speed.h); NaN with too few. */
void nb_stream_stolen_interval(const struct nb_stream *s, double *low, double *high);

/* Loss quantile p (0..1) from the histogram: the upper edge of its bucket. */
double nb_stream_quantile(const struct nb_stream *s, double p);

#endif
