/* The kernel contract: what a kernel provides (struct nb_kernel and its
 * struct nb_results of hooks) and what the driver gives it (struct nb_run,
 * each participant's struct nb_participant, the nb_run_* services). The
 * driver (this folder) does the rest the same way for every kernel:
 * options, placement of the participants (threads of one process, OpenMP
 * threads or MPI ranks: the launch layer linked in, ranks.h), the files,
 * calibration, the start, signals, and one finish sequence. A kernel is one
 * small C file above this layer (src/kernels/), its measured loop and its
 * hooks; docs/architecture.md lists the files a new kernel needs. This
 * header holds only what a kernel uses: the types its hooks see by value. */
#ifndef NB_KERNEL_H
#define NB_KERNEL_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "calibrate.h"
#include "causes.h"
#include "inject.h"
#include "kcounts.h"
#include "kernel_files.h"
#include "machine.h"
#include "ranks.h"
#include "stream.h"
#include "stretches.h"
#include "tails.h"

/* The first getopt value of a kernel's own long options: the driver's are
 * below it (driver.h). */
#define NB_OPT_KERNEL 1024

struct nb_json;
struct nb_work_kind;

struct nb_run;

/* What every participant reports beside its kernel's figures: the first
 * member of every kernel's result record, filled by the driver. Fixed size:
 * MPI gathers the records as bytes. */
struct nb_participant {
	int32_t rank, cpu;
	char host[64];
	struct nb_cpu_place place; /* its CPU's NUMA domain, core, SMT thread */
	double ticks_per_ns, timer_read_ticks; /* its own host's tick */
	uint64_t samples;
	uint64_t start_tick, end_tick; /* end 0: still measuring */
	uint64_t inject_period_us, inject_duration_us; /* its --inject (0: none) */
	int inject_poisson;
	uint64_t injections, injections_missed, injections_logged;
	double steal_ms; /* its CPU's steal time while it measured; NAN unknown */
	struct nb_cause_totals causes; /* with --trace: from the detours hook */
	struct nb_kcount_summary kcounts;
	/* the loss sample by sample, set by the kernel's summarise (streamed
	 * runs have none): the driver prints it, writes it and sums the
	 * histograms of every participant */
	struct nb_tails tails;
	/* its samples over the run's time, set by the kernel's summarise
	 * (nb_stretches_init with the run's measured_s): the driver writes them */
	struct nb_stretches stretches;
	/* with node files, where its data are in its node's (node_data.h):
	 * [offset, bytes] in each of the kernel's kinds; node -1: in files
	 * of its own */
	int32_t data_node;
	uint64_t data_ranges[NB_MAX_NFILES][2];
	/* the same of its --inject log and its --trace causes */
	int32_t inject_node, causes_node;
	uint64_t inject_range[2], causes_range[2];
};

/* How a participant's samples become its result record, and the record
 * becomes a line on stdout and an entry of the JSON. The driver calls the
 * hooks in this order; each may be NULL unless it says otherwise. */
struct nb_results {
	/* bytes of the record: a struct beginning with struct nb_participant */
	size_t size;
	/* samples a local participant took: NULL for the driver's count, all of
	 * them when complete, the ones stored before a signal otherwise */
	size_t (*taken)(struct nb_run *r, int local, int signo);
	/* writes them to its data files (nb_run_file) */
	void (*write)(struct nb_run *r, int local, size_t n);
	/* once every rank's files are committed, on every rank, before the
	 * samples are summarised (and reordered): what needs several
	 * participants' samples, n[i] of local participant i. Collectives only
	 * when signo is 0 (after a signal none is safe: this process's
	 * participants alone) */
	void (*exchange)(struct nb_run *r, const size_t *n, int signo);
	/* with --trace: the samples' detours in time order, to attribute */
	size_t (*detours)(struct nb_run *r, int local, size_t n, struct nb_cause_detour **out);
	/* required: the record of n samples (may reorder them) */
	void (*summarise)(struct nb_run *r, int local, size_t n, void *record);
	/* once every participant is summarised, on every process: the run's
	 * figures over every participant (this process's after a signal), from
	 * mine, the nlocal local records, by reductions (nb_run_sum,
	 * nb_run_sum_u64, nb_run_max), the root's for print_head, print_run
	 * and json_run */
	void (*reduce)(struct nb_run *r, const void *mine, int nlocal, int signo);
	/* required: a rank's key=value figures on its result line, into out, each
	 * with a leading space (the driver prints the prefix, the injections and
	 * the causes); on the root, or with node files on each node's first
	 * rank, which reduces its node's lines for the ranks line (figures.h) */
	void (*print)(const struct nb_run *r, const void *record, FILE *out);
	/* the root, before and after the rank lines of n participants: the
	 * lines about the whole run (the original tool's, where it had some) */
	void (*print_head)(const struct nb_run *r, int n);
	void (*print_run)(const struct nb_run *r, int n);
	/* the root: the run's keys of the JSON; and a rank's, where its entry
	 * is written: on the root, which sees the records one node's at a time,
	 * never all of them (nb_ranks_each), or with node files on each node's
	 * first rank */
	void (*json_run)(const struct nb_run *r, struct nb_json *j, int n);
	void (*json_rank)(const struct nb_run *r, struct nb_json *j, const void *record);
};

struct nb_kernel {
	const char *name;
	/* what it measures, the files it writes, and its own options' lines */
	const char *usage;
	const char *shortopts;          /* its own short options (getopt syntax) */
	const struct option *longopts;  /* its own long options, NULL-terminated; or NULL */
	uint64_t default_samples;       /* -n; 0: the kernel has no -n */
	/* --seconds without -n: how long it runs unless told (0: -n's kernels) */
	double default_seconds;
	int has_work;                   /* takes --work and --daxpy-len */
	int has_stdout;                 /* takes -s: samples to stdout, no data files */
	int has_stream;                 /* takes --stream (stream.h) */
	/* takes --until-ci without a stream: its measure stops itself once
	 * r->until_ci holds (a streamed kernel's stream stops it) */
	int stops_at_ci;
	enum nb_stream_kind stream_kind;
	const char *value_unit;         /* of its summarised value (kernels.json) */
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
	 * r->samples where -n is not the buffer's size */
	void (*check)(struct nb_run *r);
	/* required: after calibration, on every process: derive its parameters
	 * and set r->seconds; returns why the run cannot go on, or NULL */
	const char *(*configure)(struct nb_run *r);
	/* on each participant, pinned, once its samples and work are allocated,
	 * before the warm-up */
	void (*prepare)(struct nb_thread *t);
	/* required: the measured loop */
	void (*measure)(struct nb_thread *t);
	/* the JSON keys of its parameters, streamed or not */
	void (*json_options)(const struct nb_run *r, struct nb_json *j);
	/* required: its results (streamed runs have the driver's, stream_result.c) */
	struct nb_results results;
	/* what hooks shared between kernels read (quantum.h) */
	const void *shared;
};

struct nb_driver; /* the driver's own state */

/* The run, as the kernel's hooks see it. */
struct nb_run {
	const struct nb_kernel *k;
	struct nb_ranks ranks; /* ranks.local[i]: local participant i */

	/* options */
	uint64_t samples;  /* per participant: the size of its buffer */
	double seconds_opt; /* --seconds: the kernel's configure sets samples from it */
	int seconds_given;  /* --seconds was on the command line, not the default */
	double until_ci;    /* --until-ci: the interval's width to stop at, points */
	struct nb_stream_opts stream;
	const char *prefix;
	int to_stdout;
	struct nb_inject inject;
	int trace_opt;
	const struct nb_work_kind *work;
	uint64_t daxpy_len;

	/* set by configure */
	double seconds; /* about how long the measurement lasts */
	double sample_ticks; /* about how long a sample lasts */
	uint64_t work_loops; /* FWQ: work loops a sample */

	struct nb_calibration cal;
	/* in the finish, for summarise: how long the participant that measured
	 * longest did, over the whole run (this process's after a signal) */
	double measured_s;
	struct nb_driver *d;
};

/* Runs kernel k with the command line; returns the exit code. */
int nb_driver_main(const struct nb_kernel *k, int argc, char **argv);

/* For configure: with --seconds, sets r->samples to the samples of
 * sample_seconds each the duration holds (at least one). */
void nb_run_samples_for(struct nb_run *r, double sample_seconds);
/* The tick every participant started at, together. */
uint64_t nb_run_start_tick(const struct nb_run *r);
/* The f-th data file of local participant `local` (stdout with -s). */
FILE *nb_run_file(struct nb_run *r, int local, int f);
/* For reduce: v (n figures) summed, or the largest of each taken, over every
 * process (this one's alone after a signal) into the root's v. */
void nb_run_sum(struct nb_run *r, double *v, size_t n, int signo);
void nb_run_sum_u64(struct nb_run *r, uint64_t *v, size_t n, int signo);
void nb_run_max(struct nb_run *r, double *v, size_t n, int signo);
/* For exchange and reduce: the root's copy of every participant's `each`
 * bytes (mine holds the local ones), gathered when signo is 0, else this
 * process's alone; NULL on other ranks. The count is in *n. Free the result.
 * Only for a few bytes a rank, or a bounded number of ranks. */
void *nb_run_gather(struct nb_run *r, const void *mine, size_t each, int signo, int *n);
/* In the finish: the signal that ended the run, 0 when it completed. */
int nb_run_signal(const struct nb_run *r);
/* Writes local participant i's part of a node's files into files[i] (or,
 * for a set of several, files[i * nfiles + f]); returns how many have a
 * part (a node's file in which none has is not kept). */
typedef int nb_node_writer(struct nb_run *r, FILE **files, void *arg);
/* On every process of a complete run at once: a text file a node of the
 * kernel's own, named as the catalogue's node_files.data_file_name says
 * with this suffix, each local participant's part from write, by rank.
 * Nothing of it passes through the root: it is for what grows with the
 * ranks. */
void nb_run_node_text(struct nb_run *r, const char *suffix, nb_node_writer *write, void *arg);
/* Those files' name, with {node} for the node's number and without the
 * prefix's directory (as the JSON names files). */
void nb_run_node_text_name(const struct nb_run *r, const char *suffix, char *buf, size_t size);
/* Whether each node describes its own ranks (node files: beyond 4,096
 * ranks, or --node-files): the root then prints no line a rank, and a
 * kernel's lines about the run should not either. */
int nb_run_node_files(const struct nb_run *r);
/* What a work loop of the run's kind costs on this host, at least (ticks). */
double nb_run_ticks_per_work_loop(const struct nb_run *r);

#endif
