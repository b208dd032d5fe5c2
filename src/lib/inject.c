#define _GNU_SOURCE
#include "inject.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "report.h"
#include "timer.h"

static uint64_t duration_ticks, period_ns;
static double ticks_per_ns;
/* The handler runs on the measuring thread the timer belongs to. */
static __thread struct nb_inject_count *delivered;
static __thread timer_t own_timer;

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
	if (end == d || *end != '\0' || *d == '-' || errno)
		nb_fail(NB_EXIT_USAGE, "%s %s: expected PERIOD_US:DURATION_US, e.g. 1000:20", opt,
			arg);
	if (period < 10 || period > 60000000)
		nb_fail(NB_EXIT_USAGE, "%s %s: the period must be from 10 to 60000000 us", opt, arg);
	if (duration < 1 || duration >= period)
		nb_fail(NB_EXIT_USAGE, "%s %s: the duration must be at least 1 us and shorter than "
			"the period", opt, arg);
	in->period_us = period;
	in->duration_us = duration;
}

/* The detour lasts DURATION from the moment the timer was due, not from the
 * handler's entry: interrupt and signal delivery (tens of us in a nested VM)
 * fall inside it, so each injection steals DURATION plus only the return. */
static void busy_wait(int sig)
{
	(void)sig;
	uint64_t now = nb_ticks();
	struct itimerspec left;
	uint64_t late = 0, end;

	int missed = timer_getoverrun(own_timer);

	delivered->served++;
	if (missed > 0)
		delivered->missed += (uint64_t)missed;
	if (timer_gettime(own_timer, &left) == 0) {
		uint64_t left_ns = (uint64_t)left.it_value.tv_sec * 1000000000u +
				   (uint64_t)left.it_value.tv_nsec;

		if (left_ns < period_ns)
			late = (uint64_t)((double)(period_ns - left_ns) * ticks_per_ns);
	}
	end = now - late + duration_ticks;
	while (nb_ticks() < end)
		;
}

void nb_inject_setup(const struct nb_inject *in, double tpn)
{
	struct sigaction sa;

	if (!in->duration_us)
		return;
	ticks_per_ns = tpn;
	period_ns = in->period_us * 1000;
	duration_ticks = (uint64_t)((double)in->duration_us * 1000.0 * tpn + 0.5);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = busy_wait;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGRTMIN, &sa, NULL) != 0)
		nb_fail(NB_EXIT_FAILURE, "--inject: sigaction: %s", strerror(errno));
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
	if (timer_settime(*timer, 0, &its, NULL) != 0)
		nb_fail(NB_EXIT_FAILURE, "--inject: timer_settime: %s", strerror(errno));
}

void nb_inject_disarm(const struct nb_inject *in, timer_t timer)
{
	if (in->duration_us)
		timer_delete(timer);
}
