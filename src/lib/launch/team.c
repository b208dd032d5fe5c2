#define _GNU_SOURCE
#include "team.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpuset.h"
#include "kcounts.h"
#include "errors.h"
#include "steal.h"
#include "timer.h"

void nb_team_pin(int index, int cpu)
{
	int err = nb_pin_self(cpu);

	if (err)
		nb_fail(NB_EXIT_FAILURE, "thread %d: cannot pin to CPU %d: %s", index, cpu,
			strerror(err));
}

void nb_team_thread(struct nb_team *team, struct nb_thread *t)
{
	t->tid = nb_thread_id();
	team->prepare(t);
	nb_inject_log_alloc(team->inject, team->seconds, &t->injections);
	t->steal_before_ns = nb_steal_ns(t->cpu);
	nb_thread_switches(t->tid, t->switches_before);

	/* The warm-up is time, not work: start-up interference lasts a time
	 * (brho's FTQ notes: ~180 ms of 100 Hz on some machines), whatever we do. */
	uint64_t until = nb_raw_ns() + (uint64_t)team->warmup_ms * 1000000u;

	while (nb_raw_ns() < until)
		;

	if (__atomic_add_fetch(&team->ready, 1, __ATOMIC_ACQ_REL) == team->nthreads) {
		team->start_tick = nb_ticks() + team->lead_ticks;
		__atomic_store_n(&team->gate, 1, __ATOMIC_RELEASE);
	}
	while (!__atomic_load_n(&team->gate, __ATOMIC_ACQUIRE))
		;
	if (team->sync) {
		team->sync();
		team->start_tick = nb_ticks() + team->lead_ticks;
	}
	nb_inject_arm(team->inject, &t->inject_timer, &t->injections);
	t->start_tick = team->start_tick;
	while (nb_ticks() < team->start_tick)
		;
	team->measure(t);
	t->end_tick = nb_ticks();
	nb_inject_disarm(team->inject, t->inject_timer);
	nb_thread_switches(t->tid, t->switches_after);
	t->steal_after_ns = nb_steal_ns(t->cpu);
}

void nb_team_switches(struct nb_thread *t, int64_t before[2], int64_t after[2])
{
	before[0] = t->switches_before[0];
	before[1] = t->switches_before[1];
	if (t->end_tick && t->steal_after_ns) {
		after[0] = t->switches_after[0];
		after[1] = t->switches_after[1];
	} else {
		nb_thread_switches(t->tid, after);
	}
}

double nb_team_steal_ms(struct nb_thread *t)
{
	uint64_t after = t->end_tick ? t->steal_after_ns : nb_steal_ns(t->cpu);

	if (t->steal_before_ns == NB_STEAL_UNKNOWN || after == NB_STEAL_UNKNOWN || t->cpu < 0)
		return NAN;
	return (double)(after - t->steal_before_ns) / 1e6;
}
