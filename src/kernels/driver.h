/* The one driver of every kernel. It owns the options and their defaults,
 * places the participants (threads of one process, OpenMP threads or MPI
 * ranks: the launch layer linked in, ranks.h), creates the files they write,
 * calibrates, starts them together, keeps what was measured when SIGINT or
 * SIGTERM arrives, and writes the parts of the JSON every kernel shares.
 *
 * A kernel is one small file (fwq.c, ftq.c, psnap.c, selfish.c) holding a
 * struct nb_kernel of hooks; docs/kernels.md says how to add one. */
#ifndef NB_DRIVER_H
#define NB_DRIVER_H

#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "calibrate.h"
#include "causes.h"
#include "inject.h"
#include "json.h"
#include "kcounts.h"
#include "machine.h"
#include "output.h"
#include "ranks.h"
#include "runinfo.h"
#include "stream.h"
#include "team.h"
#include "timer.h"
#include "tracefs.h"
#include "tuning.h"
#include "work.h"

/* getopt values of the driver's long options; a kernel's start at NB_OPT_KERNEL */
enum {
	NB_OPT_CPUS = 256, NB_OPT_WARMUP, NB_OPT_TPN, NB_OPT_INJECT, NB_OPT_NO_PIN,
	NB_OPT_VERSION, NB_OPT_TRACE, NB_OPT_WORK, NB_OPT_DAXPY, NB_OPT_SECONDS,
	NB_OPT_STREAM, NB_OPT_CHECKPOINT, NB_OPT_STREAM_TOP, NB_OPT_STREAM_CONTEXT,
	NB_OPT_KERNEL
};

struct nb_run;

struct nb_kernel {
	const char *name;
	/* what it measures, the files it writes, and its own options' lines */
	const char *usage;
	const char *shortopts;          /* its own short options (getopt syntax) */
	const struct option *longopts;  /* its own long options, NULL-terminated; or NULL */
	uint64_t default_samples;       /* -n; 0: the kernel has no -n */
	int has_work;                   /* takes --work and --daxpy-len */
	int has_stdout;                 /* takes -s: samples to stdout, no data files */
	int has_stream;                 /* takes --stream (stream.h) */
	enum nb_stream_kind stream_kind;
	/* each participant's data files: PREFIX_<rank>_<suffix> */
	int nfiles;
	const char *const *suffixes;
	size_t sample_size;
	size_t done_word; /* offset of the word the loop stores last (samples.h) */
	/* its buffer is only reserved (samples.h): the kernel faults it in as it
	 * fills, -n (r->samples) being the most it may hold */
	int grows;

	/* one of its own options */
	void (*option)(struct nb_run *r, int c, const char *arg);
	/* after the options, before placing: check them together and set
	 * r->samples where -n is not the buffer's size (may be NULL) */
	void (*check)(struct nb_run *r);
	/* after calibration, on every process: derive its parameters and set
	 * r->seconds; returns why the run cannot go on, or NULL */
	const char *(*configure)(struct nb_run *r);
	/* on each participant, pinned, once its samples and work are allocated,
	 * before the warm-up (may be NULL) */
	void (*prepare)(struct nb_thread *t);
	void (*measure)(struct nb_thread *t);
	/* writes the data files, gathers and reports; signo 0 when complete */
	void (*finish)(struct nb_run *r, int signo);
};

/* What every participant reports beside its kernel's figures: fixed size,
 * so that MPI gathers it as bytes. */
struct nb_participant {
	int32_t rank, cpu;
	char host[64];
	double ticks_per_ns, timer_read_ticks; /* its own host's tick */
	uint64_t samples;
	uint64_t start_tick, end_tick; /* end 0: still measuring */
	uint64_t inject_period_us, inject_duration_us; /* its --inject (0: none) */
	int inject_poisson;
	uint64_t injections, injections_missed, injections_logged;
	double steal_ms; /* its CPU's steal time while it measured; NAN unknown */
	struct nb_cause_totals causes; /* with --trace (nb_run_attribute) */
	struct nb_kcount_summary kcounts;
};

struct nb_run {
	const struct nb_kernel *k;
	int argc;
	char **argv;
	struct nb_ranks ranks;

	/* options */
	uint64_t samples;  /* per participant: the size of its buffer */
	double seconds_opt; /* --seconds: the kernel's configure sets samples from it */
	struct nb_stream_opts stream;
	int threads_opt;   /* -1: the launch layer's default */
	const char *cpus_opt;
	const char *prefix;
	int pin;
	int to_stdout;
	unsigned warmup_ms;
	double ticks_per_ns_opt;
	struct nb_inject inject;
	int trace_opt;
	const struct nb_work_kind *work;
	uint64_t daxpy_len;

	/* the run */
	double seconds; /* about how long the measurement lasts */
	double sample_ticks; /* about how long a sample lasts (set by configure) */
	uint64_t work_loops; /* FWQ: work loops a sample (set by configure) */
	struct nb_stream *streams;        /* --stream: one per local participant */
	struct nb_stream_writer *writer;
	int writer_cpu;       /* the CPU it ran on; -1: it shared the measured ones */
	double writer_cpu_ms; /* the CPU time it took */
	struct nb_calibration cal;
	struct nb_machine machine;
	struct nb_machine *machines; /* the root's: one per host */
	int nhosts;
	struct nb_team team;
	struct nb_outfile **files;        /* nfiles per local participant */
	struct nb_outfile **inject_files; /* one per local participant, with --inject */
	struct nb_outfile **cause_files;  /* one per local participant, with --trace */
	struct nb_trace trace;            /* this process's participants' CPUs */
	struct nb_kcounts kcounts;
	struct nb_tuning tuning;
	struct nb_outfile *json; /* the root's */
	struct nb_run_info info;
	pthread_mutex_t out_lock;
	int measuring;
};

/* Runs kernel k with the command line; returns the exit code. */
int nb_driver_main(const struct nb_kernel *k, int argc, char **argv);

/* For configure: with --seconds, sets r->samples to the samples of
 * sample_seconds each the duration holds (at least one). */
void nb_run_samples_for(struct nb_run *r, double sample_seconds);

/* The f-th data file of local participant `local` (stdout with -s). */
FILE *nb_run_file(struct nb_run *r, int local, int f);
/* Samples taken so far by a local participant (all of them when complete). */
size_t nb_run_taken(struct nb_run *r, int local, int signo);
/* A local participant's common figures. */
void nb_run_participant(struct nb_run *r, int local, uint64_t samples, struct nb_participant *p);
/* --trace: joins a local participant's detours (in time order) to what the
 * trace saw on its CPU, writes its causes file and fills *tot (left
 * unattributed without a trace). */
void nb_run_attribute(struct nb_run *r, int local, const struct nb_cause_detour *d, size_t nd,
		      struct nb_cause_totals *tot);
/* Writes the injection logs, then renames the local data files into place;
 * fails the run if any could not be written. */
void nb_run_commit_files(struct nb_run *r);
/* The root's copy of every participant's result (`each` bytes; mine holds the
 * local ones): gathered when the run completed; after a signal, when no
 * collective is safe, only this process's. Returns NULL on other ranks; the
 * count is in *n. Free the result. */
void *nb_run_collect(struct nb_run *r, const void *mine, size_t each, int signo, int *n);
/* A rank's result record on stdout, one line, the same grammar for every
 * kernel: this prefix, "rank kernel=K rank=N host=H cpu=C" (the catalogue's
 * rank_line), then the kernel's key=value figures and a newline. */
void nb_run_rank_line(const struct nb_run *r, const struct nb_participant *p);

/* The JSON: head (the kernel adds its keys), a participant's object (the
 * kernel adds its figures and closes it), then the tail, which commits it and
 * prints the run's last line. */
void nb_run_json_head(struct nb_run *r, struct nb_json *j, int signo);
void nb_run_json_participant(struct nb_run *r, struct nb_json *j, const struct nb_participant *p);
void nb_run_json_tail(struct nb_run *r, struct nb_json *j, int n, uint64_t samples);

#endif
