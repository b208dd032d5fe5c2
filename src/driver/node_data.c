/* With node files, a node's files of a kind: one file a node and suffix
 * (the catalogue's node_files.data_file_name) in which each participant's
 * part lies in a byte range of its own, by rank, so that a survey of 10,000
 * nodes writes 10,000 files of a kind, not one a core.
 *
 * Each participant formats its part twice with the same writer: once to
 * count the bytes, then into its range of the node's file, which it writes
 * itself (pwrite: no process holds another's part, and none holds its own
 * as text). The node's first rank creates the file under a temporary name
 * before the run, as every output file is, and renames it once every
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

/* The prefix, or with base its last component (as the JSON names files). */
static const char *prefix_of(const struct nb_run *r, int base)
{
	const char *slash = strrchr(r->prefix, '/');

	return base && slash ? slash + 1 : r->prefix;
}

void nb_node_file_name(const struct nb_run *r, int node, const char *suffix, char *buf,
		       size_t size, int base)
{
	snprintf(buf, size, NB_NODE_DATA_FILE_FORMAT, prefix_of(r, base), node, suffix);
}

int nb_node_set_open(struct nb_run *r, struct nb_node_set *s, int nfiles,
		     const char *const *suffixes, char *why, size_t size)
{
	char path[4096];

	*s = (struct nb_node_set){ .nfiles = nfiles, .suffixes = suffixes };
	s->ranges = calloc((size_t)r->ranks.nlocal * nfiles, sizeof(*s->ranges));
	s->files = calloc(nfiles, sizeof(*s->files));
	if (!s->ranges || !s->files)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (int f = 0; f < nfiles && r->ranks.node_first; f++) {
		nb_node_file_name(r, r->ranks.node, suffixes[f], path, sizeof(path), 0);
		s->files[f] = nb_outfile_open(path);
		if (!s->files[f]) {
			snprintf(why, size, "-o %s: cannot create %s: %s", r->prefix, path,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

void nb_node_set_discard(struct nb_node_set *s)
{
	for (int f = 0; s->files && f < s->nfiles; f++)
		if (s->files[f])
			nb_outfile_discard(s->files[f]);
	free(s->files);
	free(s->ranges);
	*s = (struct nb_node_set){ 0 };
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

/* Every local participant's part through write into the sinks, one a
 * participant and file; returns write's. */
static int write_through(struct nb_run *r, const struct nb_node_set *s, nb_node_writer *write,
			 void *arg, struct sink *sinks, const char *path)
{
	size_t count = (size_t)r->ranks.nlocal * s->nfiles;
	FILE **files = calloc(count, sizeof(*files));

	if (!files)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (size_t i = 0; i < count; i++)
		files[i] = sink_open(&sinks[i]);
	int parts = write(r, files, arg);

	for (size_t i = 0; i < count; i++)
		if (fclose(files[i]) != 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", path, strerror(errno));
	free(files);
	return parts;
}

void nb_node_set_write(struct nb_run *r, struct nb_node_set *s, nb_node_writer *write, void *arg)
{
	int nf = s->nfiles, nlocal = r->ranks.nlocal;
	size_t count = (size_t)nlocal * nf;
	struct sink *sinks = calloc(count, sizeof(*sinks));
	uint64_t *at = calloc(count, sizeof(*at));
	char (*tmp)[4096] = calloc(nf, sizeof(*tmp));
	int *fd = calloc(nf, sizeof(*fd));

	if (!sinks || !at || !tmp || !fd)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (size_t i = 0; i < count; i++)
		sinks[i].fd = -1;
	write_through(r, s, write, arg, sinks, r->prefix);
	for (size_t i = 0; i < count; i++)
		at[i] = sinks[i].written;
	nb_ranks_node_offsets(&r->ranks, at, nf);
	for (int f = 0; f < nf && r->ranks.node_first; f++)
		snprintf(tmp[f], sizeof(tmp[f]), "%s", s->files[f]->tmp);
	nb_ranks_node_bcast(&r->ranks, tmp, (size_t)nf * sizeof(*tmp));
	for (int f = 0; f < nf; f++) {
		fd[f] = open(tmp[f], O_WRONLY);
		if (fd[f] < 0)
			nb_fail(NB_EXIT_FAILURE, "cannot open %s: %s", tmp[f], strerror(errno));
	}
	for (size_t i = 0; i < count; i++) {
		s->ranges[i][0] = at[i];
		s->ranges[i][1] = sinks[i].written;
		sinks[i] = (struct sink){ .fd = fd[i % nf], .at = at[i] };
	}
	uint64_t parts = (uint64_t)write_through(r, s, write, arg, sinks, tmp[0]);

	for (size_t i = 0; i < count; i++)
		if (sinks[i].written != s->ranges[i][1])
			nb_fail(NB_EXIT_FAILURE, "%s: the part of rank %d came to %llu bytes, not the "
				"%llu counted", tmp[i % nf], r->ranks.local[i / nf].index,
				(unsigned long long)sinks[i].written,
				(unsigned long long)s->ranges[i][1]);
	for (int f = 0; f < nf; f++)
		if (close(fd[f]) != 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", tmp[f], strerror(errno));
	nb_ranks_node_sum(&r->ranks, &parts, 1);
	for (int f = 0; f < nf && r->ranks.node_first; f++) {
		struct nb_outfile *o = s->files[f];

		s->files[f] = NULL;
		if (parts)
			nb_outfile_commit_or_fail(o);
		else
			nb_outfile_discard(o);
	}
	free(s->files);
	s->files = NULL;
	free(fd);
	free(tmp);
	free(at);
	free(sinks);
}

void nb_run_node_text(struct nb_run *r, const char *suffix, nb_node_writer *write, void *arg)
{
	struct nb_node_set set;
	char why[4400] = "";

	if (nb_node_set_open(r, &set, 1, &suffix, why, sizeof(why)) != 0)
		nb_fail(NB_EXIT_FAILURE, "%s", why);
	nb_node_set_write(r, &set, write, arg);
	free(set.ranges);
}

void nb_run_node_text_name(const struct nb_run *r, const char *suffix, char *buf, size_t size)
{
	snprintf(buf, size, NB_NODE_DATA_FILE_PATTERN, prefix_of(r, 1), suffix);
}
