#define _GNU_SOURCE
#include "inject.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "draw.h"
#include "errors.h"
#include "samples.h"
#include "stats.h"
#include "timer.h"

static uint64_t duration_ticks, period_ns, duration_ns;
static double ticks_per_ns;
static int poisson;
/* The handler runs on the measuring thread the timer belongs to. */
static __thread struct nb_inject_count *delivered;
static __thread timer_t own_timer;
/* Poisson stream: when the armed one-shot timer is due (CLOCK_MONOTONIC ns),
 * and the thread's own generator (xorshift64*) */
static __thread uint64_t next_due_ns, rng;

void nb_inject_parse(const char *opt, const char *arg, struct nb_inject *in)
{
	char *end;
	unsigned long long period, duration;

	errno = 0;
	period = strtoull(arg, &end, 10);
	if (end == arg || *end != ':' || arg[0] == '-' || errno)
		nb_fail(NB_EXIT_USAGE, "%s %s: expected PERIOD_US:DURATION_US, e.g. 1000:20", opt,
			arg);
	const char *d = end + 1;

	duration = strtoull(d, &end, 10);
	if (end == d || *d == '-' || errno)
		nb_fail(NB_EXIT_USAGE, "%s %s: expected PERIOD_US:DURATION_US, e.g. 1000:20", opt,
			arg);
	in->poisson = 0;
	if (!strcmp(end, ":poisson"))
		in->poisson = 1;
	else if (*end && strcmp(end, ":periodic"))
		nb_fail(NB_EXIT_USAGE, "%s %s: after PERIOD_US:DURATION_US only :periodic or "
			":poisson", opt, arg);
	if (period < 10 || period > 60000000)
		nb_fail(NB_EXIT_USAGE, "%s %s: the period must be from 10 to 60000000 us", opt, arg);
	if (duration < 1 || duration >= period)
		nb_fail(NB_EXIT_USAGE, "%s %s: the duration must be at least 1 us and shorter than "
			"the period", opt, arg);
	in->period_us = period;
	in->duration_us = duration;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The time left to the own timer's next expiry, in ns; UINT64_MAX when it
 * cannot be read. */
static uint64_t timer_left_ns(void)
{
	struct itimerspec left;

	if (timer_gettime(own_timer, &left) != 0)
		return UINT64_MAX;
	return (uint64_t)left.it_value.tv_sec * 1000000000u + (uint64_t)left.it_value.tv_nsec;
}

/* A clock value and the tick of the same moment: the middle of the
 * narrowest of up to 4 brackets of two tick reads, done at once when one is
 * under 1 us. A thread preempted between a lone tick read and the clock read
 * would date its due time early by the whole preemption (two dues a few
 * milliseconds out of order). */
static uint64_t tick_beside(uint64_t (*read_clock)(void), uint64_t *value)
{
	uint64_t narrowest = UINT64_MAX, tick = 0;

	*value = 0;
	for (int i = 0; i < 4 && (double)narrowest > 1000.0 * ticks_per_ns; i++) {
		uint64_t before = nb_ticks(), v = read_clock(), after = nb_ticks();

		if (after - before < narrowest) {
			narrowest = after - before;
			tick = before + narrowest / 2;
			*value = v;
		}
	}
	return tick;
}

/* When the timer that sent the signal being handled was due, from the time
 * left to its next expiry, at the latest the handler's entry tick: a thread
 * held up past the next expiry after its entry (a stall, the vCPU taken)
 * reads the time left to a later one, whole periods on. Counts the
 * expirations folded into this one. */
static uint64_t due_tick(uint64_t entry)
{
	uint64_t left_ns, late = 0;
	int missed = timer_getoverrun(own_timer);

	if (missed > 0 && delivered)
		delivered->missed += (uint64_t)missed;
	uint64_t tick = tick_beside(timer_left_ns, &left_ns);

	if (left_ns < period_ns)
		late = (uint64_t)((double)(period_ns - left_ns) * ticks_per_ns);
	uint64_t due = tick - late, period = (uint64_t)((double)period_ns * ticks_per_ns);

	/* past the entry by less than half a period: the two clocks' bracket
	 * (about 1 us) on a fast delivery, not a later expiry */
	if (due > entry && period > 0 && due - entry >= period / 2)
		due -= (due - entry + period - 1) / period * period;
	return due < entry ? due : entry;
}

/* When the one-shot timer of a Poisson stream was due: it reads back
 * nothing once due, so the lateness comes from the clock it was armed on;
 * at the latest the handler's entry tick. */
static uint64_t poisson_due_tick(uint64_t entry)
{
	uint64_t now_ns;
	uint64_t tick = tick_beside(monotonic_ns, &now_ns);
	uint64_t due = tick;

	if (now_ns > next_due_ns)
		due = tick - (uint64_t)((double)(now_ns - next_due_ns) * ticks_per_ns);
	return due < entry ? due : entry;
}

static struct itimerspec once_at(uint64_t ns)
{
	struct itimerspec its = { { 0, 0 }, { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) } };

	return its;
}

/* DURATION plus an exponential wait of mean PERIOD - DURATION, in ns */
static uint64_t poisson_gap_ns(void)
{
	return duration_ns + (uint64_t)nb_draw_exponential(&rng, (double)(period_ns - duration_ns));
}

/* Arms the one-shot timer for the next injection of a Poisson stream; those
 * due while the last was served (the thread not running) are missed, as a
 * periodic timer's overruns are, not served back to back. */
static void arm_next(uint64_t now_ns)
{
	next_due_ns += poisson_gap_ns();
	while (next_due_ns <= now_ns) {
		delivered->missed++;
		next_due_ns += poisson_gap_ns();
	}
	struct itimerspec its = once_at(next_due_ns);

	timer_settime(own_timer, TIMER_ABSTIME, &its, NULL);
}

/* The detour lasts DURATION from the moment the timer was due, not from the
 * handler's entry: interrupt and signal delivery (tens of us in a nested VM)
 * fall inside it, so each injection steals DURATION plus only the return.
 * Logging the event costs a store into memory faulted in before the start. */
static void busy_wait(int sig)
{
	(void)sig;
	uint64_t now = nb_ticks(), last = now;

	delivered->served++;
	uint64_t due = poisson ? poisson_due_tick(now) : due_tick(now);
	uint64_t end = due + duration_ticks;

	while ((last = nb_ticks()) < end)
		;
	if (poisson)
		arm_next(monotonic_ns());
	uint64_t k = delivered->logged;

	if (k < delivered->capacity) {
		delivered->events[k] = (struct nb_injection){
			.due = due, .entry = now, .exit = last, .cpu = sched_getcpu(),
		};
		/* release: a reader that sees the count sees the event */
		__atomic_store_n(&delivered->logged, k + 1, __ATOMIC_RELEASE);
	}
}

/* At most 4 Mi events (128 MiB) a thread: an hour at one a millisecond. */
enum { LOG_MAX = 1 << 22 };

void nb_inject_log_alloc(const struct nb_inject *in, double seconds,
			 struct nb_inject_count *count)
{
	if (!in->duration_us)
		return;
	double want = 4.0 * seconds * 1e6 / (double)in->period_us + 16;

	count->capacity = want < LOG_MAX ? (uint64_t)want : LOG_MAX;
	count->events = nb_samples_alloc(count->capacity, sizeof(struct nb_injection));
}

void nb_inject_log_free(struct nb_inject_count *count)
{
	if (count->events)
		nb_samples_free(count->events, count->capacity, sizeof(struct nb_injection));
	count->events = NULL;
}

int nb_inject_log_write(FILE *f, const struct nb_inject_count *count, uint64_t n)
{
	uint64_t logged = __atomic_load_n(&count->logged, __ATOMIC_ACQUIRE);
	int rc = 0;

	if (n > logged)
		n = logged;
	for (uint64_t i = 0; i < n && rc >= 0; i++) {
		const struct nb_injection *e = &count->events[i];

		rc = fprintf(f, "%llu %llu %llu %lld\n", (unsigned long long)e->due,
			     (unsigned long long)e->entry, (unsigned long long)e->exit,
			     (long long)e->cpu);
	}
	return rc;
}

static volatile uint64_t handler_due, handler_exit;

static void mark_edges(int sig)
{
	(void)sig;
	handler_due = due_tick(nb_ticks());
	handler_exit = nb_ticks();
}

/* How much longer than its logged due..exit an injection looks to a loop
 * that reads the timer: the interrupt can come a little before the due time
 * read back from the timer, and the return to the interrupted code follows
 * the exit tick. The injection timer's own signal, with a handler that only
 * notes both ticks, interrupts such a loop 64 times (every 100 us); each
 * time, the loop's gap less exit - due. The median is kept: on a machine
 * whose CPU other work takes in slices (a vCPU at 60% speed), a few of the
 * 64 gaps hold a slice, which is that work's time, not the injector's.
 * Returns why it could not, or NULL. */
static const char *measure_overhead(uint64_t *overhead)
{
	enum { TRIES = 64 };
	static char why[160];
	struct sigaction sa;
	struct sigevent ev;
	struct itimerspec its = { { 0, 100000 }, { 0, 100000 } };
	uint64_t d[TRIES], last, seen = 0;
	int n = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mark_edges;
	sigemptyset(&sa.sa_mask);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGRTMIN;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	period_ns = 100000;
	if (sigaction(SIGRTMIN, &sa, NULL) != 0 ||
	    timer_create(CLOCK_MONOTONIC, &ev, &own_timer) != 0) {
		snprintf(why, sizeof(why), "--inject: cannot set up the timer signal: %s",
			 strerror(errno));
		return why;
	}
	if (timer_settime(own_timer, 0, &its, NULL) != 0) {
		snprintf(why, sizeof(why), "--inject: timer_settime: %s", strerror(errno));
		timer_delete(own_timer);
		return why;
	}
	last = nb_ticks();
	uint64_t give_up = last + (uint64_t)(5e9 * ticks_per_ns); /* 64 periods take 6.4 ms */

	while (n < TRIES) {
		uint64_t now = nb_ticks(), e = handler_exit, due = handler_due;

		/* a CPU shared by many processes runs this loop too seldom to see
		 * the handler between two reads */
		if (now > give_up) {
			snprintf(why, sizeof(why), "--inject: the timer's signal did not arrive "
				 "(%d of %d in 5 s): is SIGRTMIN blocked, or the CPU shared by "
				 "too many processes?", n, TRIES);
			timer_delete(own_timer);
			return why;
		}

		/* counted when the handler ran between the two reads */
		if (e != seen && e > last && e < now) {
			int64_t extra = (int64_t)(now - last) - (int64_t)(e - due);

			d[n++] = extra > 0 ? (uint64_t)extra : 0;
		}
		seen = e;
		last = now;
	}
	timer_delete(own_timer);
	nb_sort_u64(d, TRIES);
	*overhead = d[TRIES / 2];
	return NULL;
}

const char *nb_inject_setup(struct nb_inject *in, double tpn)
{
	static char why[160];
	struct sigaction sa;
	const char *failed;

	if (!in->duration_us)
		return NULL;
	ticks_per_ns = tpn;
	failed = measure_overhead(&in->overhead_ticks);
	if (failed)
		return failed;
	period_ns = in->period_us * 1000;
	duration_ns = in->duration_us * 1000;
	poisson = in->poisson;
	duration_ticks = (uint64_t)((double)in->duration_us * 1000.0 * tpn + 0.5);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = busy_wait;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGRTMIN, &sa, NULL) != 0) {
		snprintf(why, sizeof(why), "--inject: sigaction: %s", strerror(errno));
		return why;
	}
	return NULL;
}

void nb_inject_arm(const struct nb_inject *in, timer_t *timer, struct nb_inject_count *count)
{
	struct sigevent ev;
	struct itimerspec its;

	if (!in->duration_us)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGRTMIN;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &ev, timer) != 0)
		nb_fail(NB_EXIT_FAILURE, "--inject: timer_create: %s", strerror(errno));
	its.it_interval.tv_sec = (time_t)(in->period_us / 1000000);
	its.it_interval.tv_nsec = (long)(in->period_us % 1000000) * 1000;
	its.it_value = its.it_interval;
	delivered = count;
	own_timer = *timer;
	if (in->poisson) {
		/* seeded apart per thread and per run */
		rng = ((uint64_t)syscall(SYS_gettid) << 32) ^ nb_ticks() ^ 0x9E3779B97F4A7C15ull;
		next_due_ns = monotonic_ns();
		next_due_ns += poisson_gap_ns();
		its = once_at(next_due_ns);
	}
	if (timer_settime(*timer, in->poisson ? TIMER_ABSTIME : 0, &its, NULL) != 0)
		nb_fail(NB_EXIT_FAILURE, "--inject: timer_settime: %s", strerror(errno));
}

void nb_inject_disarm(const struct nb_inject *in, timer_t timer)
{
	if (in->duration_us)
		timer_delete(timer);
}
