/* The driver's own state, beside the run the kernels see (kernel.h): only
 * the driver's files (driver.c, stream_result.c) include it. */
#ifndef NB_DRIVER_H
#define NB_DRIVER_H

#include <pthread.h>

#include "kernel.h"
#include "machine.h"
#include "node_data.h"
#include "output.h"
#include "runinfo.h"
#include "tracefs.h"
#include "tuning.h"

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
	const char *metrics_opt;      /* --metrics: the node_exporter file's name */
	struct nb_outfile *metrics;   /* it, open on each node's first rank */
	struct nb_run_info info;
	pthread_mutex_t out_lock;
	int measuring;
};

/* A streamed run's results (stream.h), whatever its kernel. */
extern const struct nb_results nb_stream_results;

#endif
