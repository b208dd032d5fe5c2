#define _GNU_SOURCE
#include "team.h"

#include <string.h>

#include "cpuset.h"
#include "report.h"
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
	team->prepare(t);

	/* The warm-up is time, not work: start-up interference lasts a time
	 * (seed 003: ~180 ms of 100 Hz on some machines), whatever we do. */
	uint64_t until = nb_raw_ns() + (uint64_t)team->warmup_ms * 1000000u;

	while (nb_raw_ns() < until)
		;

	if (__atomic_add_fetch(&team->ready, 1, __ATOMIC_ACQ_REL) == team->nthreads) {
		team->start_tick = nb_ticks() + team->lead_ticks;
		__atomic_store_n(&team->gate, 1, __ATOMIC_RELEASE);
	}
	while (!__atomic_load_n(&team->gate, __ATOMIC_ACQUIRE))
		;
	nb_inject_arm(team->inject, &t->inject_timer, &t->injections);
	while (nb_ticks() < team->start_tick)
		;
	team->measure(t);
	nb_inject_disarm(team->inject, t->inject_timer);
}
