/* What the kernel counted on the measured CPUs while a run measured, with or
 * without tracing: /proc/interrupts and /proc/softirqs per CPU, and each
 * measuring thread's context switches (/proc/self/task/<tid>/status). The
 * counters are read before the warm-up and after the run, outside anything
 * measured. They say what happened, not when: the join of detours to their
 * causes needs --trace (causes.h). */
#ifndef NB_KCOUNTS_H
#define NB_KCOUNTS_H

#include <stdint.h>

#include "json.h"

enum { NB_KCOUNT_NAME = 40, NB_KCOUNT_TOP = 16 };

/* One reading of /proc/interrupts or /proc/softirqs: every line's name and
 * its count per CPU column. */
struct nb_kcount_table {
	int rows, columns;
	int *cpu;                          /* the CPU of each column */
	char (*name)[NB_KCOUNT_NAME];      /* "<irq>:<device>", "LOC", "TIMER", ... */
	uint64_t *count;                   /* rows x columns */
};

struct nb_kcounts {
	struct nb_kcount_table irq[2], softirq[2]; /* before, after */
	int read;                                  /* 0, 1 (before) or 2 (both) */
};

/* A participant's part: the counts on its CPU over the run, and its own
 * context switches. Fixed size, so that MPI ranks can send it to the root. */
struct nb_kcount_summary {
	int known;
	uint64_t interrupts, softirqs;     /* on its CPU */
	int64_t voluntary, involuntary;    /* its context switches; -1 unknown */
	int ntop;
	struct {
		char name[NB_KCOUNT_NAME + 8]; /* "irq:..." or "softirq:..." */
		uint64_t count;
	} top[NB_KCOUNT_TOP];              /* the lines that counted most, most first */
};

void nb_kcounts_before(struct nb_kcounts *k);
void nb_kcounts_after(struct nb_kcounts *k);
void nb_kcounts_free(struct nb_kcounts *k);

/* A thread's voluntary and involuntary context switches so far ({-1, -1}
 * when its status cannot be read). */
void nb_thread_switches(int tid, int64_t out[2]);

/* The summary of one CPU (switches: the thread's before and after). */
void nb_kcounts_summary(const struct nb_kcounts *k, int cpu, const int64_t before[2],
			const int64_t after[2], struct nb_kcount_summary *s);
/* Its "kernel_counts" object in the current JSON object. */
void nb_kcounts_json(struct nb_json *j, const struct nb_kcount_summary *s);

#endif
