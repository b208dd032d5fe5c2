/* The participants of a run, the launch layer every kernel runs under: MPI
 * ranks, one per CPU of every node, in an MPI build; threads of one process
 * (pthreads or OpenMP: team.h) otherwise. */
#ifndef NB_RANKS_H
#define NB_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"
#include "team.h"

struct nb_ranks {
	int size;         /* participants in all */
	int nlocal;       /* participants in this process */
	int root;         /* this process writes the report and the JSON */
	int rank;         /* global rank of this process's first participant */
	int node;         /* this process's node, numbered by the nodes' first ranks */
	int node_first;   /* this process has its node's first rank */
	char host[256];
	struct nb_thread *local; /* nlocal entries; .index is the global rank */
	int cpus[NB_MAX_CPUS];   /* CPU of each local participant, -1 unpinned */
	int pin;
};

/* "mpi", or the threads' front end ("pthreads", "openmp") */
const char *nb_ranks_frontend(void);

/* The MPI library's version string (NULL without MPI). */
const char *nb_ranks_library(void);

/* Starts MPI where there is one; call after nb_interrupt_start, so that the
 * threads MPI starts block SIGINT and SIGTERM too. */
void nb_ranks_init(struct nb_ranks *r, int *argc, char ***argv);

/* Chooses how many participants run here and on which CPUs: threads_opt and
 * cpus_opt as for the threads front ends; with MPI, the rank's place on its node
 * picks the CPU. Impossible placements fail on every rank, the first failing
 * rank saying why in one line. */
void nb_ranks_place(struct nb_ranks *r, int threads_opt, const char *cpus_opt, int pin);

/* The lowest rank on which failed is true, on every rank; -1 if none. */
int nb_ranks_first_failing(struct nb_ranks *r, int failed);

/* Runs the local participants through the team: warm-up, start together
 * (an MPI barrier across ranks), measure. */
void nb_ranks_run(struct nb_ranks *r, struct nb_team *team);

/* Copies bytes from global rank 0's buffer into every rank's buf. */
void nb_ranks_bcast(struct nb_ranks *r, void *buf, size_t bytes);

/* Collects each local participant's `each` bytes (mine holds nlocal of them)
 * into all (size of them, by rank) on the root. */
void nb_ranks_gather(struct nb_ranks *r, const void *mine, size_t each, void *all);

/* After the run: v (n counts) summed over every process into the root's v
 * (each process has summed its own participants'); the others' v is spent. */
void nb_ranks_sum_u64(struct nb_ranks *r, uint64_t *v, size_t n);

/* After the run: the largest of one double of every process, on every
 * process (each process has taken its own participants' largest). */
double nb_ranks_max(struct nb_ranks *r, double value);

/* After the run, as nb_ranks_sum_u64: n doubles summed over every process,
 * or the largest of each, into the root's v. */
void nb_ranks_sum_doubles(struct nb_ranks *r, double *v, size_t n);
void nb_ranks_max_doubles(struct nb_ranks *r, double *v, size_t n);

/* After the run: every participant's `each` bytes (mine holds the local
 * ones) handed to fn on the root, one node's at a time, nodes in the order
 * of their first rank and each node's by rank. No process ever holds more
 * than two nodes' records, whatever the number of nodes. */
void nb_ranks_each(struct nb_ranks *r, const void *mine, size_t each,
		   void (*fn)(const void *record, void *arg), void *arg);

/* After the run, as nb_ranks_each, but what travels to the root is each
 * node's summary of its records, not the records: node_fn makes it
 * (malloc'd, *bytes long) on each node's first rank, every node at once,
 * and fn has them on the root in node order. The root's work and memory
 * grow with the nodes, not the ranks. */
void nb_ranks_nodes(struct nb_ranks *r, const void *mine, size_t each,
		    void *(*node_fn)(const void *records, int n, void *arg, size_t *bytes),
		    void (*fn)(const void *summary, size_t bytes, void *arg), void *arg);

/* After the run, on every process of a node at once (the node's data files,
 * one range a participant): v holds n counts for each local participant,
 * each replaced by the sum of the same count over the participants before
 * it on its node, by rank. */
void nb_ranks_node_offsets(struct nb_ranks *r, uint64_t *v, int n);

/* On every process of a node: bytes from the node's first rank's buf into
 * every other's. */
void nb_ranks_node_bcast(struct nb_ranks *r, void *buf, size_t bytes);

/* A barrier of the node's processes that sums v[0..n) over them: each
 * brings its participants' sums, and takes away the node's. */
void nb_ranks_node_sum(struct nb_ranks *r, uint64_t *v, int n);

/* One `each`-byte item from every host (its first rank's `mine`) on the
 * root, by host; NULL elsewhere. The count is in *nhosts. Free the result. */
void *nb_ranks_hosts(struct nb_ranks *r, const void *mine, size_t each, int *nhosts);

/* While measuring, on every participant (the bsp kernel's collectives): a
 * barrier of all participants, and an allreduce returning the sum of one
 * double over all of them. */
void nb_ranks_barrier(struct nb_ranks *r);
double nb_ranks_allreduce_sum(struct nb_ranks *r, double value);

void nb_ranks_finalize(struct nb_ranks *r);

#endif
