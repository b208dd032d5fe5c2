/* The ranks reported: on the root, each rank's line and JSON entry as its
 * record arrives (nb_ranks_each); with node files, each node's first rank
 * writes its node's and sends the root their figures alone. Then the ranks
 * line. */
#define _GNU_SOURCE
#include "driver.h"

#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "figures.h"
#include "node_data.h"
#include "ranks_table.h"

/* The root's report, written as the records arrive (nb_ranks_each). */
struct report {
	struct nb_run *r;
	struct nb_json j;
	uint64_t samples;
	struct nb_figures figures; /* of every rank's line, on the root */
};

/* What a node sends the root with node_files instead of its records. */
struct node_summary {
	uint64_t samples, lines, n;
	struct nb_figure figures[];
};

static void report_rank(const void *x, void *arg)
{
	struct report *rep = arg;
	struct nb_run *r = rep->r;
	const struct nb_participant *p = x;
	char *line;

	nb_driver_add_rank_line(r, p, &rep->figures, &line);
	fputs(line, stdout);
	free(line);
	rep->samples += p->samples;
	if (!r->d->node_files)
		nb_driver_json_rank_entry(r, &rep->j, p);
}

struct node_records {
	struct nb_run *r;
	const char *records;
};

static void table_entry(void *arg, int i, struct nb_json *j)
{
	const struct node_records *a = arg;

	nb_driver_json_rank_entry(a->r, j, (const void *)(a->records + (size_t)i * a->r->d->results->size));
}

/* With node_files, on each node's first rank, every node at once: the
 * node's entries in its own file, {"node": K, "host": H, "ranks": [...]},
 * the same as a table of a row a rank beside it, and what the root is sent
 * instead of them: the figures of their lines and their samples. */
static void *report_node(const void *records, int n, void *arg, size_t *bytes)
{
	struct report *rep = arg;
	struct nb_run *r = rep->r;
	struct nb_outfile *o = r->d->node_json;
	struct nb_figures fs = { 0 };
	struct node_summary *sum;
	uint64_t samples = 0;
	struct nb_json j;

	nb_json_open(&j, o->f);
	nb_json_object(&j, NULL);
	nb_json_int(&j, "node", r->ranks.node);
	nb_json_string(&j, "host", r->ranks.host);
	nb_json_array(&j, "ranks");
	nb_json_lines(&j);
	for (int i = 0; i < n; i++)
		nb_driver_json_rank_entry(r, &j, (const void *)((const char *)records +
						      (size_t)i * r->d->results->size));
	nb_json_end(&j, ']');
	nb_json_end(&j, '}');
	r->d->node_json = NULL;
	nb_outfile_commit_or_fail(o);
	o = r->d->node_table;
	nb_ranks_table_write(o->f, n, table_entry,
			     &(struct node_records){ .r = r, .records = records });
	r->d->node_table = NULL;
	nb_outfile_commit_or_fail(o);
	for (int i = 0; i < n; i++) {
		const struct nb_participant *p =
			(const void *)((const char *)records + (size_t)i * r->d->results->size);

		nb_driver_add_rank_line(r, p, &fs, NULL);
		samples += p->samples;
	}
	*bytes = sizeof(*sum) + fs.n * sizeof(*fs.f);
	sum = malloc(*bytes);
	if (!sum)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the node's figures");
	*sum = (struct node_summary){ .samples = samples, .lines = fs.lines, .n = fs.n };
	if (fs.n)
		memcpy(sum->figures, fs.f, fs.n * sizeof(*fs.f));
	nb_figures_free(&fs);
	return sum;
}

/* On the root, with node_files: a node's summary, in node order */
static void report_node_summary(const void *x, size_t bytes, void *arg)
{
	struct report *rep = arg;
	const struct node_summary *sum = x;

	if (bytes < sizeof(*sum) || bytes != sizeof(*sum) + sum->n * sizeof(*sum->figures))
		nb_fail(NB_EXIT_FAILURE, "a node's summary of %zu bytes is not whole", bytes);
	rep->samples += sum->samples;
	nb_figures_merge(&rep->figures, sum->figures, sum->n, sum->lines);
}

static void report_head(struct nb_run *r, struct report *rep, const struct nb_run_loss *l, int n,
			int signo)
{
	const struct nb_results *h = r->d->results;
	char name[4096];

	if (h->print_head)
		h->print_head(r, n);
	nb_driver_json_head(r, &rep->j, signo);
	if (r->k->json_options)
		r->k->json_options(r, &rep->j);
	if (h->json_run)
		h->json_run(r, &rep->j, n);
	nb_driver_json_loss_histogram(&rep->j, l);
	if (r->d->node_files) {
		/* by node, as "machines" */
		nb_json_array(&rep->j, "node_files");
		for (int k = 0; k < r->d->nhosts; k++) {
			nb_driver_node_file_name(r, k, name, sizeof(name), 1);
			nb_json_string(&rep->j, NULL, name);
		}
		nb_json_end(&rep->j, ']');
		nb_json_array(&rep->j, "ranks_files");
		for (int k = 0; k < r->d->nhosts; k++) {
			nb_node_file_name(r, k, NB_NODE_RANKS_SUFFIX, name, sizeof(name), 1);
			nb_json_string(&rep->j, NULL, name);
		}
		nb_json_end(&rep->j, ']');
		return;
	}
	nb_json_array(&rep->j, "ranks");
	nb_json_lines(&rep->j);
}

static void report_tail(struct nb_run *r, struct report *rep, int n)
{
	const struct nb_results *h = r->d->results;

	if (!r->d->node_files)
		nb_json_end(&rep->j, ']');
	/* every rank line's figures in one line, with or without the lines */
	printf("ranks kernel=%s ranks=%d", r->k->name, n);
	nb_figures_print(&rep->figures, stdout);
	putchar('\n');
	nb_figures_free(&rep->figures);
	if (h->print_run)
		h->print_run(r, n);
	if (r->d->info.signo && r->ranks.nlocal < r->ranks.size)
		printf("interrupted: this report covers the %d rank(s) of the root process only; every "
		       "rank wrote its own data files\n", r->ranks.nlocal);
	nb_driver_json_tail(r, &rep->j, n, rep->samples);
}

/* On every rank: the root's report of nall ranks, fed node by node. */
void nb_driver_report(struct nb_run *r, char *mine, const struct nb_run_loss *loss, int nall,
		      int signo)
{
	const struct nb_results *h = r->d->results;
	struct nb_ranks *rk = &r->ranks;
	struct report rep = { .r = r };

	if (rk->root)
		report_head(r, &rep, loss, nall, signo);
	if (!signo && r->d->node_files)
		nb_ranks_nodes(rk, mine, h->size, report_node, report_node_summary, &rep);
	else if (!signo)
		nb_ranks_each(rk, mine, h->size, report_rank, &rep);
	else if (rk->root)
		for (int i = 0; i < rk->nlocal; i++)
			report_rank(mine + i * h->size, &rep);
	if (rk->root)
		report_tail(r, &rep, nall);
}
