/* With node files, the participants' data files: one file a node and kind
 * (the catalogue's node_files.data_file_name) in which each participant's
 * data lie in a byte range of their own, by rank, so that a survey of
 * 10,000 nodes writes 10,000 data files of a kind, not one a core.
 *
 * Each participant formats its data twice with the kernel's own write hook:
 * once to count the bytes, then into its range of the node's file, which it
 * writes itself (pwrite: no process holds another's data, and none holds its
 * own as text). The node's first rank creates the file under a temporary
 * name before the run, as every data file is, and renames it once every
 * participant of the node has written. */
#define _GNU_SOURCE
#include "node_data.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "errors.h"
#include "kernel_files.h"

enum { BUFFER_BYTES = 1 << 20 };

void nb_node_data_name(const struct nb_run *r, int node, int f, char *buf, size_t size, int base)
{
	const char *slash = strrchr(r->prefix, '/');

	snprintf(buf, size, NB_NODE_DATA_FILE_FORMAT, base && slash ? slash + 1 : r->prefix, node,
		 r->k->suffixes[f]);
}

int nb_node_data_open(struct nb_run *r, char *why, size_t size)
{
	char path[4096];

	if (!r->ranks.node_first)
		return 0;
	r->d->node_data = calloc(r->k->nfiles, sizeof(*r->d->node_data));
	if (!r->d->node_data)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (int f = 0; f < r->k->nfiles; f++) {
		nb_node_data_name(r, r->ranks.node, f, path, sizeof(path), 0);
		r->d->node_data[f] = nb_outfile_open(path);
		if (!r->d->node_data[f]) {
			snprintf(why, size, "-o %s: cannot create %s: %s", r->prefix, path,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

void nb_node_data_discard(struct nb_run *r)
{
	for (int f = 0; r->d->node_data && f < r->k->nfiles; f++)
		if (r->d->node_data[f])
			nb_outfile_discard(r->d->node_data[f]);
	free(r->d->node_data);
	r->d->node_data = NULL;
}

/* A FILE that counts what is written to it, or writes it at *at of fd. */
struct sink {
	int fd; /* -1: count only */
	uint64_t at, written;
};

static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
	struct sink *s = cookie;
	size_t done = 0;

	while (s->fd >= 0 && done < size) {
		ssize_t w = pwrite(s->fd, buf + done, size - done, (off_t)(s->at + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	s->at += size;
	s->written += size;
	return (ssize_t)size;
}

static FILE *sink_open(struct sink *s)
{
	FILE *f = fopencookie(s, "w", (cookie_io_functions_t){ .write = sink_write });

	if (!f)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	setvbuf(f, NULL, _IOFBF, BUFFER_BYTES);
	return f;
}

/* Every local participant's data through the kernel's write hook into the
 * sinks, one a participant and kind: r->d->data points at them meanwhile. */
static void write_through(struct nb_run *r, const size_t *n, struct sink *sinks, const char *path)
{
	int nf = r->k->nfiles;
	size_t count = (size_t)r->ranks.nlocal * nf;
	FILE **files = calloc(count, sizeof(*files));

	if (!files)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (size_t i = 0; i < count; i++)
		files[i] = sink_open(&sinks[i]);
	r->d->data = files;
	for (int i = 0; i < r->ranks.nlocal; i++)
		r->d->results->write(r, i, n[i]);
	r->d->data = NULL;
	for (size_t i = 0; i < count; i++)
		if (fclose(files[i]) != 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", path, strerror(errno));
	free(files);
}

void nb_node_data_write(struct nb_run *r, const size_t *n)
{
	int nf = r->k->nfiles, nlocal = r->ranks.nlocal;
	size_t count = (size_t)nlocal * nf;
	struct sink *sinks = calloc(count, sizeof(*sinks));
	uint64_t *at = calloc(count, sizeof(*at));
	char (*tmp)[4096] = calloc(nf, sizeof(*tmp));
	int *fd = calloc(nf, sizeof(*fd));

	if (!sinks || !at || !tmp || !fd)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (size_t i = 0; i < count; i++)
		sinks[i].fd = -1;
	write_through(r, n, sinks, r->prefix);
	for (size_t i = 0; i < count; i++)
		at[i] = sinks[i].written;
	nb_ranks_node_offsets(&r->ranks, at, nf);
	for (int f = 0; f < nf && r->ranks.node_first; f++)
		snprintf(tmp[f], sizeof(tmp[f]), "%s", r->d->node_data[f]->tmp);
	nb_ranks_node_bcast(&r->ranks, tmp, (size_t)nf * sizeof(*tmp));
	for (int f = 0; f < nf; f++) {
		fd[f] = open(tmp[f], O_WRONLY);
		if (fd[f] < 0)
			nb_fail(NB_EXIT_FAILURE, "cannot open %s: %s", tmp[f], strerror(errno));
	}
	for (size_t i = 0; i < count; i++) {
		r->d->ranges[i][0] = at[i];
		r->d->ranges[i][1] = sinks[i].written;
		sinks[i] = (struct sink){ .fd = fd[i % nf], .at = at[i] };
	}
	write_through(r, n, sinks, tmp[0]);
	for (size_t i = 0; i < count; i++)
		if (sinks[i].written != r->d->ranges[i][1])
			nb_fail(NB_EXIT_FAILURE, "%s: the data of rank %d came to %llu bytes, not the "
				"%llu counted", tmp[i % nf], r->ranks.local[i / nf].index,
				(unsigned long long)sinks[i].written,
				(unsigned long long)r->d->ranges[i][1]);
	for (int f = 0; f < nf; f++)
		if (close(fd[f]) != 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", tmp[f], strerror(errno));
	nb_ranks_node_barrier(&r->ranks);
	for (int f = 0; f < nf && r->ranks.node_first; f++) {
		struct nb_outfile *o = r->d->node_data[f];

		r->d->node_data[f] = NULL;
		nb_outfile_commit_or_fail(o);
	}
	free(r->d->node_data);
	r->d->node_data = NULL;
	free(fd);
	free(tmp);
	free(at);
	free(sinks);
}
