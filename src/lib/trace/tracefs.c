#define _GNU_SOURCE
#include "tracefs.h"

#include "json.h"
#include "errors.h"
#include "samples.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define TRACE_CLOCK "x86-tsc"
#else
#define TRACE_CLOCK "mono_raw"
#endif

static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

/* What each event says about who held the CPU. Listed by system:event as
 * set_event takes them; those a kernel lacks (irq_vectors off x86) are
 * skipped. */
static const struct {
	const char *event;
	enum nb_trace_kind kind;
} events[] = {
	{ "irq:irq_handler_entry", NB_EV_IRQ_ENTRY },
	{ "irq:irq_handler_exit", NB_EV_IRQ_EXIT },
	{ "irq:softirq_entry", NB_EV_SOFTIRQ_ENTRY },
	{ "irq:softirq_exit", NB_EV_SOFTIRQ_EXIT },
	{ "irq_vectors:local_timer_entry", NB_EV_VECTOR_ENTRY },
	{ "irq_vectors:local_timer_exit", NB_EV_VECTOR_EXIT },
	{ "irq_vectors:call_function_entry", NB_EV_VECTOR_ENTRY },
	{ "irq_vectors:call_function_exit", NB_EV_VECTOR_EXIT },
	{ "irq_vectors:call_function_single_entry", NB_EV_VECTOR_ENTRY },
	{ "irq_vectors:call_function_single_exit", NB_EV_VECTOR_EXIT },
	{ "irq_vectors:reschedule_entry", NB_EV_VECTOR_ENTRY },
	{ "irq_vectors:reschedule_exit", NB_EV_VECTOR_EXIT },
	{ "irq_vectors:irq_work_entry", NB_EV_VECTOR_ENTRY },
	{ "irq_vectors:irq_work_exit", NB_EV_VECTOR_EXIT },
	{ "irq_vectors:x86_platform_ipi_entry", NB_EV_VECTOR_ENTRY },
	{ "irq_vectors:x86_platform_ipi_exit", NB_EV_VECTOR_EXIT },
	{ "timer:hrtimer_expire_entry", NB_EV_HRTIMER_ENTRY },
	{ "timer:hrtimer_expire_exit", NB_EV_HRTIMER_EXIT },
	{ "timer:timer_expire_entry", NB_EV_TIMER_ENTRY },
	{ "timer:timer_expire_exit", NB_EV_TIMER_EXIT },
	{ "workqueue:workqueue_execute_start", NB_EV_WORK_START },
	{ "workqueue:workqueue_execute_end", NB_EV_WORK_END },
	{ "sched:sched_switch", NB_EV_SWITCH },
	{ "sched:sched_wakeup", NB_EV_WAKEUP },
	{ "nmi:nmi_handler", NB_EV_NMI },
};
enum { NEVENTS = sizeof(events) / sizeof(events[0]) };

/* Bytes of ring buffer a second per CPU. A 1000 Hz tick writes about six
 * events of some 40 bytes a millisecond; a CPU shared with a few threads
 * that each run and sleep for tens of microseconds writes about 150,000
 * events a second (tests/nbtest/crowd.py, six threads sleeping 15-45 us),
 * some 6 MB. The buffer
 * holds that, so that a trace loses events only on a CPU busier than that.
 * All CPUs' buffers together take at most an eighth of the memory
 * available; lost events are counted anyway (per_cpu/cpuN/stats), and the
 * time they covered is "unseen" (causes.h). NOISEBENCH_TRACE_BUFFER_KB
 * sets the size per CPU instead (a node short of memory, or a test). */
enum { KB_PER_SECOND = 8192, KB_MIN = 2048, KB_SMALLEST = 64 };

/* One write(2) per value, as tracefs takes them (stdio's append mode seeks,
 * which tracefs refuses). */
static int write_file(const char *dir, const char *name, const char *value, int append)
{
	char path[512];
	size_t len = strlen(value);
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -1;
	ok = write(fd, value, len) == (ssize_t)len;
	return (close(fd) == 0 && ok) ? 0 : -1;
}

static const char *find_root(void)
{
	struct stat st;
	char path[300];

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
			snprintf(path, sizeof(path), "%s/instances", roots[i]);
			if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
				return roots[i];
		}
		/* as root it can be mounted where the kernel expects it */
		if (pass == 0 && mount("nodev", roots[0], "tracefs", 0, NULL) != 0)
			break;
	}
	return NULL;
}

/* tracing_cpumask: hex, in groups of 32 CPUs, the highest first. */
static void cpumask(const int *cpus, int ncpus, char *buf, size_t size)
{
	int top = 0;

	for (int i = 0; i < ncpus; i++)
		top = cpus[i] > top ? cpus[i] : top;
	buf[0] = '\0';
	for (int g = top / 32; g >= 0; g--) {
		uint32_t m = 0;
		size_t len = strlen(buf);

		for (int i = 0; i < ncpus; i++)
			if (cpus[i] / 32 == g)
				m |= 1u << (cpus[i] % 32);
		snprintf(buf + len, size - len, g ? "%08x," : "%08x\n", m);
	}
}

/* An instance left behind would record on, its buffers held, until someone
 * removes it: the run's is removed however the process exits (signals:
 * nb_trace_remove). Setting it up (allocating the buffers can take seconds)
 * and removing it exclude each other: a signal during the set-up removes
 * the instance once it can. */
static struct nb_trace *active;
static pthread_mutex_t setting_up = PTHREAD_MUTEX_INITIALIZER;

static void remove_active(void)
{
	if (active)
		nb_trace_remove(active);
}

static int start(struct nb_trace *t, const int *cpus, int ncpus, double seconds);

int nb_trace_start(struct nb_trace *t, const int *cpus, int ncpus, double seconds)
{
	pthread_mutex_lock(&setting_up);
	int rc = start(t, cpus, ncpus, seconds);

	pthread_mutex_unlock(&setting_up);
	return rc;
}

static void remove_instance(struct nb_trace *t);

static int start(struct nb_trace *t, const int *cpus, int ncpus, double seconds)
{
	const char *root;
	char size[32], mask[NB_MAX_CPUS / 4 + NB_MAX_CPUS / 32 + 2], event[64];
	int enabled = 0;

	memset(t, 0, sizeof(*t));
	if (ncpus <= 0 || ncpus > (int)(sizeof(t->cpus) / sizeof(t->cpus[0])) || cpus[0] < 0) {
		snprintf(t->why, sizeof(t->why), "the participants are not pinned to CPUs");
		return -1;
	}
	memcpy(t->cpus, cpus, (size_t)ncpus * sizeof(*cpus));
	t->ncpus = ncpus;
	root = find_root();
	if (!root) {
		snprintf(t->why, sizeof(t->why), "no tracefs at %s (mount it, or run as root)",
			 roots[0]);
		return -1;
	}
	snprintf(t->dir, sizeof(t->dir), "%s/instances/noisebench-%ld", root, (long)getpid());
	if (mkdir(t->dir, 0700) != 0) {
		snprintf(t->why, sizeof(t->why), "cannot create %s: %s", t->dir, strerror(errno));
		return -1;
	}
	t->on = 1;
	if (!active)
		atexit(remove_active);
	active = t;
	size_t most = (size_t)(nb_memory_available() / 8 / 1024 / (uint64_t)ncpus);

	const char *asked = getenv("NOISEBENCH_TRACE_BUFFER_KB");

	t->buffer_kb = (size_t)(KB_MIN + seconds * KB_PER_SECOND);
	t->buffer_kb = t->buffer_kb > most ? (most > KB_MIN ? most : KB_MIN) : t->buffer_kb;
	if (asked && *asked)
		t->buffer_kb = (size_t)nb_parse_u64("NOISEBENCH_TRACE_BUFFER_KB", asked,
						    KB_SMALLEST, 1 << 30);
	snprintf(size, sizeof(size), "%zu\n", t->buffer_kb);
	cpumask(cpus, ncpus, mask, sizeof(mask));
	if (write_file(t->dir, "tracing_on", "0\n", 0) ||
	    write_file(t->dir, "trace_clock", TRACE_CLOCK "\n", 0) ||
	    write_file(t->dir, "tracing_cpumask", mask, 0) ||
	    write_file(t->dir, "buffer_size_kb", size, 0)) {
		snprintf(t->why, sizeof(t->why), "cannot set up %s: %s", t->dir, strerror(errno));
		remove_instance(t);
		return -1;
	}
	for (int i = 0; i < NEVENTS; i++) {
		snprintf(event, sizeof(event), "%s\n", events[i].event);
		enabled += write_file(t->dir, "set_event", event, 1) == 0;
	}
	if (!enabled || write_file(t->dir, "tracing_on", "1\n", 0)) {
		snprintf(t->why, sizeof(t->why), "cannot enable the events in %s", t->dir);
		remove_instance(t);
		return -1;
	}
	t->started = 1;
	return 0;
}

void nb_trace_skip(struct nb_trace *t, int signo)
{
	if (!t->started)
		return;
	char name[16];

	snprintf(t->why, sizeof(t->why), "interrupted by %s: the trace was left unread, so that "
		 "the samples are written before a second signal",
		 nb_signal_name(signo, name, sizeof(name)));
	t->started = 0;
	nb_trace_remove(t);
}

static void remove_instance(struct nb_trace *t)
{
	if (!t->on)
		return;
	write_file(t->dir, "tracing_on", "0\n", 0);
	rmdir(t->dir);
	t->on = 0;
}

void nb_trace_remove(struct nb_trace *t)
{
	pthread_mutex_lock(&setting_up);
	remove_instance(t);
	pthread_mutex_unlock(&setting_up);
}

void nb_trace_free(struct nb_trace *t)
{
	free(t->ev);
	t->ev = NULL;
	t->nev = 0;
}

uint64_t nb_trace_lost_on(const struct nb_trace *t, int cpu)
{
	for (int i = 0; i < t->ncpus; i++)
		if (t->cpus[i] == cpu)
			return t->lost_on[i];
	return 0;
}

/* Fills t->lost_on and returns their sum. */
static uint64_t lost_events(struct nb_trace *t)
{
	uint64_t lost = 0;

	for (int i = 0; i < t->ncpus; i++) {
		char path[512], line[128];
		FILE *f;

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", t->dir, t->cpus[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "overrun: %llu", &v) == 1 ||
			    sscanf(line, "dropped events: %llu", &v) == 1)
				t->lost_on[i] += v;
		}
		fclose(f);
		lost += t->lost_on[i];
	}
	return lost;
}

/* The value after `key` (e.g. "name=") up to the next space (or, for the
 * softirq action, the closing bracket). */
static void field(const char *fields, const char *key, char *out, size_t size)
{
	const char *p = strstr(fields, key);
	size_t n = 0;

	out[0] = '\0';
	if (!p)
		return;
	p += strlen(key);
	while (p[n] && !isspace((unsigned char)p[n]) && p[n] != ']' && n + 1 < size)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

static long field_long(const char *fields, const char *key)
{
	char v[32];

	field(fields, key, v, sizeof(v));
	return strtol(v, NULL, 10);
}

/* "<comm>-<pid> [<cpu>] <flags> <ts>: <event>: <fields>"; the comm may hold
 * dashes and spaces, so it is read back from the CPU's bracket. */
int nb_trace_parse_line(const char *line, struct nb_trace_event *e, double tpn,
			uint64_t start_tick, uint64_t start_raw_ns)
{
	const char *p = line, *q, *dash, *ev, *fields;
	char name[64];

	for (;; p++) {
		p = strstr(p, " [");
		if (!p)
			return -1;
		if (isdigit((unsigned char)p[2]) && strchr(p + 2, ']'))
			break;
	}
	for (dash = p; dash > line && *dash != '-'; dash--)
		;
	if (*dash != '-')
		return -1;
	for (q = line; q < dash && *q == ' '; q++)
		;
	memset(e, 0, sizeof(*e));
	snprintf(e->comm, sizeof(e->comm), "%.*s", (int)(dash - q), q);
	e->pid = (int32_t)strtol(dash + 1, NULL, 10);
	e->cpu = (int32_t)strtol(p + 2, (char **)&q, 10);
	q = strchr(q, ']') + 1;
	while (*q == ' ')
		q++;
	while (*q && *q != ' ') /* the flags */
		q++;
	while (*q == ' ')
		q++;
	char *end;
	unsigned long long whole = strtoull(q, &end, 10);

	if (end == q)
		return -1;
	if (*end == '.') { /* seconds.microseconds: mono_raw */
		double ns = (double)whole * 1e9 + strtod(end, &end) * 1e9;

		e->tick = start_tick + (uint64_t)llround(((double)ns - (double)start_raw_ns) * tpn);
	} else {
		e->tick = whole;
	}
	if (*end != ':')
		return -1;
	ev = end + 1;
	while (*ev == ' ')
		ev++;
	fields = strchr(ev, ':');
	if (!fields || fields - ev >= (long)sizeof(name))
		return -1;
	snprintf(name, sizeof(name), "%.*s", (int)(fields - ev), ev);
	fields++;

	for (int i = 0; i < NEVENTS; i++) {
		const char *colon = strchr(events[i].event, ':');

		if (strcmp(colon + 1, name) != 0)
			continue;
		e->kind = (uint8_t)events[i].kind;
		switch (events[i].kind) {
		case NB_EV_IRQ_ENTRY:
		case NB_EV_IRQ_EXIT:
			e->a = (int32_t)field_long(fields, "irq=");
			field(fields, "name=", e->name, sizeof(e->name));
			break;
		case NB_EV_SOFTIRQ_ENTRY:
		case NB_EV_SOFTIRQ_EXIT:
			e->a = (int32_t)field_long(fields, "vec=");
			field(fields, "action=", e->name, sizeof(e->name));
			break;
		case NB_EV_VECTOR_ENTRY:
		case NB_EV_VECTOR_EXIT:
			snprintf(e->name, sizeof(e->name), "%.*s",
				 (int)(strrchr(name, '_') - name), name);
			break;
		case NB_EV_HRTIMER_ENTRY:
		case NB_EV_TIMER_ENTRY:
			field(fields, "function=", e->name, sizeof(e->name));
			break;
		case NB_EV_WORK_START: /* "work struct %p: function %ps" */
			field(fields, "function ", e->name, sizeof(e->name));
			break;
		case NB_EV_SWITCH:
			e->a = (int32_t)field_long(fields, "next_pid=");
			field(fields, "next_comm=", e->name, sizeof(e->name));
			break;
		case NB_EV_WAKEUP:
			e->a = (int32_t)field_long(fields, " pid=");
			e->b = (int32_t)field_long(fields, "target_cpu=");
			field(fields, "comm=", e->name, sizeof(e->name));
			break;
		case NB_EV_NMI:
			e->a = (int32_t)field_long(fields, "delta_ns=");
			field(fields, "handler=", e->name, sizeof(e->name));
			break;
		default:
			break;
		}
		return 0;
	}
	return 1; /* an event we do not use */
}

int nb_trace_read(struct nb_trace *t, double ticks_per_ns, uint64_t start_tick,
		  uint64_t start_raw_ns)
{
	char path[300];
	char *line = NULL;
	size_t cap = 0, size = 0;
	FILE *f;

	if (!t->on)
		return -1;
	write_file(t->dir, "tracing_on", "0\n", 0);
	t->lost = lost_events(t);
	snprintf(path, sizeof(path), "%s/trace", t->dir);
	f = fopen(path, "r");
	if (!f) {
		snprintf(t->why, sizeof(t->why), "cannot read %s: %s", path, strerror(errno));
		nb_trace_remove(t);
		return -1;
	}
	while (getline(&line, &size, f) > 0) {
		struct nb_trace_event e;

		if (line[0] == '#' ||
		    nb_trace_parse_line(line, &e, ticks_per_ns, start_tick, start_raw_ns))
			continue;
		if (t->nev == cap) {
			size_t grown = cap ? 2 * cap : 4096;
			struct nb_trace_event *ev = realloc(t->ev, grown * sizeof(*ev));

			if (!ev)
				break;
			t->ev = ev;
			cap = grown;
		}
		t->ev[t->nev++] = e;
	}
	free(line);
	fclose(f);
	nb_trace_remove(t);
	t->events = t->nev;
	t->read = 1;
	return 0;
}

void nb_trace_json(struct nb_json *j, const struct nb_trace *t)
{
	nb_json_object(j, "trace");
	nb_json_bool(j, "attributed", t->read);
	if (t->read) {
		nb_json_string(j, "clock", TRACE_CLOCK);
		nb_json_uint(j, "buffer_kb_per_cpu", t->buffer_kb);
		nb_json_uint(j, "events", t->events);
		nb_json_uint(j, "lost_events", t->lost);
	} else {
		nb_json_string(j, "why", t->why[0] ? t->why
				  : t->started ? "the trace was not read" : "not asked for (--trace)");
	}
	nb_json_end(j, '}');
}
