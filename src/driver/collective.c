/* What every rank does together: agreeing on a failure, and the sums,
 * maxima and gathers of the kernels' reductions. A file of its own, so that
 * the driver's files that need them call down to it and never to each
 * other. After a signal no collective is safe: each process then keeps its
 * own. */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "outfile.h"

void nb_driver_agree_or_exit(struct nb_run *r, const char *why, int code)
{
	int first = nb_ranks_first_failing(&r->ranks, why != NULL);

	if (first < 0)
		return;
	nb_outfile_discard_all();
	nb_set_exit_hook(NULL, 0);
	if (first == r->ranks.rank)
		fprintf(stderr, "%s: error: %s\n", nb_program(), why);
	nb_ranks_finalize(&r->ranks);
	exit(code);
}

void nb_driver_agree(struct nb_run *r, const char *why)
{
	nb_driver_agree_or_exit(r, why, NB_EXIT_USAGE);
}

void *nb_run_gather(struct nb_run *r, const void *mine, size_t each, int signo, int *n)
{
	struct nb_ranks *rk = &r->ranks;
	void *all;

	*n = signo ? rk->nlocal : rk->size;
	all = rk->root ? calloc(*n, each) : NULL;
	if (rk->root && !all)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the results");
	if (signo && rk->root)
		memcpy(all, mine, each * rk->nlocal);
	else if (!signo)
		nb_ranks_gather(rk, mine, each, all);
	return all;
}

void nb_run_sum(struct nb_run *r, double *v, size_t n, int signo)
{
	if (!signo)
		nb_ranks_sum_doubles(&r->ranks, v, n);
}

void nb_run_sum_u64(struct nb_run *r, uint64_t *v, size_t n, int signo)
{
	if (!signo)
		nb_ranks_sum_u64(&r->ranks, v, n);
}

void nb_run_max(struct nb_run *r, double *v, size_t n, int signo)
{
	if (!signo)
		nb_ranks_max_doubles(&r->ranks, v, n);
}
