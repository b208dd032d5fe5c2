/* With node files, a node's ranks as a table beside their entries
 * (kernels.json's node_files.ranks_suffix): a row a rank, its entry
 * flattened (nb_json_open_row), so that a reader made for rows (fread)
 * takes a million ranks' summaries at disk speed, and the table can never
 * say other than the entries, being written by the same calls. */
#define _GNU_SOURCE
#include "ranks_table.h"

#include <stdlib.h>
#include <string.h>

#include "errors.h"

/* The column of `name`: the one after the column of the member before it
 * (ranks of a run have the same members, in the same order, but for
 * kernel_counts.top's few names), or searched for; -1 if none */
static long column_of(char *const *columns, size_t ncolumns, const char *name, size_t guess)
{
	if (guess < ncolumns && strcmp(columns[guess], name) == 0)
		return (long)guess;
	for (size_t c = 0; c < ncolumns; c++)
		if (strcmp(columns[c], name) == 0)
			return (long)c;
	return -1;
}

/* A name as a CSV header field: as it is unless a comma or quote needs it
 * quoted (a cause's name among kernel_counts.top's) */
static void put_name(FILE *f, const char *name)
{
	if (!strpbrk(name, ",\"\n")) {
		fputs(name, f);
		return;
	}
	fputc('"', f);
	for (const char *p = name; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p == '\n' ? ' ' : *p, f);
	}
	fputc('"', f);
}

void nb_ranks_table_write(FILE *f, int n, nb_ranks_table_entry entry, void *arg)
{
	struct nb_json_row *rows = calloc(n > 0 ? (size_t)n : 1, sizeof(*rows));
	char **columns = NULL;
	size_t ncolumns = 0, cap = 0;
	long *at = NULL;
	struct nb_json j;

	if (!rows)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the ranks' table");
	/* the columns: every rank's members, in the order they first came */
	for (int i = 0; i < n; i++) {
		nb_json_open_row(&j, &rows[i]);
		entry(arg, i, &j);
		size_t next = 0;

		for (size_t c = 0; c < rows[i].n; c++) {
			long k = column_of(columns, ncolumns, rows[i].names[c], next);

			if (k >= 0) {
				next = (size_t)k + 1;
				continue;
			}
			if (ncolumns == cap) {
				cap = cap ? 2 * cap : 256;
				columns = realloc(columns, cap * sizeof(*columns));
				if (!columns)
					nb_fail(NB_EXIT_FAILURE, "out of memory for the ranks' table");
			}
			columns[ncolumns++] = rows[i].names[c];
			next = ncolumns;
		}
	}
	at = malloc((ncolumns ? ncolumns : 1) * sizeof(*at));
	if (!at)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the ranks' table");
	for (size_t c = 0; c < ncolumns; c++) {
		if (c)
			fputc(',', f);
		put_name(f, columns[c]);
	}
	fputc('\n', f);
	/* a rank without a member (an MPMD rank given other options) has the
	 * column's field empty */
	for (int i = 0; i < n; i++) {
		size_t next = 0;

		for (size_t c = 0; c < ncolumns; c++)
			at[c] = -1;
		for (size_t c = 0; c < rows[i].n; c++) {
			long k = column_of(columns, ncolumns, rows[i].names[c], next);

			if (k >= 0) {
				at[k] = (long)c;
				next = (size_t)k + 1;
			}
		}
		for (size_t c = 0; c < ncolumns; c++) {
			if (c)
				fputc(',', f);
			if (at[c] >= 0)
				fputs(rows[i].cells[at[c]], f);
		}
		fputc('\n', f);
	}
	free(at);
	free(columns);
	for (int i = 0; i < n; i++)
		nb_json_row_free(&rows[i]);
	free(rows);
}
