/* The run's files: their names, their creation under temporary names before
 * anything is measured, the samples and injection logs written into them,
 * and their rename into place. */
#define _GNU_SOURCE
#include "driver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "kernel_files.h"
#include "metrics.h"
#include "node_data.h"

static const char *const injections_suffix[] = { NB_INJECTIONS_SUFFIX };
static const char *const causes_suffix[] = { NB_CAUSES_SUFFIX };

/* Whether suffix is one of the kernel's data files' (not a log or causes). */
static int data_suffix(const struct nb_run *r, const char *suffix)
{
	for (int f = 0; f < r->k->nfiles; f++)
		if (strcmp(r->k->suffixes[f], suffix) == 0)
			return 1;
	return 0;
}

void nb_driver_file_name(struct nb_run *r, int rank, const char *suffix, char *buf, size_t size,
			 int base)
{
	const char *slash = strrchr(r->prefix, '/');
	const char *prefix = base && slash ? slash + 1 : r->prefix;

	/* ftq -o testrun writes testrun_counts.dat, as the Sequoia document
	 * shows; a threaded run testrun_0_counts.dat, testrun_1_counts.dat ... */
	if (r->d->single_files && data_suffix(r, suffix))
		snprintf(buf, size, "%s_%s", prefix, suffix);
	else
		snprintf(buf, size, "%s_%d_%s", prefix, rank, suffix);
}

void nb_driver_node_file_name(struct nb_run *r, int node, char *buf, size_t size, int base)
{
	const char *slash = strrchr(r->prefix, '/');

	snprintf(buf, size, NB_NODE_FILE_FORMAT, base && slash ? slash + 1 : r->prefix, node);
}

/* Opens `path` as out, or says why not in why. */
static void open_one(struct nb_run *r, const char *path, struct nb_outfile **out, char *why,
		     size_t size)
{
	if (why[0])
		return;
	*out = nb_outfile_open(path);
	if (!*out)
		snprintf(why, size, "-o %s: cannot create %s: %s", r->prefix, path, strerror(errno));
}

/* Each local participant's data files of its own. */
static void open_rank_files(struct nb_run *r, char *why, size_t size)
{
	const struct nb_kernel *k = r->k;
	char path[4096];

	for (int i = 0; i < r->ranks.nlocal; i++)
		for (int f = 0; f < k->nfiles; f++) {
			nb_driver_file_name(r, r->ranks.local[i].index, k->suffixes[f], path, sizeof(path), 0);
			open_one(r, path, &r->d->files[i * k->nfiles + f], why, size);
		}
}

/* Each local participant's injection log of its own. */
static void open_inject_files(struct nb_run *r, char *why, size_t size)
{
	char path[4096];

	for (int i = 0; i < r->ranks.nlocal; i++) {
		nb_driver_file_name(r, r->ranks.local[i].index, "injections.dat", path, sizeof(path), 0);
		open_one(r, path, &r->d->inject_files[i], why, size);
	}
}

/* Whether `mine` holds on every rank of the run (a collective). */
static int every_rank(struct nb_ranks *rk, int mine)
{
	return nb_ranks_first_failing(rk, !mine) < 0;
}

/* Every file is created under its temporary name before anything is
 * measured, on every rank: an unwritable prefix fails now, not after the run. */
void nb_driver_open_files(struct nb_run *r)
{
	struct nb_ranks *rk = &r->ranks;
	const struct nb_kernel *k = r->k;
	char path[4096], why[4400] = "";
	int files = !r->to_stdout;
	int data = files && !r->stream.on; /* a stream writes its own (stream.h) */

	if (k->nfiles > NB_MAX_NFILES)
		nb_fail(NB_EXIT_FAILURE, "%s writes %d kinds of data file, more than the "
			"catalogue's %d", k->name, k->nfiles, NB_MAX_NFILES);
	/* NB_INLINE_RANKS (kernels.json): the most ranks whose entries PREFIX.json
	 * holds itself, 4-17 MB, which the root writes and R reads in seconds.
	 * Beyond, each node's first rank writes its node's, all nodes at once,
	 * and no file grows with the ranks of the whole machine, nor does the
	 * count of files: the data files are the node's too (node_data.h). */
	/* A node's files are written by all its ranks at once: each kind only
	 * if every rank of the run asked for it (the ranks of an MPMD job,
	 * srun --multi-prog, may be given different options). */
	r->d->node_files = every_rank(rk, r->d->node_files || rk->size > NB_INLINE_RANKS);
	r->d->data_by_node = every_rank(rk, data && r->d->node_files);
	int inject_by_node = every_rank(rk, r->inject.duration_us != 0) && r->d->data_by_node;
	int causes_by_node = every_rank(rk, r->trace_opt) && r->d->data_by_node;

	r->d->files = calloc((size_t)rk->nlocal * k->nfiles, sizeof(*r->d->files));
	r->d->inject_files = calloc(rk->nlocal, sizeof(*r->d->inject_files));
	if (!r->d->files || !r->d->inject_files)
		nb_fail(NB_EXIT_FAILURE, "out of memory");

	if (data && !r->d->data_by_node)
		open_rank_files(r, why, sizeof(why));
	if (r->d->data_by_node && !why[0])
		nb_node_set_open(r, &r->d->node_data, k->nfiles, k->suffixes, why, sizeof(why));
	if (inject_by_node && !why[0])
		nb_node_set_open(r, &r->d->node_injections, 1, injections_suffix, why, sizeof(why));
	else if (files && r->inject.duration_us)
		open_inject_files(r, why, sizeof(why));
	if (causes_by_node && !why[0])
		nb_node_set_open(r, &r->d->node_causes, 1, causes_suffix, why, sizeof(why));
	if (rk->root) {
		snprintf(path, sizeof(path), "%s.json", r->prefix);
		open_one(r, path, &r->d->json, why, sizeof(why));
	}
	if (r->d->node_files && rk->node_first) {
		nb_driver_node_file_name(r, rk->node, path, sizeof(path), 0);
		open_one(r, path, &r->d->node_json, why, sizeof(why));
		nb_node_file_name(r, rk->node, NB_NODE_RANKS_SUFFIX, path, sizeof(path), 0);
		open_one(r, path, &r->d->node_table, why, sizeof(why));
	}
	if (r->d->metrics_opt && rk->node_first && !why[0]) {
		if (nb_metrics_path(r->d->metrics_opt, rk->host, path, sizeof(path)) != 0)
			snprintf(why, sizeof(why), "--metrics %s: the name is too long",
				 r->d->metrics_opt);
		else if (!(r->d->metrics = nb_outfile_open(path)))
			snprintf(why, sizeof(why), "--metrics: cannot create %s: %s", path,
				 strerror(errno));
	}
	nb_driver_agree(r, why[0] ? why : NULL);
}

FILE *nb_run_file(struct nb_run *r, int local, int f)
{
	size_t i = (size_t)local * r->k->nfiles + f;

	if (r->to_stdout)
		return stdout;
	return r->d->data ? r->d->data[i] : r->d->files[i]->f;
}

/* Writes the injection logs, as many injections as each record says, then
 * renames the local data files into place; fails the run if any could not
 * be written. */
void nb_driver_commit_files(struct nb_run *r, char *mine)
{
	for (int i = 0; i < r->ranks.nlocal; i++) {
		struct nb_outfile *o = r->d->inject_files[i];

		if (!o)
			continue;
		if (nb_inject_log_write(o->f, &r->ranks.local[i].injections,
					nb_driver_participant_at(r, mine, i)->injections_logged) < 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", o->tmp, strerror(errno));
		nb_outfile_commit_or_fail(o);
		r->d->inject_files[i] = NULL;
	}
	for (int i = 0; i < r->ranks.nlocal * r->k->nfiles; i++)
		if (r->d->files[i])
			nb_outfile_commit_or_fail(r->d->files[i]);
}

void nb_driver_participant_file(struct nb_run *r, int rank, int node, const char *suffix,
				char *buf, size_t size)
{
	if (node >= 0)
		nb_node_file_name(r, node, suffix, buf, size, 1);
	else
		nb_driver_file_name(r, rank, suffix, buf, size, 1);
}

/* nb_node_writer of the samples: the kernel's write hook into the node's files */
static int write_samples(struct nb_run *r, FILE **files, void *arg)
{
	const size_t *n = arg;

	r->d->data = files;
	for (int i = 0; i < r->ranks.nlocal; i++)
		r->d->results->write(r, i, n[i]);
	r->d->data = NULL;
	return r->ranks.nlocal;
}

/* nb_node_writer of the injection logs, of a complete run: every timer is
 * disarmed, every log whole */
static int write_injections(struct nb_run *r, FILE **files, void *arg)
{
	(void)arg;
	for (int i = 0; i < r->ranks.nlocal; i++)
		if (nb_inject_log_write(files[i], &r->ranks.local[i].injections, UINT64_MAX) < 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write the injections of %s: %s", r->prefix,
				strerror(errno));
	return r->ranks.nlocal;
}

/* Each local participant's samples into its data files, and its injection
 * log: its node's when node_files, but after a signal, when no collective is
 * safe, files of its own, created now (commit_files writes the logs then). */
void nb_driver_write_data(struct nb_run *r, const size_t *n, int signo)
{
	const struct nb_results *h = r->d->results;
	char why[4400] = "";

	if (r->d->data_by_node && signo) {
		int injections = r->d->node_injections.ranges != NULL;

		nb_node_set_discard(&r->d->node_data);
		nb_node_set_discard(&r->d->node_injections);
		nb_node_set_discard(&r->d->node_causes);
		r->d->data_by_node = 0;
		open_rank_files(r, why, sizeof(why));
		if (injections)
			open_inject_files(r, why, sizeof(why));
		if (why[0])
			nb_fail(NB_EXIT_FAILURE, "%s", why);
	}
	if (r->d->data_by_node) {
		nb_node_set_write(r, &r->d->node_data, write_samples, (void *)n);
		if (r->d->node_injections.ranges)
			nb_node_set_write(r, &r->d->node_injections, write_injections, NULL);
		return;
	}
	for (int i = 0; i < r->ranks.nlocal; i++) {
		if (r->to_stdout)
			printf("# rank %d cpu %d\n", r->ranks.local[i].index, r->ranks.local[i].cpu);
		if (h->write)
			h->write(r, i, n[i]);
	}
}
