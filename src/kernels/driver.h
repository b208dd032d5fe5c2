/* The run of a fixed-work or fixed-time kernel: options, checks, calibration,
 * the team of measuring threads, and the files it leaves.  fwq.c and ftq.c
 * describe what differs between the two. */
#ifndef NB_DRIVER_H
#define NB_DRIVER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "calibrate.h"
#include "causes.h"
#include "inject.h"
#include "json.h"
#include "kcounts.h"
#include "machine.h"
#include "output.h"
#include "speed.h"
#include "stats.h"
#include "team.h"
#include "timer.h"
#include "tracefs.h"
#include "tuning.h"
#include "work.h"

enum nb_kernel_id { NB_KERNEL_FWQ, NB_KERNEL_FTQ };

struct nb_run;

struct nb_kernel {
	enum nb_kernel_id id;
	const char *name;
	size_t sample_size;
	size_t done_word;           /* offset of the word the loop stores last */
	int files_per_thread;
	const char *const *file_suffixes;
	const char *value_unit;     /* unit of the summarised value */
	/* after calibration: derive and check the kernel's own parameters, and
	 * estimate the run's length (r->seconds) */
	void (*configure)(struct nb_run *r);
	void (*measure)(struct nb_thread *t);
	/* writes n samples of thread t to its files (or to out with -s) */
	void (*write)(struct nb_run *r, struct nb_thread *t, size_t n, FILE **files);
	/* gathers the summarised value of n samples into v (in place) */
	uint64_t *(*values)(struct nb_thread *t, size_t n);
	double (*scaled_noise_mean)(const struct nb_stats *s);
	/* splits n samples' noise into detours and running slow (speed.h);
	 * NULL where the samples are not fixed work */
	void (*speed)(struct nb_thread *t, size_t n, struct nb_speed *s);
	/* the n samples' detours, in time order, for --trace (causes.h) */
	size_t (*detours)(struct nb_run *r, struct nb_thread *t, size_t n, struct nb_cause_detour **out);
	void (*json)(struct nb_run *r, struct nb_json *j);
	const char *usage;
};

struct nb_run {
	const struct nb_kernel *k;
	int argc;
	char **argv;

	/* options */
	uint64_t samples;
	int threads_opt; /* -1: front end's default */
	const char *cpus_opt;
	const char *prefix;
	int to_stdout;
	const struct nb_work_kind *work;
	unsigned warmup_ms;
	double ticks_per_ns_opt;
	struct nb_inject inject;
	int trace_opt;
	uint64_t daxpy_len;
	unsigned work_bits;     /* fwq -w */
	int interval_bits;      /* ftq -i, -1 when not given */
	double freq_hz;         /* ftq --freq, 0 when not given */

	/* resolved before the start */
	int nthreads;
	int cpus[NB_MAX_CPUS];
	struct nb_calibration cal;
	struct nb_machine machine;
	double ticks_per_work_loop;
	uint64_t loops;          /* fwq: work loops per sample */
	uint64_t interval_ticks; /* ftq: quantum */
	double seconds;          /* about how long the measurement lasts */
	struct nb_outfile **files;
	struct nb_outfile **inject_files; /* one per thread, with --inject */
	struct nb_outfile **cause_files;  /* one per thread, with --trace */
	struct nb_trace trace;
	struct nb_kcounts kcounts;
	struct nb_tuning tuning;
	struct nb_thread *threads;
	struct nb_team team;

	struct timespec start_utc, end_utc;
	struct nb_clock_pair start, end;
	pthread_mutex_t out_lock;
	int measuring;
};

/* Runs the kernel with the command line; returns the exit code. */
int nb_driver_main(const struct nb_kernel *k, int argc, char **argv);

#endif
