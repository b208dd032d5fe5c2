/* The parts of a run description (PREFIX.json) every kernel writes. */
#ifndef NB_RUNINFO_H
#define NB_RUNINFO_H

#include <time.h>

#include "calibrate.h"
#include "inject.h"
#include "json.h"
#include "machine.h"
#include "timer.h"

struct nb_run_info {
	const char *kernel;
	const char *frontend;  /* pthreads, openmp, mpi */
	int argc;
	char **argv;
	int signo;             /* 0: complete */
	const struct nb_calibration *cal;
	const struct nb_inject *inject;
	unsigned warmup_ms;
	int pinned; /* each participant pinned to its CPU (no --no-pin) */
	const struct nb_machine *machine;
	struct timespec start_utc, end_utc;
	struct nb_clock_pair start, end;
};

/* Opens the top-level object and writes what ran and whether it completed. */
void nb_json_run_head(struct nb_json *j, const struct nb_run_info *ri);
/* Writes timer, calibration, injection, start and end, the machine, and
 * closes the object. */
void nb_json_run_tail(struct nb_json *j, const struct nb_run_info *ri);

#endif
