/* --metrics: each node's rank lines as a node_exporter textfile. */
#define _GNU_SOURCE
#include "driver.h"

#include <stdlib.h>

#include "errors.h"
#include "figures.h"
#include "metrics.h"

/* With --metrics, on each node's first rank, every node at once: the
 * node's rank lines as a node_exporter textfile. What travels to the root
 * is a byte a node (nb_ranks_nodes wants a summary), no figure. */
static void *write_node_metrics(const void *records, int n, void *arg, size_t *bytes)
{
	struct nb_run *r = arg;
	char **lines = calloc((size_t)n + 1, sizeof(*lines));
	int *broken = calloc((size_t)n + 1, sizeof(*broken));
	FILE *f = r->d->metrics->f;

	if (!lines || !broken)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the node's metrics");
	for (int i = 0; i < n; i++) {
		size_t len;
		const char *unmet;

		lines[i] = nb_driver_rank_line_text(r, (const char *)records + (size_t)i * r->d->results->size,
					  1);
		/* a rank that broke a rule of the requirements gets its own series */
		unmet = nb_line_value(lines[i], "rules_unmet", &len);
		broken[i] = unmet && atoi(unmet) > 0;
	}
	nb_metrics_info(f, &r->d->machine);
	nb_metrics_rank_lines(f, lines, broken, n, NULL, r->d->metrics_every_cpu);
	for (int i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	free(broken);
	nb_outfile_commit_or_fail(r->d->metrics);
	r->d->metrics = NULL;
	*bytes = 1;
	return calloc(1, 1);
}

/* the root's side of it: nothing to do */
static void metrics_written(const void *summary, size_t bytes, void *arg)
{
	(void)summary, (void)bytes, (void)arg;
}

/* On every rank of a complete run at once; an interrupted run's figures
 * are not the node's, so it has no file. */
void nb_driver_write_metrics(struct nb_run *r, char *mine, int signo)
{
	if (!signo && r->d->metrics_opt)
		nb_ranks_nodes(&r->ranks, mine, r->d->results->size, write_node_metrics,
			       metrics_written, r);
	else if (r->d->metrics) {
		nb_outfile_discard(r->d->metrics);
		r->d->metrics = NULL;
	}
}
