/* Ranks as threads of one process (pthreads or OpenMP), for runs without MPI. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ranks.h"
#include "errors.h"

/* the participants' barrier, and the sums of their allreduces: three slots
 * in turn, so that the slot a call resets is two calls ahead, which no
 * participant can reach before every one has read this call's sum */
static pthread_barrier_t team_barrier;
static pthread_mutex_t sum_lock = PTHREAD_MUTEX_INITIALIZER;
static double sums[3];
static __thread unsigned long allreduces;

const char *nb_ranks_frontend(void)
{
	return nb_team_frontend;
}

const char *nb_ranks_library(void)
{
	return NULL;
}

void nb_ranks_init(struct nb_ranks *r, int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memset(r, 0, sizeof(*r));
	r->root = 1;
	r->node_first = 1;
	gethostname(r->host, sizeof(r->host) - 1);
}

void nb_ranks_place(struct nb_ranks *r, int threads_opt, const char *cpus_opt, int pin)
{
	r->pin = pin;
	r->nlocal = r->size = nb_team_place(threads_opt, cpus_opt, r->cpus, pin);
	r->local = calloc(r->nlocal, sizeof(*r->local));
	if (!r->local)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	if (pthread_barrier_init(&team_barrier, NULL, (unsigned)r->nlocal) != 0)
		nb_fail(NB_EXIT_FAILURE, "cannot create a barrier of %d threads", r->nlocal);
	for (int i = 0; i < r->nlocal; i++) {
		/* --no-pin: the OS places each thread (team_pthread.c) */
		if (!pin)
			r->cpus[i] = -1;
		r->local[i].index = i;
		r->local[i].cpu = r->cpus[i];
	}
}

int nb_ranks_first_failing(struct nb_ranks *r, int failed)
{
	(void)r;
	return failed ? 0 : -1;
}

void nb_ranks_run(struct nb_ranks *r, struct nb_team *team)
{
	nb_team_run(team, r->local);
}

void nb_ranks_barrier(struct nb_ranks *r)
{
	(void)r;
	pthread_barrier_wait(&team_barrier);
}

/* one process: its participants' sum is every participant's */
void nb_ranks_sum_u64(struct nb_ranks *r, uint64_t *v, size_t n)
{
	(void)r;
	(void)v;
	(void)n;
}

double nb_ranks_max(struct nb_ranks *r, double value)
{
	(void)r;
	return value;
}

void nb_ranks_sum_doubles(struct nb_ranks *r, double *v, size_t n)
{
	(void)r;
	(void)v;
	(void)n;
}

void nb_ranks_max_doubles(struct nb_ranks *r, double *v, size_t n)
{
	(void)r;
	(void)v;
	(void)n;
}

double nb_ranks_allreduce_sum(struct nb_ranks *r, double value)
{
	unsigned long k = allreduces++;
	double sum;

	(void)r;
	pthread_mutex_lock(&sum_lock);
	sums[k % 3] += value;
	pthread_mutex_unlock(&sum_lock);
	if (pthread_barrier_wait(&team_barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
		sums[(k + 2) % 3] = 0;
	pthread_mutex_lock(&sum_lock);
	sum = sums[k % 3];
	pthread_mutex_unlock(&sum_lock);
	return sum;
}

void nb_ranks_bcast(struct nb_ranks *r, void *buf, size_t bytes)
{
	(void)r;
	(void)buf;
	(void)bytes;
}

void nb_ranks_gather(struct nb_ranks *r, const void *mine, size_t each, void *all)
{
	memcpy(all, mine, each * r->nlocal);
}

void nb_ranks_each(struct nb_ranks *r, const void *mine, size_t each,
		   void (*fn)(const void *record, void *arg), void *arg)
{
	for (int i = 0; i < r->nlocal; i++)
		fn((const char *)mine + (size_t)i * each, arg);
}

void nb_ranks_nodes(struct nb_ranks *r, const void *mine, size_t each,
		    void *(*node_fn)(const void *records, int n, void *arg, size_t *bytes),
		    void (*fn)(const void *summary, size_t bytes, void *arg), void *arg)
{
	size_t bytes;
	void *summary = node_fn(mine, r->nlocal, arg, &bytes);

	(void)each;
	fn(summary, bytes, arg);
	free(summary);
}

/* One process is the node: its participants' counts add up in turn. */
void nb_ranks_node_offsets(struct nb_ranks *r, uint64_t *v, int n)
{
	for (int k = 0; k < n; k++) {
		uint64_t sum = 0;

		for (int i = 0; i < r->nlocal; i++) {
			uint64_t x = v[(size_t)i * n + k];

			v[(size_t)i * n + k] = sum;
			sum += x;
		}
	}
}

void nb_ranks_node_bcast(struct nb_ranks *r, void *buf, size_t bytes)
{
	(void)r;
	(void)buf;
	(void)bytes;
}

/* One process is the node: its sums are the node's. */
void nb_ranks_node_sum(struct nb_ranks *r, uint64_t *v, int n)
{
	(void)r;
	(void)v;
	(void)n;
}

void *nb_ranks_hosts(struct nb_ranks *r, const void *mine, size_t each, int *nhosts)
{
	void *all = malloc(each);

	(void)r;
	if (!all)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	memcpy(all, mine, each);
	*nhosts = 1;
	return all;
}

void nb_ranks_finalize(struct nb_ranks *r)
{
	free(r->local);
}
