/* The OpenMP front end: the same per-thread work under the runtime's threads,
 * placed by OMP_PLACES/OMP_PROC_BIND as a hybrid job places them.  Without a
 * binding the threads are pinned like the pthreads front end's. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>

#include "cpuset.h"
#include "machine.h"
#include "errors.h"
#include "team.h"

const char nb_team_frontend[] = "openmp";

int nb_team_default_threads(void)
{
	return omp_get_max_threads();
}

/* A bound runtime has already pinned this (initial) thread to its first
 * place, so the process's mask no longer shows them all: ask the places. */
int nb_team_cpus_available(int *cpus, int max)
{
	int n = 0, ids[NB_MAX_CPUS];

	if (omp_get_proc_bind() == omp_proc_bind_false || omp_get_num_places() == 0)
		return nb_cpus_allowed(cpus, max);
	for (int p = 0; p < omp_get_num_places(); p++) {
		int k = omp_get_place_num_procs(p);

		if (k > NB_MAX_CPUS)
			k = NB_MAX_CPUS;
		omp_get_place_proc_ids(p, ids);
		for (int i = 0; i < k && n < max; i++) {
			int seen = 0;

			for (int j = 0; j < n; j++)
				seen |= cpus[j] == ids[i];
			if (!seen)
				cpus[n++] = ids[i];
		}
	}
	/* ascending, as the pthreads front end lists them */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && cpus[j - 1] > cpus[j]; j--) {
			int t = cpus[j];

			cpus[j] = cpus[j - 1];
			cpus[j - 1] = t;
		}
	return n;
}

static void place(struct nb_thread *t, const int *cpus)
{
	cpu_set_t set;

	if (cpus[t->index] < 0) { /* --no-pin: the runtime and the OS place it */
		t->cpu = sched_getcpu();
		return;
	}
	if (omp_get_proc_bind() == omp_proc_bind_false) {
		t->cpu = cpus[t->index];
		nb_team_pin(t->index, t->cpu);
		return;
	}
	t->cpu = sched_getcpu();
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1)
		nb_warn("thread %d is bound to a place of %d CPUs and may move between them; "
			"set OMP_PLACES=cores (or threads) for one CPU per thread",
			t->index, CPU_COUNT(&set));
}

void nb_team_run(struct nb_team *team, struct nb_thread *threads)
{
#pragma omp parallel num_threads(team->nthreads)
	{
		struct nb_thread *t = &threads[omp_get_thread_num()];

		place(t, team->cpus);
		nb_team_thread(team, t);
	}
}
