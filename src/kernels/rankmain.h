/* What P-SNAP and the selfish detour share: the common options, the files
 * each participant writes, the run description, and keeping what was measured
 * when SIGINT/SIGTERM arrives. Each kernel runs on nb_ranks (MPI or threads). */
#ifndef NB_RANKMAIN_H
#define NB_RANKMAIN_H

#include <getopt.h>
#include <pthread.h>
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
#include "team.h"
#include "timer.h"
#include "tracefs.h"
#include "tuning.h"

enum {
	NB_OPT_CPUS = 256, NB_OPT_WARMUP, NB_OPT_TPN, NB_OPT_INJECT, NB_OPT_NO_PIN,
	NB_OPT_VERSION, NB_OPT_TRACE,
	NB_OPT_KERNEL /* first value free for a kernel's own options */
};

#define NB_RANK_LONG_OPTIONS                                                                 \
	{ "cpus", required_argument, NULL, NB_OPT_CPUS },                                    \
	{ "warmup-ms", required_argument, NULL, NB_OPT_WARMUP },                             \
	{ "ticks-per-ns", required_argument, NULL, NB_OPT_TPN },                             \
	{ "inject", required_argument, NULL, NB_OPT_INJECT },                                \
	{ "no-pin", no_argument, NULL, NB_OPT_NO_PIN },                                      \
	{ "trace", no_argument, NULL, NB_OPT_TRACE },                                        \
	{ "help", no_argument, NULL, 'h' },                                                  \
	{ "version", no_argument, NULL, NB_OPT_VERSION }

#define NB_RANK_USAGE                                                                        \
	"  -t THREADS           without MPI: measuring threads, one per CPU (0 = every CPU)\n" \
	"  --cpus LIST          pin participant i (rank i on its node) to the i-th CPU of LIST\n" \
	"  --no-pin             leave placement to the launcher and the OS\n"                  \
	"  -o PREFIX            output prefix (default: the kernel's name)\n"                  \
	"  --warmup-ms MS       spin this long, pinned, before the start\n"                    \
	"  --ticks-per-ns X     use this tick rate instead of measuring it\n"                  \
	"  --inject P:D         every P us, busy-wait D us on each participant\n"              \
	"  --trace              attribute each detour to its cause (tracefs, as root)\n"      \
	"  -h, --help           this text;  --version  the version\n"

/* When a participant measured and what its injection timer did: part of
 * every kernel's per-rank result, so the root can report it. */
struct nb_rank_clock {
	uint64_t start_tick, end_tick; /* end 0: still measuring */
	uint64_t injections, injections_missed, injections_logged;
	double steal_ms; /* its CPU's steal time while it measured; NAN unknown */
	struct nb_cause_totals causes; /* with --trace (nb_rank_attribute) */
	struct nb_kcount_summary kcounts;
};

struct nb_rank_run {
	const char *name;
	int argc;
	char **argv;
	struct nb_ranks ranks;

	/* common options */
	int threads_opt;
	const char *cpus_opt;
	const char *prefix;
	int pin;
	unsigned warmup_ms;
	double ticks_per_ns_opt;
	struct nb_inject inject;
	int trace_opt;

	/* the run */
	size_t capacity;   /* samples per participant */
	size_t sample_size;
	size_t done_word;  /* see nb_samples_taken */
	double seconds;    /* about how long the measurement lasts */
	struct nb_calibration cal;
	struct nb_machine machine;
	struct nb_team team;
	struct nb_outfile **files; /* one per local participant */
	struct nb_outfile **inject_files; /* one per local participant, with --inject */
	struct nb_outfile **cause_files;  /* one per local participant, with --trace */
	struct nb_trace trace;            /* this process's participants' CPUs */
	struct nb_kcounts kcounts;
	struct nb_tuning tuning;
	struct nb_outfile *json;   /* the root's */
	struct nb_run_info info;
	pthread_mutex_t out_lock;
	int measuring;

	/* the kernel writes its files and report; signo 0 when complete */
	void (*finish)(struct nb_rank_run *rr, int signo);
};

/* Starts the signal thread and MPI (before any option is read). */
void nb_rank_begin(struct nb_rank_run *rr, const char *name, int *argc, char ***argv);
/* Handles a common option; returns 0 when c is not one. */
int nb_rank_option(struct nb_rank_run *rr, int c, const char *arg, const char *usage);
/* Places the participants, creates their files (`<prefix>_<rank>_<suffix>`)
 * and the JSON, calibrates, describes the machine. */
void nb_rank_prepare(struct nb_rank_run *rr, const char *suffix);
/* Runs the participants; prepare runs pinned before the warm-up. */
void nb_rank_measure(struct nb_rank_run *rr, void (*prepare)(struct nb_thread *),
		     void (*measure)(struct nb_thread *));
/* Samples taken so far by a local participant. */
size_t nb_rank_taken(struct nb_rank_run *rr, int local);
/* The base name of a participant's data file. */
void nb_rank_file_name(struct nb_rank_run *rr, int rank, const char *suffix, char *buf,
		       size_t size);
/* A local participant's clock and injection counts. */
void nb_rank_clock_get(struct nb_rank_run *rr, int local, struct nb_rank_clock *c);
/* --trace: joins a local participant's detours (in time order) to what the
 * trace saw on its CPU, writes its causes file and fills *tot (left
 * unattributed without a trace). */
void nb_rank_attribute(struct nb_rank_run *rr, int local, const struct nb_cause_detour *d,
		       size_t nd, struct nb_cause_totals *tot);
/* Writes the injection logs, then renames the local data files into place; fails the run if any could not be
 * written. */
void nb_rank_commit_files(struct nb_rank_run *rr);
/* The root's copy of every participant's result (`each` bytes; mine holds the
 * local ones): gathered when the run completed; after a signal, when no
 * collective is safe, only this process's. Returns NULL on other ranks; the
 * count is in *nranks. Free the result. */
void *nb_rank_collect(struct nb_rank_run *rr, const void *mine, size_t each, int signo,
		      int *nranks);
/* The JSON: head (and the kernel adds its keys), then tail and commit. */
void nb_rank_json_head(struct nb_rank_run *rr, struct nb_json *j, int signo);
/* Closes and commits the JSON, and prints the run's last line. */
void nb_rank_json_tail(struct nb_rank_run *rr, struct nb_json *j, int nranks);
/* Opens one rank's object in "ranks": rank, host, cpu and its data file; the
 * kernel adds its figures and closes it. */
void nb_rank_json_rank(struct nb_rank_run *rr, struct nb_json *j, int rank, const char *host,
		       int cpu, const char *suffix);
/* Adds a rank's clock and injection counts (and its injection log's name). */
void nb_rank_json_clock(struct nb_rank_run *rr, struct nb_json *j, int rank,
			const struct nb_rank_clock *c);
void nb_rank_end(struct nb_rank_run *rr);

#endif
