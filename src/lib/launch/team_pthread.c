#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "errors.h"
#include "team.h"

const char nb_team_frontend[] = "pthreads";

int nb_team_default_threads(void)
{
	return 1;
}

int nb_team_cpus_available(int *cpus, int max)
{
	return nb_cpus_allowed(cpus, max);
}

struct start {
	struct nb_team *team;
	struct nb_thread *thread;
};

static void *thread_main(void *arg)
{
	struct start *s = arg;

	/* no CPU: left to the OS (--no-pin); the one it started on is recorded */
	if (s->thread->cpu >= 0)
		nb_team_pin(s->thread->index, s->thread->cpu);
	else
		s->thread->cpu = sched_getcpu();
	nb_team_thread(s->team, s->thread);
	return NULL;
}

void nb_team_run(struct nb_team *team, struct nb_thread *threads)
{
	pthread_t *ids = calloc(team->nthreads, sizeof(*ids));
	struct start *starts = calloc(team->nthreads, sizeof(*starts));

	if (!ids || !starts)
		nb_fail(NB_EXIT_FAILURE, "out of memory for %d threads", team->nthreads);
	for (int i = 0; i < team->nthreads; i++) {
		threads[i].cpu = team->cpus[i];
		starts[i] = (struct start){ team, &threads[i] };
		int err = pthread_create(&ids[i], NULL, thread_main, &starts[i]);

		if (err)
			nb_fail(NB_EXIT_FAILURE, "cannot start thread %d: %s", i, strerror(err));
	}
	for (int i = 0; i < team->nthreads; i++)
		pthread_join(ids[i], NULL);
	free(ids);
	free(starts);
}
