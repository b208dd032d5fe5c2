/* A small streaming JSON writer for the run descriptions, and the same
 * calls as a row of a table: an object flattened into cells named by their
 * path (nb_json_open_row). */
#ifndef NB_JSON_H
#define NB_JSON_H

#include <stdint.h>
#include <stdio.h>

enum { NB_JSON_MAX_DEPTH = 16 };

/* A flattened object: its scalars as cells, each named by its keys from the
 * object down joined by '.', an array's elements by their place from 1
 * (stats.min, stretches.n.1); a cell's text as a CSV field (a string
 * quoted, null empty). */
struct nb_json_row {
	char **names, **cells;
	size_t n, cap;
};

enum { NB_JSON_PATH_MAX = 512 };

struct nb_json {
	FILE *f;
	struct nb_json_row *row; /* NULL: JSON text into f */
	char path[NB_JSON_PATH_MAX]; /* with a row: the open levels' path */
	int path_len[NB_JSON_MAX_DEPTH];
	int depth;
	int count[NB_JSON_MAX_DEPTH]; /* members written so far at each level */
	int line_depth; /* members deeper than this go on their parent's line */
};

/* key is NULL for array elements and for the top-level value. */
void nb_json_open(struct nb_json *j, FILE *f);
/* The next top-level object's members into row's cells instead of text */
void nb_json_open_row(struct nb_json *j, struct nb_json_row *row);
void nb_json_row_free(struct nb_json_row *row);
void nb_json_object(struct nb_json *j, const char *key);
void nb_json_array(struct nb_json *j, const char *key);
void nb_json_end(struct nb_json *j, char close); /* '}' or ']' */
/* Until the level just opened ends: each of its members on a line of its
 * own, compact (a table of records, such as a run's ranks: half the bytes
 * of the indented form, and a line a record to grep) */
void nb_json_lines(struct nb_json *j);
void nb_json_string(struct nb_json *j, const char *key, const char *value);
void nb_json_int(struct nb_json *j, const char *key, int64_t value);
void nb_json_uint(struct nb_json *j, const char *key, uint64_t value);
void nb_json_double(struct nb_json *j, const char *key, double value); /* NaN -> null */
void nb_json_bool(struct nb_json *j, const char *key, int value);
void nb_json_null(struct nb_json *j, const char *key);
/* [offset, bytes]: where a participant's part lies in a node's file */
void nb_json_range(struct nb_json *j, const char *key, const uint64_t range[2]);

#endif
