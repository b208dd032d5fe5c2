#include "json.h"

#include <math.h>
#include <stdlib.h>

void nb_json_open(struct nb_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->count[0] = 0;
	j->line_depth = NB_JSON_MAX_DEPTH;
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
	if (j->depth < j->line_depth)
		j->line_depth = NB_JSON_MAX_DEPTH;
	if (had_members && !flat)
		newline(j);
	fputc(close, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void nb_json_string(struct nb_json *j, const char *key, const char *value)
{
	member(j, key);
	if (value)
		put_string(j->f, value);
	else
		fputs("null", j->f);
}

void nb_json_int(struct nb_json *j, const char *key, int64_t value)
{
	member(j, key);
	fprintf(j->f, "%lld", (long long)value);
}

void nb_json_uint(struct nb_json *j, const char *key, uint64_t value)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)value);
}

void nb_json_double(struct nb_json *j, const char *key, double value)
{
	char text[32];

	member(j, key);
	if (!isfinite(value)) {
		fputs("null", j->f);
		return;
	}
	/* the shortest of 15, 16 or 17 digits that reads back the same */
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(text, sizeof(text), "%.*g", digits, value);
		if (strtod(text, NULL) == value)
			break;
	}
	fputs(text, j->f);
}

void nb_json_bool(struct nb_json *j, const char *key, int value)
{
	member(j, key);
	fputs(value ? "true" : "false", j->f);
}

void nb_json_null(struct nb_json *j, const char *key)
{
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
