/* With node files (driver.h's node_files), the participants' files of a
 * kind (the kernel's data files, --inject logs, --trace causes) as one file
 * a node and suffix, each participant's in a byte range of it
 * (node_data.c). */
#ifndef NB_NODE_DATA_H
#define NB_NODE_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel.h"

/* A set of a node's files, one a suffix, written together. */
struct nb_node_set {
	int nfiles;
	const char *const *suffixes;
	struct nb_outfile **files; /* the node's first rank's, until written */
	uint64_t (*ranges)[2];     /* [offset, bytes]: nfiles per local participant */
};

/* nb_node_writer (kernel.h): writes local participant i's files of the
 * set, files[i * nfiles + f]. */

/* Node `node`'s file of this suffix (base: without the prefix's directory,
 * as the JSON names it). */
void nb_node_file_name(const struct nb_run *r, int node, const char *suffix, char *buf,
		       size_t size, int base);

/* Before the run, on every process: the set's ranges, and on the node's
 * first rank its files under their temporary names. On failure says why in
 * why and returns -1. */
int nb_node_set_open(struct nb_run *r, struct nb_node_set *s, int nfiles,
		     const char *const *suffixes, char *why, size_t size);

/* After a complete run, on every process of the node at once: write runs
 * twice, once counting each participant's bytes, then into its range of
 * each file (the ranges in s->ranges); the files are renamed into place
 * once the whole node has written, or removed if no participant of the
 * node had a part. */
void nb_node_set_write(struct nb_run *r, struct nb_node_set *s, nb_node_writer *write, void *arg);

/* The temporary files of a set that will not be written (interrupted), and
 * its ranges. */
void nb_node_set_discard(struct nb_node_set *s);

#endif
