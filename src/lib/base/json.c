#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

void nb_json_open(struct nb_json *j, FILE *f)
{
	j->f = f;
	j->row = NULL;
	j->depth = 0;
	j->count[0] = 0;
	j->line_depth = NB_JSON_MAX_DEPTH;
}

void nb_json_open_row(struct nb_json *j, struct nb_json_row *row)
{
	nb_json_open(j, NULL);
	j->row = row;
	j->path[0] = '\0';
	j->path_len[0] = 0;
}

void nb_json_row_free(struct nb_json_row *row)
{
	for (size_t i = 0; i < row->n; i++) {
		free(row->names[i]);
		free(row->cells[i]);
	}
	free(row->names);
	free(row->cells);
	*row = (struct nb_json_row){ 0 };
}

/* With a row: the name of the next member of the open level (its path, the
 * top-level object's own empty), in buf */
static void row_name(struct nb_json *j, const char *key, char *buf, size_t size)
{
	char index[24];
	int len = j->path_len[j->depth];

	if (j->depth == 0) {
		buf[0] = '\0';
		j->count[0]++;
		return;
	}
	if (!key) {
		snprintf(index, sizeof(index), "%d", j->count[j->depth] + 1);
		key = index;
	}
	j->count[j->depth]++;
	if ((size_t)snprintf(buf, size, "%.*s%s%s", len, j->path, len ? "." : "", key) >= size)
		nb_fail(NB_EXIT_FAILURE, "a JSON member's path is over %zu characters: %s", size,
			buf);
}

static char *copy(const char *s)
{
	char *c = strdup(s);

	if (!c)
		nb_fail(NB_EXIT_FAILURE, "out of memory for a table's row");
	return c;
}

/* A scalar member into the row: its text as a CSV field */
static void row_cell(struct nb_json *j, const char *key, const char *text)
{
	struct nb_json_row *row = j->row;
	char name[NB_JSON_PATH_MAX];

	row_name(j, key, name, sizeof(name));
	if (row->n == row->cap) {
		row->cap = row->cap ? 2 * row->cap : 64;
		row->names = realloc(row->names, row->cap * sizeof(*row->names));
		row->cells = realloc(row->cells, row->cap * sizeof(*row->cells));
		if (!row->names || !row->cells)
			nb_fail(NB_EXIT_FAILURE, "out of memory for a table's row");
	}
	row->names[row->n] = copy(name);
	row->cells[row->n++] = copy(text);
}

void nb_json_lines(struct nb_json *j)
{
	j->line_depth = j->depth;
}

static void newline(struct nb_json *j)
{
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void member(struct nb_json *j, const char *key)
{
	int flat = j->depth > j->line_depth;

	if (j->count[j->depth]++ > 0)
		fputc(',', j->f);
	if (j->depth > 0 && !flat)
		newline(j);
	if (key) {
		put_string(j->f, key);
		fputs(flat ? ":" : ": ", j->f);
	}
}

static void open_level(struct nb_json *j, const char *key, char c)
{
	if (j->row) {
		char name[NB_JSON_PATH_MAX];

		row_name(j, key, name, sizeof(name));
		if (j->depth + 1 < NB_JSON_MAX_DEPTH) {
			j->count[++j->depth] = 0;
			j->path_len[j->depth] = (int)strlen(name);
			memcpy(j->path, name, strlen(name) + 1);
		}
		return;
	}
	member(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < NB_JSON_MAX_DEPTH)
		j->count[++j->depth] = 0;
}

void nb_json_object(struct nb_json *j, const char *key)
{
	open_level(j, key, '{');
}

void nb_json_array(struct nb_json *j, const char *key)
{
	open_level(j, key, '[');
}

void nb_json_end(struct nb_json *j, char close)
{
	int had_members = j->count[j->depth] > 0, flat = j->depth > j->line_depth;

	j->depth--;
	if (j->row) {
		j->path[j->path_len[j->depth]] = '\0';
		return;
	}
	if (j->depth < j->line_depth)
		j->line_depth = NB_JSON_MAX_DEPTH;
	if (had_members && !flat)
		newline(j);
	fputc(close, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

/* A string as a CSV field: quoted, its quotes doubled */
static char *csv_string(const char *value)
{
	size_t n = 3;
	char *out, *o;

	for (const char *p = value; *p; p++)
		n += *p == '"' ? 2 : 1;
	o = out = malloc(n);
	if (!out)
		nb_fail(NB_EXIT_FAILURE, "out of memory for a table's row");
	*o++ = '"';
	for (const char *p = value; *p; p++) {
		if (*p == '"')
			*o++ = '"';
		*o++ = *p;
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

void nb_json_string(struct nb_json *j, const char *key, const char *value)
{
	if (j->row) {
		char *field = value ? csv_string(value) : NULL;

		row_cell(j, key, field ? field : "");
		free(field);
		return;
	}
	member(j, key);
	if (value)
		put_string(j->f, value);
	else
		fputs("null", j->f);
}

void nb_json_int(struct nb_json *j, const char *key, int64_t value)
{
	char text[24];

	snprintf(text, sizeof(text), "%lld", (long long)value);
	if (j->row) {
		row_cell(j, key, text);
		return;
	}
	member(j, key);
	fputs(text, j->f);
}

void nb_json_uint(struct nb_json *j, const char *key, uint64_t value)
{
	char text[24];

	snprintf(text, sizeof(text), "%llu", (unsigned long long)value);
	if (j->row) {
		row_cell(j, key, text);
		return;
	}
	member(j, key);
	fputs(text, j->f);
}

void nb_json_double(struct nb_json *j, const char *key, double value)
{
	char text[32] = "";

	/* the shortest of 15, 16 or 17 digits that reads back the same */
	for (int digits = 15; digits <= 17 && isfinite(value); digits++) {
		snprintf(text, sizeof(text), "%.*g", digits, value);
		if (strtod(text, NULL) == value)
			break;
	}
	if (j->row) {
		row_cell(j, key, text);
		return;
	}
	member(j, key);
	fputs(isfinite(value) ? text : "null", j->f);
}

void nb_json_bool(struct nb_json *j, const char *key, int value)
{
	if (j->row) {
		row_cell(j, key, value ? "true" : "false");
		return;
	}
	member(j, key);
	fputs(value ? "true" : "false", j->f);
}

void nb_json_null(struct nb_json *j, const char *key)
{
	if (j->row) {
		row_cell(j, key, "");
		return;
	}
	member(j, key);
	fputs("null", j->f);
}

void nb_json_range(struct nb_json *j, const char *key, const uint64_t range[2])
{
	nb_json_array(j, key);
	nb_json_uint(j, NULL, range[0]);
	nb_json_uint(j, NULL, range[1]);
	nb_json_end(j, ']');
}
