/* A node's ranks as a table (ranks_table.c): a CSV row a rank. */
#ifndef NB_RANKS_TABLE_H
#define NB_RANKS_TABLE_H

#include <stdio.h>

#include "json.h"

/* writes participant i's entry, one top-level object, into j */
typedef void (*nb_ranks_table_entry)(void *arg, int i, struct nb_json *j);

/* The n entries as a CSV table into f: a header of every member's path,
 * then a row each. */
void nb_ranks_table_write(FILE *f, int n, nb_ranks_table_entry entry, void *arg);

#endif
