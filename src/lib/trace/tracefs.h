/* The kernel's own account of what ran on the measured CPUs: a tracefs
 * instance of the run's own (never the global buffer), on the clock the
 * kernels read, limited to the measured CPUs, with the interrupt, softirq,
 * timer, IPI, NMI, workqueue and scheduler events, read after the run.
 *
 * On x86-64 the trace clock is x86-tsc, the counter rdtsc reads, so event
 * times are ticks. Elsewhere it is mono_raw, which the text output prints to
 * the microsecond; nb_trace_read maps it onto ticks with the clock pair read
 * at the run's start (docs/kernels.md, "Causes"). */
#ifndef NB_TRACEFS_H
#define NB_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"

enum nb_trace_kind {
	NB_EV_IRQ_ENTRY, NB_EV_IRQ_EXIT,         /* a = irq number, name */
	NB_EV_SOFTIRQ_ENTRY, NB_EV_SOFTIRQ_EXIT, /* a = vector, name = action */
	NB_EV_VECTOR_ENTRY, NB_EV_VECTOR_EXIT,   /* name = local_timer, reschedule, ... */
	NB_EV_HRTIMER_ENTRY, NB_EV_HRTIMER_EXIT, /* name = function */
	NB_EV_TIMER_ENTRY, NB_EV_TIMER_EXIT,     /* name = function */
	NB_EV_WORK_START, NB_EV_WORK_END,        /* name = function */
	NB_EV_SWITCH,                            /* a = next pid, name = next comm */
	NB_EV_WAKEUP,                            /* a = pid, b = target CPU, name = comm */
	NB_EV_NMI,                               /* a = its length in ns (it ends here) */
};

struct nb_trace_event {
	uint64_t tick;
	int32_t cpu;
	int32_t pid;  /* the task on the CPU when it happened */
	int32_t a, b;
	uint8_t kind;
	char comm[17]; /* that task's name */
	char name[40];
};

struct nb_trace {
	int started;     /* recording began */
	int on;          /* the instance exists */
	char dir[256];
	char why[512];   /* when not on: why not, for the JSON and the summary */
	int cpus[NB_MAX_CPUS];
	int ncpus;
	uint64_t lost;   /* events the buffer could not hold (overruns, drops) */
	uint64_t lost_on[NB_MAX_CPUS]; /* the same for cpus[i] */
	uint64_t events; /* events read */
	int read;        /* the buffer was read */
	size_t buffer_kb;

	struct nb_trace_event *ev; /* after nb_trace_read: every event, in time order */
	size_t nev;
};

/* One line of the trace file into e: 0, 1 for an event not used, -1 for a
 * line not understood. Ticks are mapped from mono_raw as nb_trace_read
 * says. Apart for the fuzzer (tests/fuzz/). */
int nb_trace_parse_line(const char *line, struct nb_trace_event *e, double ticks_per_ns,
			uint64_t start_tick, uint64_t start_raw_ns);

/* The events a CPU's buffer lost (0 for a CPU not traced). The buffer
 * overwrites its oldest events when full, so a CPU that lost some holds
 * none from before its first event in the trace. */
uint64_t nb_trace_lost_on(const struct nb_trace *t, int cpu);

/* Creates and starts the instance for these CPUs and a run of about `seconds`.
 * Returns 0, or -1 with t->why saying why not (no tracefs, no permission);
 * the run goes on without attribution then. */
int nb_trace_start(struct nb_trace *t, const int *cpus, int ncpus, double seconds);

/* Stops recording, reads and parses the buffer, counts what was lost, and
 * removes the instance. Returns 0, or -1 with t->why. */
int nb_trace_read(struct nb_trace *t, double ticks_per_ns, uint64_t start_tick,
		  uint64_t start_raw_ns);

/* The run's "trace" object: attributed or why not, the clock, the buffer
 * and the events read and lost. */
struct nb_json;
void nb_trace_json(struct nb_json *j, const struct nb_trace *t);

/* A run stopped by a signal (a job's time limit) writes what it measured
 * before anything else, and a second signal may follow within seconds:
 * the trace, whose reading can take longer, is left unread, and the JSON
 * says so. */
void nb_trace_skip(struct nb_trace *t, int signo);

/* Removes the instance if it is still there (exit paths, signals). */
void nb_trace_remove(struct nb_trace *t);
void nb_trace_free(struct nb_trace *t);

#endif
