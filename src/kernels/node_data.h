/* With node files (driver.h's node_files), the data files of a node's
 * participants as one file a kind, each participant's data in a range of
 * it (node_data.c). */
#ifndef NB_NODE_DATA_H
#define NB_NODE_DATA_H

#include <stddef.h>

#include "kernel.h"

/* Node `node`'s file of kind f (base: without the prefix's directory, as
 * the JSON names it). */
void nb_node_data_name(const struct nb_run *r, int node, int f, char *buf, size_t size, int base);

/* Before the run, on the node's first rank: its files under their temporary
 * names. On failure says why in why and returns -1. */
int nb_node_data_open(struct nb_run *r, char *why, size_t size);

/* After a complete run, on every process of the node at once: each local
 * participant's n[i] samples written by the kernel's write hook into its
 * range of each file, the ranges in r->d->ranges, the files renamed into
 * place once the whole node has written. */
void nb_node_data_write(struct nb_run *r, const size_t *n);

/* The temporary files of a run that will not write them (interrupted). */
void nb_node_data_discard(struct nb_run *r);

#endif
