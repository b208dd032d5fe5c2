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

int nb_team_place(int threads_opt, const char *cpus_opt, int *cpus, int pin)
{
	static int allowed[NB_MAX_CPUS];
	int nallowed = nb_team_cpus_available(allowed, NB_MAX_CPUS), n;
	char allowed_list[256];

	nb_cpu_list_format(allowed, nallowed, allowed_list, sizeof(allowed_list));
	if (cpus_opt) {
		const char *bad;

		n = nb_cpu_list_parse(cpus_opt, cpus, NB_MAX_CPUS, &bad);
		if (n < 0)
			nb_fail(NB_EXIT_USAGE, "--cpus %s: cannot read a CPU list at '%s' (e.g. 0-3,8)",
				cpus_opt, bad);
		for (int i = 0; i < n; i++) {
			int ok = 0;

			for (int a = 0; a < nallowed; a++)
				ok |= allowed[a] == cpus[i];
			if (!ok)
				nb_fail(NB_EXIT_USAGE,
					"--cpus %s: CPU %d is not available to this process (allowed: %s)",
					cpus_opt, cpus[i], allowed_list);
			for (int j = 0; j < i; j++)
				if (cpus[j] == cpus[i])
					nb_fail(NB_EXIT_USAGE, "--cpus %s: CPU %d is listed twice", cpus_opt,
						cpus[i]);
		}
		if (threads_opt > 0 && threads_opt != n)
			nb_fail(NB_EXIT_USAGE, "-t %d with --cpus %s: the list names %d CPUs", threads_opt,
				cpus_opt, n);
		return n;
	}
	n = threads_opt < 0 ? nb_team_default_threads() : threads_opt == 0 ? nallowed : threads_opt;
	if (n > nallowed && !pin && n <= NB_MAX_CPUS) {
		nb_warn("-t %d --no-pin: %d threads share the %d CPUs available (%s): what they "
			"measure is mostly their time sharing", n, n, nallowed, allowed_list);
		for (int i = 0; i < n; i++)
			cpus[i] = allowed[i % nallowed];
		return n;
	}
	if (n > nallowed)
		nb_fail(NB_EXIT_USAGE,
			"-t %d: only %d CPUs are available to this process (%s), and each pinned "
			"measuring thread needs its own (fewer threads, or --no-pin to share them)",
			n, nallowed, allowed_list);
	memcpy(cpus, allowed, sizeof(int) * n);
	return n;
}
