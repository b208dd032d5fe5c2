/* Why a detour happened: the kernel's account of who held the CPU during it
 * (tracefs.h), joined to the detours a kernel found, by time.
 *
 * The trace is cut, per CPU, into intervals each held by one cause: the
 * innermost of the interrupt, softirq, timer, IPI or workqueue item running,
 * else the task on the CPU when it is not the measured one. A detour gets the
 * time each cause held inside it; what its loss holds beyond that is
 * "hardware" (nothing in the kernel explains it: the hypervisor, an SMI, the
 * interrupt's own entry, a slower clock), as rtla osnoise counts HW noise.
 * The run's own injections (inject.h) are a cause of their own. Where the
 * trace lost the events of part of a detour (a buffer overwrites its oldest
 * when full), that part is "unseen": nobody can say what took it.
 *
 * The account is complete: each detour's causes add up to its loss. Where
 * the causes held the CPU longer than the loss (a cause that took the
 * fastest sample too), each is credited its share of the loss. */
#ifndef NB_CAUSES_H
#define NB_CAUSES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "inject.h"
#include "json.h"
#include "tracefs.h"

enum nb_cause_class {
	NB_CAUSE_HARDWARE, NB_CAUSE_NMI, NB_CAUSE_IRQ, NB_CAUSE_SOFTIRQ, NB_CAUSE_TIMER,
	NB_CAUSE_IPI, NB_CAUSE_THREAD, NB_CAUSE_INJECTION, NB_CAUSE_UNSEEN, NB_CAUSE_CLASSES
};
extern const char *const nb_cause_class_names[NB_CAUSE_CLASSES];

enum { NB_CAUSE_NAME = 40, NB_CAUSE_TOP = 8 };

/* An interval a kernel found slower than its best (ticks): the sample,
 * quantum, iteration or detour, and the time it lost. */
struct nb_cause_detour {
	uint64_t start, end;
	double lost;
};

/* One cause holding one CPU over [start, end) (ticks). */
struct nb_cause_segment {
	uint64_t start, end;
	int cls;
	char name[NB_CAUSE_NAME];
};

/* What a participant's detours were attributed to: fixed size, so that MPI
 * ranks can send it to the root. Times in ticks. */
struct nb_cause_totals {
	int attributed;         /* 0: not traced (why: in the run's JSON) */
	uint64_t detours;
	uint64_t trace_events;  /* on this CPU */
	uint64_t lost_events;   /* by the whole trace */
	uint64_t switches_inferred; /* on this CPU (nb_cause_segments) */
	double noise;           /* the detours' loss: the classes' totals add up to it */
	struct {
		uint64_t count; /* detours it took part in */
		double total, longest;
	} cls[NB_CAUSE_CLASSES];
	struct {
		int cls;
		char name[NB_CAUSE_NAME];
		uint64_t count;
		double total;
	} top[NB_CAUSE_TOP];    /* the names that took most, most first */
	int ntop;
};

/* The causes on `cpu`, in time order; `own` are the measured tasks (their
 * time is nobody's noise). Returns how many (*out is malloc'd; NULL, 0 when
 * out of memory); *inferred counts the task switches the trace did not hold
 * and the next event's task revealed. */
size_t nb_cause_segments(const struct nb_trace *t, int cpu, const int *own, int nown,
			 double ticks_per_ns, struct nb_cause_segment **out, uint64_t *inferred);

/* Joins detours (in time order) to the segments and to the run's injections
 * on that CPU; writes a line per detour and cause to f (NULL: none),
 * "start_ns span_ns lost_ns class name time_ns" with start from `origin`, and
 * adds up *tot. The trace holds nothing of that CPU before seen_from (its
 * lost events' time; 0 when it lost none). Returns what fprintf returned
 * last (negative on error; -2 out of memory). */
int nb_causes_join(const struct nb_cause_segment *seg, size_t nseg,
		   const struct nb_inject_count *inj, const struct nb_cause_detour *d, size_t nd,
		   uint64_t origin, uint64_t seen_from, double ticks_per_ns, FILE *f,
		   struct nb_cause_totals *tot);

/* Detours of fixed-work samples that tile the run from `origin` (FWQ,
 * P-SNAP): samples above the fastest by more than NB_CAUSE_THRESHOLD of it
 * and two timer reads, each losing its excess over the fastest. Against the
 * fastest, not the samples around: noise that hits most samples, or a clock
 * that runs slow for a while, is still time lost, and the trace says whether
 * the kernel saw a cause for it (a slower clock is "hardware"). */
#define NB_CAUSE_THRESHOLD 0.01
size_t nb_detours_fixed_work(const uint64_t *x, size_t n, uint64_t origin,
			     double timer_read_ticks, struct nb_cause_detour **out);

/* --trace: starts the trace of the participants' CPUs for a run of about
 * `seconds` and creates each one's causes file, PREFIX_<index>_causes.dat
 * (unless no_files: -s); without tracefs one warning, and the run goes on
 * (t->why says why). Returns the n files, NULL where none (calloc'd). */
struct nb_outfile;
struct nb_thread;
struct nb_outfile **nb_causes_start(struct nb_trace *t, int asked, const struct nb_thread *p,
				    const int *cpus, int n, double seconds, const char *prefix,
				    int no_files);

/* Removes the causes files not written (a run stopped by a signal leaves
 * its trace unread: nb_trace_skip). */
void nb_causes_discard(struct nb_outfile **files, int n);

/* Joins participant `which` of p[0..n) (its detours d, in time order) to
 * what the trace saw on its CPU, writes its causes into f (NULL: none; name
 * is the file's, for errors), and fills *tot. The other participants are
 * measured too: their time is nobody's noise. */
void nb_causes_attribute(const struct nb_trace *t, const struct nb_thread *p, int n, int which,
			 const struct nb_cause_detour *d, size_t nd, double ticks_per_ns,
			 FILE *f, const char *name, struct nb_cause_totals *tot);

/* The "causes" object of a participant's JSON (times in ns; file NULL when
 * the samples went to stdout; range its [offset, bytes] in a node's file, or
 * NULL: the file is the participant's own). */
void nb_causes_json(struct nb_json *j, const struct nb_cause_totals *tot, double ticks_per_ns,
		    const char *file, const uint64_t *range);
/* " causes=class:share%,... top_cause=class:name" for a summary line
 * (nothing when not traced); where the trace lost events, how many and the
 * time they leave unexplained, " trace_lost_events=N trace_unseen_us=U". */
void nb_causes_print(const struct nb_cause_totals *tot, double ticks_per_ns, FILE *out);

#endif
