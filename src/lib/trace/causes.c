#define _GNU_SOURCE
#include "causes.h"
#include "cause_classes.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "errors.h"
#include "team.h"

/* the names the analysis, ReFrame and the docs use (src/kernels/kernels.json) */
const char *const nb_cause_class_names[NB_CAUSE_CLASSES] = NB_CAUSE_CLASS_NAMES;
_Static_assert(NB_CAUSE_CLASS_COUNT == NB_CAUSE_CLASSES,
	       "kernels.json's cause_classes and enum nb_cause_class differ");

enum { DEPTH = 16 };

struct context {
	int kind; /* the entry event that opened it */
	int cls;
	char name[NB_CAUSE_NAME];
};

struct segments {
	struct nb_cause_segment *v;
	size_t n, cap;
	int failed;
};

static void add(struct segments *s, uint64_t start, uint64_t end, int cls, const char *name)
{
	if (end <= start || s->failed)
		return;
	if (s->n && s->v[s->n - 1].end == start && s->v[s->n - 1].cls == cls &&
	    strcmp(s->v[s->n - 1].name, name) == 0) {
		s->v[s->n - 1].end = end;
		return;
	}
	if (s->n == s->cap) {
		size_t grown = s->cap ? 2 * s->cap : 1024;
		struct nb_cause_segment *v = realloc(s->v, grown * sizeof(*v));

		if (!v) {
			s->failed = 1;
			return;
		}
		s->v = v;
		s->cap = grown;
	}
	s->v[s->n].start = start;
	s->v[s->n].end = end;
	s->v[s->n].cls = cls;
	snprintf(s->v[s->n].name, NB_CAUSE_NAME, "%s", name);
	s->n++;
}

static int is_own(int pid, const int *own, int nown)
{
	for (int i = 0; i < nown; i++)
		if (own[i] == pid)
			return 1;
	return 0;
}

/* The entry events open a context of their class; names are one word, as
 * the causes file has them in a column. */
static int open_context(const struct nb_trace_event *e, struct context *c)
{
	c->kind = e->kind;
	switch (e->kind) {
	case NB_EV_IRQ_ENTRY:
		c->cls = NB_CAUSE_IRQ;
		snprintf(c->name, sizeof(c->name), "%d:%.28s", e->a, e->name);
		return 1;
	case NB_EV_SOFTIRQ_ENTRY:
		c->cls = NB_CAUSE_SOFTIRQ;
		snprintf(c->name, sizeof(c->name), "%s", e->name);
		return 1;
	case NB_EV_VECTOR_ENTRY:
		c->cls = strcmp(e->name, "local_timer") == 0 ? NB_CAUSE_TIMER : NB_CAUSE_IPI;
		snprintf(c->name, sizeof(c->name), "%s", e->name);
		return 1;
	case NB_EV_HRTIMER_ENTRY:
	case NB_EV_TIMER_ENTRY:
		c->cls = NB_CAUSE_TIMER;
		snprintf(c->name, sizeof(c->name), "%s", e->name);
		return 1;
	default:
		return 0;
	}
}

/* the entry kind each exit closes */
static int closes(int kind)
{
	switch (kind) {
	case NB_EV_IRQ_EXIT: return NB_EV_IRQ_ENTRY;
	case NB_EV_SOFTIRQ_EXIT: return NB_EV_SOFTIRQ_ENTRY;
	case NB_EV_VECTOR_EXIT: return NB_EV_VECTOR_ENTRY;
	case NB_EV_HRTIMER_EXIT: return NB_EV_HRTIMER_ENTRY;
	case NB_EV_TIMER_EXIT: return NB_EV_TIMER_ENTRY;
	default: return -1;
	}
}

/* The workqueue items the kworkers on a CPU are running: a task's, not the
 * CPU's (a kworker preempted in one resumes it after the switch back). */
enum { WORKERS = 64 };

struct work {
	int pid;
	char function[NB_CAUSE_NAME];
};

static struct work *work_of(struct work *w, int pid)
{
	for (int i = 0; i < WORKERS; i++)
		if (w[i].pid == pid)
			return &w[i];
	return NULL;
}

static void work_set(struct work *w, int pid, const char *function)
{
	struct work *slot = work_of(w, pid);

	if (!slot && function)
		slot = work_of(w, 0);
	if (!slot)
		return;
	slot->pid = function ? pid : 0;
	snprintf(slot->function, sizeof(slot->function), "%s", function ? function : "");
}

/* A task is named "comm:pid", or "comm:function" while running a workqueue
 * item; one word, as the causes file has names in a column. */
static void task_name(char *buf, size_t size, const char *comm, int pid, struct work *w)
{
	struct work *item = work_of(w, pid);

	if (item)
		snprintf(buf, size, "%.16s:%.22s", comm, item->function);
	else
		snprintf(buf, size, "%s:%d", comm, pid);
	for (char *p = buf; *p; p++)
		if (*p == ' ')
			*p = '_';
}

/* Who held the CPU over [from, to): the innermost context, else the task
 * when it is not a measuring one. */
static void held(struct segments *s, uint64_t from, uint64_t to, const struct context *stack,
		 int depth, int pid, const char *comm, struct work *w, const int *own, int nown)
{
	char name[NB_CAUSE_NAME];

	if (depth) {
		add(s, from, to, stack[depth - 1].cls, stack[depth - 1].name);
	} else if (pid > 0 && !is_own(pid, own, nown)) {
		task_name(name, sizeof(name), comm, pid, w);
		add(s, from, to, NB_CAUSE_THREAD, name);
	} else if (pid == 0) {
		/* the idle task: the measured thread was not on its CPU, and
		 * nothing else was */
		add(s, from, to, NB_CAUSE_THREAD, "idle");
	}
}

size_t nb_cause_segments(const struct nb_trace *t, int cpu, const int *own, int nown,
			 double ticks_per_ns, struct nb_cause_segment **out, uint64_t *inferred)
{
	struct segments s = { 0 };
	struct context stack[DEPTH];
	struct work work[WORKERS] = { { 0 } };
	int depth = 0, pid = -1, have = 0, woken = -1;
	char comm[sizeof(t->ev[0].comm)] = "";
	uint64_t last = 0, woken_at = 0;

	*inferred = 0;
	for (size_t i = 0; i < t->nev; i++) {
		const struct nb_trace_event *e = &t->ev[i];

		if (e->cpu != cpu)
			continue;
		if (have && e->pid != pid) {
			/* A switch the trace does not hold (the trace can drop one,
			 * e.g. to a task woken at real-time priority): every event
			 * names the task it came from, so the switch was since the
			 * last event; placed at the task's wake-up on this CPU when
			 * that came since, as its preemption follows it at once. */
			uint64_t at = woken == e->pid && woken_at >= last ? woken_at : last;

			held(&s, last, at, stack, depth, pid, comm, work, own, nown);
			last = at;
			pid = e->pid;
			snprintf(comm, sizeof(comm), "%s", e->comm);
			(*inferred)++;
		}
		/* who held the CPU since the last event */
		if (have)
			held(&s, last, e->tick, stack, depth, pid, comm, work, own, nown);
		have = 1;
		last = e->tick;
		pid = e->pid;
		snprintf(comm, sizeof(comm), "%s", e->comm);

		if (e->kind == NB_EV_WAKEUP && e->b == cpu) {
			woken = e->a;
			woken_at = e->tick;
		} else if (e->kind == NB_EV_WORK_START || e->kind == NB_EV_WORK_END) {
			work_set(work, e->pid, e->kind == NB_EV_WORK_START ? e->name : NULL);
		} else if (e->kind == NB_EV_SWITCH) {
			pid = e->a;
			snprintf(comm, sizeof(comm), "%.16s", e->name);
		} else if (e->kind == NB_EV_NMI) {
			/* logged at its end, with its length */
			uint64_t len = (uint64_t)((double)e->a * ticks_per_ns);

			add(&s, e->tick > len ? e->tick - len : 0, e->tick, NB_CAUSE_NMI, e->name);
		} else if (closes(e->kind) >= 0) {
			/* an exit without its entry (the trace began inside it) closes
			 * nothing; one whose inner exits are missing closes those too */
			int k = depth;

			while (k > 0 && stack[k - 1].kind != closes(e->kind))
				k--;
			if (k > 0)
				depth = k - 1;
		} else if (depth < DEPTH && open_context(e, &stack[depth])) {
			depth++;
		}
	}
	/* what held the CPU at the end holds it until the run's files are read */
	if (have)
		held(&s, last, UINT64_MAX, stack, depth, pid, comm, work, own, nown);
	if (s.failed) {
		free(s.v);
		*out = NULL;
		return 0;
	}
	*out = s.v;
	return s.n;
}

struct share {
	int cls;
	const char *name;
	double time;
};

/* One detour's causes: as many as it had, never a cap (a detour of tens of
 * milliseconds on a busy node meets hundreds of threads). */
struct shares {
	struct share *v;
	int n, cap, failed;
};

static void credit(struct shares *in, int cls, const char *name, double time)
{
	for (int i = 0; i < in->n; i++)
		if (in->v[i].cls == cls && strcmp(in->v[i].name, name) == 0) {
			in->v[i].time += time;
			return;
		}
	if (in->n == in->cap) {
		int grown = in->cap ? 2 * in->cap : 64;
		struct share *v = realloc(in->v, (size_t)grown * sizeof(*v));

		if (!v) {
			in->failed = 1;
			return;
		}
		in->v = v;
		in->cap = grown;
	}
	in->v[in->n++] = (struct share){ cls, name, time };
}

static void tally(struct nb_cause_totals *tot, const struct share *c)
{
	int i;

	tot->cls[c->cls].count++;
	tot->cls[c->cls].total += c->time;
	tot->cls[c->cls].longest = fmax(tot->cls[c->cls].longest, c->time);
	for (i = 0; i < tot->ntop; i++)
		if (tot->top[i].cls == c->cls && strcmp(tot->top[i].name, c->name) == 0)
			break;
	if (i == tot->ntop) {
		if (tot->ntop < NB_CAUSE_TOP) {
			tot->ntop++;
		} else if (tot->top[i - 1].total < c->time) {
			i--; /* the least takes the new name's place */
		} else {
			return;
		}
		tot->top[i].cls = c->cls;
		snprintf(tot->top[i].name, NB_CAUSE_NAME, "%s", c->name);
		tot->top[i].count = 0;
		tot->top[i].total = 0;
	}
	tot->top[i].count++;
	tot->top[i].total += c->time;
	for (; i > 0 && tot->top[i].total > tot->top[i - 1].total; i--) {
		__typeof__(tot->top[0]) swap = tot->top[i];

		tot->top[i] = tot->top[i - 1];
		tot->top[i - 1] = swap;
	}
}

static double overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? (double)(hi - lo) : 0.0;
}

/* Credits what the causes in `in` do not explain of a detour's loss: to
 * "unseen" for the part of [start, end) before the trace saw this CPU, to
 * "hardware" for the rest; and scales the causes to the loss where they
 * held the CPU longer, so that they add up to it. */
static void complete(struct shares *in, const struct nb_cause_detour *d, uint64_t seen_from)
{
	double explained = 0;

	for (int c = 0; c < in->n; c++)
		explained += in->v[c].time;
	if (explained > d->lost) {
		for (int c = 0; c < in->n; c++)
			in->v[c].time *= d->lost / explained;
		return;
	}
	double rest = d->lost - explained;
	double unseen = fmin(rest, overlap(d->start, d->end, 0, seen_from));

	if (unseen > 0)
		credit(in, NB_CAUSE_UNSEEN, "-", unseen);
	if (rest > unseen)
		credit(in, NB_CAUSE_HARDWARE, "-", rest - unseen);
}

int nb_causes_join(const struct nb_cause_segment *seg, size_t nseg,
		   const struct nb_inject_count *inj, const struct nb_cause_detour *d, size_t nd,
		   uint64_t origin, uint64_t seen_from, double ticks_per_ns, FILE *f,
		   struct nb_cause_totals *tot)
{
	size_t s = 0, k = 0;
	size_t ninj = inj && inj->events ? inj->logged : 0;
	struct shares in = { 0 };
	int rc = 0;

	tot->attributed = 1;
	for (size_t i = 0; i < nd && rc >= 0; i++) {
		in.n = 0;
		/* detours and segments are in time order: both cursors only advance */
		while (s < nseg && seg[s].end <= d[i].start)
			s++;
		for (size_t j = s; j < nseg && seg[j].start < d[i].end; j++)
			credit(&in, seg[j].cls, seg[j].name,
			       overlap(seg[j].start, seg[j].end, d[i].start, d[i].end));
		while (k < ninj && inj->events[k].exit <= d[i].start)
			k++;
		for (size_t j = k; j < ninj && inj->events[j].entry < d[i].end; j++)
			credit(&in, NB_CAUSE_INJECTION, "inject",
			       overlap(inj->events[j].entry, inj->events[j].exit, d[i].start,
				       d[i].end));
		complete(&in, &d[i], seen_from);
		if (in.failed) {
			rc = -2;
			break;
		}
		tot->detours++;
		tot->noise += d[i].lost;
		for (int c = 0; c < in.n && rc >= 0; c++) {
			if (in.v[c].time <= 0)
				continue;
			tally(tot, &in.v[c]);
			if (f)
				rc = fprintf(f, "%.0f %.0f %.0f %s %s %.0f\n",
					     (double)(d[i].start - origin) / ticks_per_ns,
					     (double)(d[i].end - d[i].start) / ticks_per_ns,
					     d[i].lost / ticks_per_ns, nb_cause_class_names[in.v[c].cls],
					     in.v[c].name, in.v[c].time / ticks_per_ns);
		}
	}
	free(in.v);
	return rc;
}

size_t nb_detours_fixed_work(const uint64_t *x, size_t n, uint64_t origin,
			     double timer_read_ticks, struct nb_cause_detour **out)
{
	uint64_t at = origin, best = UINT64_MAX;
	size_t m = 0, cap = 0;
	struct nb_cause_detour *d = NULL;

	for (size_t i = 0; i < n; i++)
		best = x[i] < best ? x[i] : best;
	for (size_t i = 0; i < n; at += x[i], i++) {
		double lost = (double)(x[i] - best);

		if (lost <= NB_CAUSE_THRESHOLD * (double)best + 2 * timer_read_ticks)
			continue;
		if (m == cap) {
			size_t grown = cap ? 2 * cap : 1024;
			struct nb_cause_detour *v = realloc(d, grown * sizeof(*v));

			if (!v)
				break;
			d = v;
			cap = grown;
		}
		d[m++] = (struct nb_cause_detour){ at, at + x[i], lost };
	}
	*out = d;
	return m;
}

struct nb_outfile **nb_causes_start(struct nb_trace *t, int asked, const struct nb_thread *p,
				    const int *cpus, int n, double seconds, const char *prefix,
				    int no_files)
{
	struct nb_outfile **files = calloc(n ? n : 1, sizeof(*files));
	char path[4096];

	if (!files)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	if (!asked)
		return files;
	if (nb_trace_start(t, cpus, n, seconds) != 0) {
		nb_warn("--trace: detours will not be attributed: %s", t->why);
		return files;
	}
	for (int i = 0; i < n && !no_files; i++) {
		snprintf(path, sizeof(path), "%s_%d_causes.dat", prefix, p[i].index);
		files[i] = nb_outfile_open(path);
		if (!files[i])
			nb_fail(NB_EXIT_USAGE, "-o %s: cannot create %s: %s", prefix, path,
				strerror(errno));
	}
	return files;
}

void nb_causes_discard(struct nb_outfile **files, int n)
{
	for (int i = 0; files && i < n; i++)
		if (files[i]) {
			nb_outfile_discard(files[i]);
			files[i] = NULL;
		}
}

void nb_causes_attribute(const struct nb_trace *t, const struct nb_thread *p, int n, int which,
			 const struct nb_cause_detour *d, size_t nd, double ticks_per_ns,
			 FILE *f, const char *name, struct nb_cause_totals *tot)
{
	const struct nb_thread *me = &p[which];
	struct nb_cause_segment *seg;
	int own[NB_MAX_CPUS];

	memset(tot, 0, sizeof(*tot));
	for (int i = 0; i < n; i++)
		own[i] = p[i].tid;
	size_t nseg = nb_cause_segments(t, me->cpu, own, n, ticks_per_ns, &seg,
					&tot->switches_inferred);

	/* a CPU whose buffer overwrote events holds none from before its first */
	uint64_t seen_from = 0;
	int lost_here = nb_trace_lost_on(t, me->cpu) > 0;

	tot->lost_events = t->lost;
	for (size_t i = 0; i < t->nev; i++)
		if (t->ev[i].cpu == me->cpu) {
			if (lost_here && !tot->trace_events)
				seen_from = t->ev[i].tick;
			tot->trace_events++;
		}
	if (lost_here && !tot->trace_events)
		seen_from = UINT64_MAX;
	int rc = nb_causes_join(seg, nseg, &me->injections, d, nd, me->start_tick, seen_from,
				ticks_per_ns, f, tot);

	if (rc == -2)
		nb_fail(NB_EXIT_FAILURE, "out of memory joining the causes of %s", name);
	if (rc < 0 || (f && (fflush(f) != 0 || ferror(f))))
		nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", f ? name : "causes", strerror(errno));
	free(seg);
}

static double share_of(const struct nb_cause_totals *tot, double part)
{
	double all = 0;

	for (int c = 0; c < NB_CAUSE_CLASSES; c++)
		all += tot->cls[c].total;
	return all > 0 ? part / all : 0.0;
}

void nb_causes_json(struct nb_json *j, const struct nb_cause_totals *tot, double ticks_per_ns,
		    const char *file, const uint64_t *range)
{
	nb_json_object(j, "causes");
	nb_json_bool(j, "attributed", tot->attributed);
	if (tot->attributed) {
		if (file)
			nb_json_string(j, "file", file);
		else
			nb_json_null(j, "file");
		if (file && range)
			nb_json_range(j, "file_range", range);
		nb_json_uint(j, "detours", tot->detours);
		nb_json_double(j, "noise_ns", tot->noise / ticks_per_ns);
		nb_json_uint(j, "trace_events", tot->trace_events);
		nb_json_uint(j, "lost_events", tot->lost_events);
		nb_json_uint(j, "switches_inferred", tot->switches_inferred);
		nb_json_object(j, "classes");
		for (int c = 0; c < NB_CAUSE_CLASSES; c++) {
			nb_json_object(j, nb_cause_class_names[c]);
			nb_json_uint(j, "count", tot->cls[c].count);
			nb_json_double(j, "total_ns", tot->cls[c].total / ticks_per_ns);
			nb_json_double(j, "longest_ns", tot->cls[c].longest / ticks_per_ns);
			nb_json_double(j, "share", share_of(tot, tot->cls[c].total));
			nb_json_end(j, '}');
		}
		nb_json_end(j, '}');
		nb_json_array(j, "top");
		for (int i = 0; i < tot->ntop; i++) {
			nb_json_object(j, NULL);
			nb_json_string(j, "class", nb_cause_class_names[tot->top[i].cls]);
			nb_json_string(j, "name", tot->top[i].name);
			nb_json_uint(j, "count", tot->top[i].count);
			nb_json_double(j, "total_ns", tot->top[i].total / ticks_per_ns);
			nb_json_double(j, "share", share_of(tot, tot->top[i].total));
			nb_json_end(j, '}');
		}
		nb_json_end(j, ']');
	}
	nb_json_end(j, '}');
}

void nb_causes_print(const struct nb_cause_totals *tot, double tpn, FILE *out)
{
	const char *sep = " causes=";

	if (!tot->attributed)
		return;
	for (int c = 0; c < NB_CAUSE_CLASSES; c++) {
		double s = share_of(tot, tot->cls[c].total);

		if (s >= 0.0005) {
			fprintf(out, "%s%s:%.1f%%", sep, nb_cause_class_names[c], 100 * s);
			sep = ",";
		}
	}
	/* the cause a tuner looks at first: the one that took most of what the
	 * kernel could explain */
	for (int i = 0; i < tot->ntop; i++)
		if (tot->top[i].cls != NB_CAUSE_HARDWARE) {
			fprintf(out, " top_cause=%s:%s", nb_cause_class_names[tot->top[i].cls],
				tot->top[i].name);
			break;
		}
	if (tot->lost_events)
		fprintf(out, " trace_lost_events=%llu trace_unseen_us=%.0f",
			(unsigned long long)tot->lost_events, tot->cls[NB_CAUSE_UNSEEN].total / tpn / 1e3);
}
