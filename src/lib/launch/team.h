/* A team of measuring threads, one per CPU, started together.
 *
 * Each thread pins itself (a failed pin ends the run: its numbers would be
 * wrong), prepares its buffers, spins for the warm-up, and waits on a gate.
 * The last thread to arrive sets a common start tick a little ahead and opens
 * the gate; every thread spins until that tick, so quanta of all threads lie
 * on one grid.  Two front ends run this: pthreads (team_pthread.c) and OpenMP
 * (team_omp.c). */
#ifndef NB_TEAM_H
#define NB_TEAM_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "inject.h"
#include "machine.h"
#include "work.h"

struct nb_stream;

struct nb_thread {
	int index;
	int cpu;          /* the CPU it ran on */
	int tid;          /* its thread id (the trace names tasks by it) */
	void *samples;    /* set by prepare, before the gate */
	struct nb_work_ctx work;
	struct nb_inject_count injections;
	timer_t inject_timer;
	/* when its measurement began: the team's start, or for kernels whose
	 * samples tile the run (FWQ, P-SNAP) the loop's first timer read */
	uint64_t start_tick;
	volatile uint64_t end_tick; /* when it ended; 0 while measuring */
	uint64_t steal_before_ns;   /* its CPU's steal time before the warm-up */
	volatile uint64_t steal_after_ns; /* and after measuring; see steal.h */
	int64_t switches_before[2];       /* its voluntary and involuntary context */
	int64_t switches_after[2];        /* switches, as steal (kcounts.h) */
	void *arg;        /* the kernel's per-run state */
	struct nb_stream *stream; /* --stream: its ring and figures (stream.h) */
};

struct nb_team {
	int nthreads;
	const int *cpus;      /* CPU for each thread; the OpenMP front end uses it
			       * only when the runtime does not bind threads */
	unsigned warmup_ms;
	uint64_t lead_ticks;  /* how far ahead of the last arrival the start is */
	const struct nb_inject *inject;
	double seconds;       /* about how long the measurement lasts: sizes the
			       * injection log */
	void (*prepare)(struct nb_thread *t); /* pinned, before the warm-up */
	void (*measure)(struct nb_thread *t); /* between start and end */
	void (*sync)(void);                   /* a team of one (an MPI rank): after the gate,
					 * e.g. a barrier; the start is then set anew */

	/* set while running */
	volatile int ready;
	volatile int gate;
	volatile uint64_t start_tick;
};

/* Which front end this binary has ("pthreads" or "openmp") and how many
 * threads it runs when the user does not say. */
extern const char nb_team_frontend[];
int nb_team_default_threads(void);

/* The CPUs measuring threads may be placed on, ascending; returns how many. */
int nb_team_cpus_available(int *cpus, int max);

/* Thread i runs on cpus[i]: the i-th CPU available, or the i-th of the list
 * cpus_opt (e.g. "0-3,8"); threads_opt -1 is the front end's default, 0 every
 * CPU available. Pinned, each thread needs a CPU of its own; unpinned
 * (!pin) more threads than CPUs share them, as oversubscribed MPI ranks
 * do, with a warning (a functional run: what they measure is mostly time
 * sharing). Returns the thread count; impossible choices fail the run with
 * one line (exit 2). */
int nb_team_place(int threads_opt, const char *cpus_opt, int *cpus, int pin);

/* Runs the team to the end. */
void nb_team_run(struct nb_team *team, struct nb_thread *threads);

/* The part every front end runs on each thread once it is placed. */
void nb_team_thread(struct nb_team *team, struct nb_thread *t);

/* The steal time of t's CPU while it measured (so far, when it still is),
 * in ms; NAN where the kernel does not say. */
double nb_team_steal_ms(struct nb_thread *t);
/* Its context switches over the measurement (so far, while measuring). */
void nb_team_switches(struct nb_thread *t, int64_t before[2], int64_t after[2]);

/* Pins the calling thread to cpu or fails the run. */
void nb_team_pin(int index, int cpu);

#endif
