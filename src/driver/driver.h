/* The driver's own state, beside the run the kernels see (kernel.h), and
 * the calls between its files, one a job: options.c (the options), files.c
 * (the files), run.c (the run's life), collective.c (what the ranks do
 * together), services.c (what a kernel asks of its run), finish.c (the
 * finish's order), attribution.c (the causes), rank_line.c (a rank's
 * line), run_json.c (the JSON), rank_report.c (the ranks reported),
 * node_metrics.c (the metrics), node_data.c (a node's shared data files),
 * ranks_table.c (a node's ranks as a table) and stream_result.c (a
 * streamed run's results). Only they include it; they call each other one
 * way (tests/test_layers.py). */
#ifndef NB_DRIVER_H
#define NB_DRIVER_H

#include <pthread.h>

#include "kernel.h"
#include "machine.h"
#include "node_data.h"
#include "outfile.h"
#include "requirements.h"
#include "runinfo.h"
#include "tracefs.h"
#include "tuning.h"

/* getopt values of the driver's long options, below a kernel's own */
enum {
	NB_OPT_CPUS = 256, NB_OPT_WARMUP, NB_OPT_TPN, NB_OPT_INJECT, NB_OPT_NO_PIN,
	NB_OPT_VERSION, NB_OPT_TRACE, NB_OPT_WORK, NB_OPT_DAXPY, NB_OPT_SECONDS,
	NB_OPT_STREAM, NB_OPT_CHECKPOINT, NB_OPT_STREAM_TOP, NB_OPT_STREAM_CONTEXT,
	NB_OPT_NODE_FILES, NB_OPT_HOUSEKEEPING, NB_OPT_METRICS, NB_OPT_REQUIREMENTS,
	NB_OPT_UNTIL_CI, NB_OPT_METRICS_EVERY_CPU,
	NB_OPT_DRIVER_END
};
_Static_assert(NB_OPT_DRIVER_END <= NB_OPT_KERNEL, "the driver's options reach a kernel's");

struct nb_driver {
	int argc;
	char **argv;
	/* options */
	int threads_opt;   /* -1: the launch layer's default */
	const char *cpus_opt;
	/* --housekeeping: the CPUs a site keeps for the system, recorded so that
	 * the report judges them apart from the application's */
	int housekeeping[NB_MAX_CPUS];
	int nhousekeeping;
	int pin;
	/* one participant of the threads front end, and no -t or --cpus: the
	 * data files are named as the single-threaded Sequoia tools name them,
	 * PREFIX_<suffix> (files.c) */
	int single_files;
	unsigned warmup_ms;
	double ticks_per_ns_opt;
	int node_files; /* --node-files, or more ranks than one JSON should describe */
	int data_by_node; /* node_files and data files: node_data.h's, unless interrupted */

	/* the run */
	const struct nb_results *results; /* the kernel's, or a stream's */
	struct nb_stream *streams;        /* --stream: one per local participant */
	struct nb_stream_writer *writer;
	int writer_cpu;       /* the CPU it ran on; -1: it shared the measured ones */
	double writer_cpu_ms; /* the CPU time it took */
	struct nb_machine machine;
	struct nb_machine *machines; /* the root's: one per host */
	int nhosts;
	struct nb_team team;
	struct nb_outfile **files;        /* nfiles per local participant, unless data_by_node */
	FILE **data;                      /* while node_data.c writes: nb_run_file's */
	struct nb_outfile **inject_files; /* one per local participant, with --inject */
	struct nb_outfile **cause_files;  /* one per local participant, with --trace */
	/* with data_by_node, the node's files instead (node_data.h); the
	 * injection logs and causes only if every rank asked for them */
	struct nb_node_set node_data, node_injections, node_causes;
	struct nb_trace trace;            /* this process's participants' CPUs */
	struct nb_kcounts kcounts;
	struct nb_tuning tuning;
	struct nb_outfile *json; /* the root's */
	struct nb_outfile *node_json; /* with node_files, each node's first rank's */
	struct nb_outfile *node_table; /* beside it, its ranks as a table (ranks_table.h) */
	const char *requirements_opt; /* --requirements: a site's rules file */
	struct nb_requirements requirements; /* its rules, or the default ones */
	const char *metrics_opt;      /* --metrics: the node_exporter file's name */
	int metrics_every_cpu;        /* --metrics-every-cpu: not only the node's and its bad CPUs' */
	struct nb_outfile *metrics;   /* it, open on each node's first rank */
	struct nb_run_info info;
	pthread_mutex_t out_lock;
	int measuring;
};

/* A streamed run's results (stream.h), whatever its kernel. */
extern const struct nb_results nb_stream_results;

/* the file suffixes of the injection logs and of the causes (--trace) */
#define NB_INJECTIONS_SUFFIX "injections.dat"
#define NB_CAUSES_SUFFIX "causes.dat"

/* options.c: the command line into r, or a usage error */
void nb_driver_parse(struct nb_run *r);

/* collective.c: every rank learns whether any failed (why not NULL); the first
 * failing one says why in one line, and all leave with `code`, their files
 * discarded. nb_driver_agree: the same for bad input. */
void nb_driver_agree_or_exit(struct nb_run *r, const char *why, int code);
void nb_driver_agree(struct nb_run *r, const char *why);

/* files.c: PREFIX_<rank>_<suffix> (base: without the prefix's directory, as
 * the JSON names it); a node's description (kernels.json's node_files) */
void nb_driver_file_name(struct nb_run *r, int rank, const char *suffix, char *buf, size_t size,
			 int base);
void nb_driver_node_file_name(struct nb_run *r, int node, char *buf, size_t size, int base);
/* a participant's file of this suffix as the JSON names it: its node's
 * (node >= 0) or its own */
void nb_driver_participant_file(struct nb_run *r, int rank, int node, const char *suffix,
				char *buf, size_t size);
/* every file, on every rank, under its temporary name, before measuring */
void nb_driver_open_files(struct nb_run *r);
/* each local participant's samples (n of them) and injection log */
void nb_driver_write_data(struct nb_run *r, const size_t *n, int signo);
/* the injection logs written, the local data files renamed into place */
void nb_driver_commit_files(struct nb_run *r, char *mine);

/* finish.c: the one finish sequence, complete (signo 0) or interrupted */
void nb_driver_finish(struct nb_run *r, int signo);

/* Every participant's loss histogram summed where the participants are: the
 * whole run's distribution of the loss, in fixed memory whatever the ranks. */
struct nb_run_loss {
	struct nb_loss_histogram sum;
	double seconds, measured;
};

/* attribution.c: with --trace, each local participant's detours (n[i]
 * samples of participant i) joined to their causes, into its record */
void nb_driver_attribute(struct nb_run *r, const size_t *n, char *mine);

/* rank_line.c: a rank's line as text, to free; with verdict set, the
 * requirements' verdict and the newline after its figures. add: the line
 * into the figures of the ranks line, its text in *text unless NULL. */
struct nb_figures;
char *nb_driver_rank_line_text(const struct nb_run *r, const void *record, int verdict);
void nb_driver_add_rank_line(const struct nb_run *r, const void *record, struct nb_figures *fs,
			     char **text);

/* run_json.c: PREFIX.json's head, a participant's entry (in it or in its
 * node's file), the loss histogram, and its tail (which commits the file
 * and prints the run line) */
void nb_driver_json_head(struct nb_run *r, struct nb_json *j, int signo);
void nb_driver_json_rank_entry(struct nb_run *r, struct nb_json *j,
			       const struct nb_participant *p);
void nb_driver_json_loss_histogram(struct nb_json *j, const struct nb_run_loss *l);
void nb_driver_json_tail(struct nb_run *r, struct nb_json *j, int n, uint64_t samples);

/* rank_report.c: on every rank, the report of nall ranks: the root's lines
 * and JSON, or each node's files */
void nb_driver_report(struct nb_run *r, char *mine, const struct nb_run_loss *loss, int nall,
		      int signo);

/* node_metrics.c: with --metrics, each node's textfile */
void nb_driver_write_metrics(struct nb_run *r, char *mine, int signo);

/* The local participant's record in `mine`, the records of them all. */
static inline struct nb_participant *nb_driver_participant_at(const struct nb_run *r, char *mine,
							      int local)
{
	return (struct nb_participant *)(mine + (size_t)local * r->d->results->size);
}

#endif
