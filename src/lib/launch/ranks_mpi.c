/* Ranks as MPI processes: one per CPU of every node, each pinned by its rank
 * on the node (not its global rank, which would point past the CPUs of every
 * node but the first). */
#define _GNU_SOURCE
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuset.h"
#include "ranks.h"
#include "errors.h"
#include "timer.h"

const char *nb_ranks_frontend(void)
{
	return "mpi";
}

const char *nb_ranks_library(void)
{
	static char version[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;

	if (!version[0] && MPI_Get_library_version(version, &len) != MPI_SUCCESS)
		return NULL;
	return version;
}

/* As the OSU benchmarks do: an MPI call that fails ends the run, naming the
 * call and where it was made. */
#define MPI_CHECK(call)                                                                      \
	do {                                                                                 \
		int rc_ = (call);                                                            \
		if (rc_ != MPI_SUCCESS) {                                                    \
			char msg_[MPI_MAX_ERROR_STRING];                                     \
			int len_ = 0;                                                        \
			MPI_Error_string(rc_, msg_, &len_);                                  \
			fprintf(stderr, "%s: error: %s failed at %s:%d: %s\n", nb_program(), \
				#call, __FILE__, __LINE__, msg_);                            \
			MPI_Abort(MPI_COMM_WORLD, NB_EXIT_FAILURE);                          \
		}                                                                            \
	} while (0)

static MPI_Comm node_comm;
/* The nodes' first ranks, by rank, so that the root, world rank 0, is its
 * rank 0 and each node's number is its first rank's there; MPI_COMM_NULL
 * on the other ranks. */
static MPI_Comm leaders = MPI_COMM_NULL;

/* Usage errors are the same on every rank: each leaves MPI cleanly and only
 * rank 0 says why. Anything else aborts the job. */
static void leave(int code)
{
	if (code == NB_EXIT_USAGE)
		MPI_Finalize();
	else
		MPI_Abort(MPI_COMM_WORLD, code);
}

void nb_ranks_init(struct nb_ranks *r, int *argc, char ***argv)
{
	int local_rank;

	memset(r, 0, sizeof(*r));
	MPI_CHECK(MPI_Init(argc, argv));
	MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r->rank));
	MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &r->size));
	MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r->rank, MPI_INFO_NULL,
				      &node_comm));
	MPI_CHECK(MPI_Comm_rank(node_comm, &local_rank));
	r->node_first = local_rank == 0;
	MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, r->node_first ? 0 : MPI_UNDEFINED, r->rank,
				 &leaders));
	if (r->node_first)
		MPI_CHECK(MPI_Comm_rank(leaders, &r->node));
	MPI_CHECK(MPI_Bcast(&r->node, 1, MPI_INT, 0, node_comm));
	r->root = r->rank == 0;
	r->nlocal = 1;
	gethostname(r->host, sizeof(r->host) - 1);
	nb_set_exit_hook(leave, r->rank != 0);
}

int nb_ranks_first_failing(struct nb_ranks *r, int failed)
{
	int mine = failed ? r->rank : INT_MAX, first;

	MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	return first == INT_MAX ? -1 : first;
}

/* Every rank learns whether any failed; the first failing rank prints its
 * reason, and all leave with exit code 2. */
static void agree_or_fail(struct nb_ranks *r, const char *why)
{
	int first = nb_ranks_first_failing(r, why != NULL);

	if (first < 0)
		return;
	if (first == r->rank)
		fprintf(stderr, "%s: error: %s\n", nb_program(), why);
	MPI_Finalize();
	exit(NB_EXIT_USAGE);
}

void nb_ranks_place(struct nb_ranks *r, int threads_opt, const char *cpus_opt, int pin)
{
	static int allowed[NB_MAX_CPUS], list[NB_MAX_CPUS];
	static char why[1024];
	int local_rank, local_size, nallowed, cpu = -1, n;
	const char *bad, *reason = NULL;
	char allowed_list[256];

	if (threads_opt > 1)
		nb_fail(NB_EXIT_USAGE, "-t %d: an MPI build runs one rank per CPU; launch more "
			"ranks instead (mpirun -n, srun -n)", threads_opt);
	MPI_CHECK(MPI_Comm_rank(node_comm, &local_rank));
	MPI_CHECK(MPI_Comm_size(node_comm, &local_size));
	nallowed = nb_cpus_allowed(allowed, NB_MAX_CPUS);
	nb_cpu_list_format(allowed, nallowed, allowed_list, sizeof(allowed_list));
	r->pin = pin;
	if (pin && cpus_opt) {
		n = nb_cpu_list_parse(cpus_opt, list, NB_MAX_CPUS, &bad);
		if (n < 0)
			nb_fail(NB_EXIT_USAGE, "--cpus %s: cannot read a CPU list at '%s'", cpus_opt, bad);
		if (local_size > n) {
			snprintf(why, sizeof(why), "--cpus %s: %d ranks on %s, but the list names %d CPUs",
				 cpus_opt, local_size, r->host, n);
			reason = why;
		} else {
			cpu = list[local_rank];
		}
	} else if (pin && nallowed == 1) {
		cpu = allowed[0]; /* the launcher bound this rank to one CPU */
	} else if (pin && local_size > nallowed) {
		snprintf(why, sizeof(why),
			 "%d ranks on %s but only %d CPUs available (%s): with pinning on each rank "
			 "needs its own CPU (launch fewer ranks, or --no-pin)",
			 local_size, r->host, nallowed, allowed_list);
		reason = why;
	} else if (pin) {
		cpu = allowed[local_rank];
	}
	agree_or_fail(r, reason);

	/* Two ranks of one node on one CPU would measure each other. */
	int *node_cpus = calloc(local_size, sizeof(int));

	MPI_CHECK(MPI_Allgather(&cpu, 1, MPI_INT, node_cpus, 1, MPI_INT, node_comm));
	for (int i = 0; pin && i < local_size && !reason; i++)
		for (int j = 0; j < i; j++)
			if (node_cpus[i] == node_cpus[j] && i == local_rank) {
				snprintf(why, sizeof(why), "ranks on %s share CPU %d: bind each rank to its "
					 "own CPU, or pass --no-pin", r->host, node_cpus[i]);
				reason = why;
			}
	free(node_cpus);
	agree_or_fail(r, reason);

	r->cpus[0] = cpu;
	r->local = calloc(1, sizeof(*r->local));
	if (!r->local)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	r->local[0].index = r->rank;
	r->local[0].cpu = cpu;
}

static void barrier(void)
{
	MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

void nb_ranks_run(struct nb_ranks *r, struct nb_team *team)
{
	struct nb_thread *t = &r->local[0];

	if (r->pin)
		nb_team_pin(t->index, t->cpu);
	else
		t->cpu = sched_getcpu();
	team->nthreads = 1;
	team->sync = barrier;
	nb_team_thread(team, t);
}

void nb_ranks_barrier(struct nb_ranks *r)
{
	(void)r;
	barrier();
}

void nb_ranks_sum_u64(struct nb_ranks *r, uint64_t *v, size_t n)
{
	if (n > INT_MAX)
		nb_fail(NB_EXIT_FAILURE, "a sum of %zu counts is more than MPI_Reduce takes", n);
	MPI_CHECK(MPI_Reduce(r->root ? MPI_IN_PLACE : v, v, (int)n, MPI_UINT64_T, MPI_SUM, 0,
			     MPI_COMM_WORLD));
}

double nb_ranks_max(struct nb_ranks *r, double value)
{
	double max;

	(void)r;
	MPI_CHECK(MPI_Allreduce(&value, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	return max;
}

static void reduce_doubles(struct nb_ranks *r, double *v, size_t n, MPI_Op op)
{
	if (n > INT_MAX)
		nb_fail(NB_EXIT_FAILURE, "a reduction of %zu figures is more than MPI_Reduce takes", n);
	MPI_CHECK(MPI_Reduce(r->root ? MPI_IN_PLACE : v, v, (int)n, MPI_DOUBLE, op, 0,
			     MPI_COMM_WORLD));
}

void nb_ranks_sum_doubles(struct nb_ranks *r, double *v, size_t n)
{
	reduce_doubles(r, v, n, MPI_SUM);
}

void nb_ranks_max_doubles(struct nb_ranks *r, double *v, size_t n)
{
	reduce_doubles(r, v, n, MPI_MAX);
}

double nb_ranks_allreduce_sum(struct nb_ranks *r, double value)
{
	double sum;

	(void)r;
	MPI_CHECK(MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	return sum;
}

void nb_ranks_bcast(struct nb_ranks *r, void *buf, size_t bytes)
{
	(void)r;
	for (size_t off = 0; off < bytes; off += INT_MAX / 2) {
		size_t chunk = bytes - off < INT_MAX / 2 ? bytes - off : INT_MAX / 2;

		MPI_CHECK(MPI_Bcast((char *)buf + off, (int)chunk, MPI_BYTE, 0, MPI_COMM_WORLD));
	}
}

void nb_ranks_gather(struct nb_ranks *r, const void *mine, size_t each, void *all)
{
	(void)r;
	MPI_CHECK(MPI_Gather(mine, (int)each, MPI_BYTE, all, (int)each, MPI_BYTE, 0,
			     MPI_COMM_WORLD));
}

static void *alloc_records(int n, size_t each)
{
	void *p = malloc((size_t)n * each);

	if (!p)
		nb_fail(NB_EXIT_FAILURE, "out of memory for %d records of %zu bytes", n, each);
	return p;
}

/* The node's records on its first rank (NULL elsewhere), n of them. */
static char *gather_node(const void *mine, size_t each, int *n)
{
	int local_rank;
	char *node = NULL;

	MPI_CHECK(MPI_Comm_rank(node_comm, &local_rank));
	MPI_CHECK(MPI_Comm_size(node_comm, n));
	if ((size_t)*n * each > INT_MAX)
		nb_fail(NB_EXIT_FAILURE, "%d records of %zu bytes are more than MPI_Gather takes",
			*n, each);
	if (local_rank == 0)
		node = alloc_records(*n, each);
	MPI_CHECK(MPI_Gather(mine, (int)each, MPI_BYTE, node, (int)each, MPI_BYTE, 0, node_comm));
	return node;
}

/* Each node's first rank gathers its node's records, then sends them to
 * the root in turn: the root's memory is two nodes' records, not one per
 * rank. */
void nb_ranks_each(struct nb_ranks *r, const void *mine, size_t each,
		   void (*fn)(const void *record, void *arg), void *arg)
{
	int local_size, nodes, n;
	char *node = gather_node(mine, each, &local_size), *other = NULL;

	if (leaders == MPI_COMM_NULL)
		return;
	if (!r->root) {
		MPI_CHECK(MPI_Send(&local_size, 1, MPI_INT, 0, 0, leaders));
		MPI_CHECK(MPI_Send(node, (int)((size_t)local_size * each), MPI_BYTE, 0, 1, leaders));
	} else {
		for (int i = 0; i < local_size; i++)
			fn(node + (size_t)i * each, arg);
		MPI_CHECK(MPI_Comm_size(leaders, &nodes));
		for (int k = 1; k < nodes; k++) {
			MPI_CHECK(MPI_Recv(&n, 1, MPI_INT, k, 0, leaders, MPI_STATUS_IGNORE));
			free(other);
			other = alloc_records(n, each);
			MPI_CHECK(MPI_Recv(other, (int)((size_t)n * each), MPI_BYTE, k, 1, leaders,
					   MPI_STATUS_IGNORE));
			for (int i = 0; i < n; i++)
				fn(other + (size_t)i * each, arg);
		}
	}
	free(other);
	free(node);
}

void nb_ranks_nodes(struct nb_ranks *r, const void *mine, size_t each,
		    void *(*node_fn)(const void *records, int n, void *arg, size_t *bytes),
		    void (*fn)(const void *summary, size_t bytes, void *arg), void *arg)
{
	int local_size, nodes;
	char *node = gather_node(mine, each, &local_size);
	uint64_t bytes;
	size_t made;
	void *summary;

	if (leaders == MPI_COMM_NULL)
		return;
	summary = node_fn(node, local_size, arg, &made);
	free(node);
	if (made > INT_MAX)
		nb_fail(NB_EXIT_FAILURE, "a node's summary of %zu bytes is more than MPI takes", made);
	bytes = made;
	if (!r->root) {
		MPI_CHECK(MPI_Send(&bytes, 1, MPI_UINT64_T, 0, 2, leaders));
		MPI_CHECK(MPI_Send(summary, (int)bytes, MPI_BYTE, 0, 3, leaders));
		free(summary);
		return;
	}
	fn(summary, made, arg);
	free(summary);
	MPI_CHECK(MPI_Comm_size(leaders, &nodes));
	for (int k = 1; k < nodes; k++) {
		MPI_CHECK(MPI_Recv(&bytes, 1, MPI_UINT64_T, k, 2, leaders, MPI_STATUS_IGNORE));
		summary = alloc_records((int)bytes, 1);
		MPI_CHECK(MPI_Recv(summary, (int)bytes, MPI_BYTE, k, 3, leaders,
				   MPI_STATUS_IGNORE));
		fn(summary, (size_t)bytes, arg);
		free(summary);
	}
}

void nb_ranks_node_offsets(struct nb_ranks *r, uint64_t *v, int n)
{
	uint64_t *before = calloc(n, sizeof(*before));
	int local_rank;

	(void)r;
	if (!before)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	MPI_CHECK(MPI_Comm_rank(node_comm, &local_rank));
	MPI_CHECK(MPI_Exscan(v, before, n, MPI_UINT64_T, MPI_SUM, node_comm));
	/* MPI_Exscan leaves the first rank's undefined */
	for (int i = 0; i < n; i++)
		v[i] = local_rank ? before[i] : 0;
	free(before);
}

void nb_ranks_node_bcast(struct nb_ranks *r, void *buf, size_t bytes)
{
	(void)r;
	if (bytes > INT_MAX)
		nb_fail(NB_EXIT_FAILURE, "%zu bytes are more than MPI_Bcast takes", bytes);
	MPI_CHECK(MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, node_comm));
}

void nb_ranks_node_sum(struct nb_ranks *r, uint64_t *v, int n)
{
	(void)r;
	MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, node_comm));
}

/* The first rank of each node sends; the others take no part. */
void *nb_ranks_hosts(struct nb_ranks *r, const void *mine, size_t each, int *nhosts)
{
	int n = 0;
	void *all = NULL;

	*nhosts = 0;
	if (leaders == MPI_COMM_NULL)
		return NULL;
	MPI_CHECK(MPI_Comm_size(leaders, &n));
	if (r->root && !(all = calloc(n, each)))
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	MPI_CHECK(MPI_Gather(mine, (int)each, MPI_BYTE, all, (int)each, MPI_BYTE, 0, leaders));
	*nhosts = r->root ? n : 0;
	return all;
}

void nb_ranks_finalize(struct nb_ranks *r)
{
	free(r->local);
	if (leaders != MPI_COMM_NULL)
		MPI_Comm_free(&leaders);
	MPI_Finalize();
}
