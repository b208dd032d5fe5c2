#include "figures.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

static struct nb_figure *find(struct nb_figures *fs, const char *key, int is_word)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->f[i].key, key))
			return &fs->f[i];
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 64;
		struct nb_figure *f = realloc(fs->f, cap * sizeof(*f));

		if (!f)
			nb_fail(NB_EXIT_FAILURE, "out of memory for the result lines' figures");
		fs->f = f;
		fs->cap = cap;
	}
	memset(&fs->f[fs->n], 0, sizeof(fs->f[fs->n]));
	snprintf(fs->f[fs->n].key, NB_FIGURE_KEY, "%s", key);
	fs->f[fs->n].is_word = is_word;
	fs->f[fs->n].min = INFINITY;
	fs->f[fs->n].max = -INFINITY;
	return &fs->f[fs->n++];
}

/* A number as strtod reads all of it, one trailing % allowed. */
static int number(const char *s, size_t len, double *v)
{
	char buf[NB_FIGURE_TEXT], *end;

	if (!len || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (buf[len - 1] == '%')
		buf[--len] = '\0';
	*v = strtod(buf, &end);
	return len && *end == '\0';
}

static void add_number(struct nb_figures *fs, const char *key, const char *text, size_t len,
		       double v)
{
	struct nb_figure *f = find(fs, key, 0);

	if (f->is_word || !isfinite(v))
		return;
	if (v < f->min) {
		f->min = v;
		snprintf(f->min_text, NB_FIGURE_TEXT, "%.*s", (int)len, text);
	}
	if (v > f->max) {
		f->max = v;
		snprintf(f->max_text, NB_FIGURE_TEXT, "%.*s", (int)len, text);
	}
	f->sum += v;
	f->count++;
}

/* Whether s is a list "name:number,..." with names beginning with a letter;
 * with fs, its numbers are added to it as KEY_name. */
static int list(struct nb_figures *fs, const char *key, const char *s, size_t len)
{
	const char *end = s + len;
	size_t klen = strlen(key);
	char sub[NB_FIGURE_KEY];

	if (!len)
		return 0;
	while (s < end) {
		const char *colon = memchr(s, ':', (size_t)(end - s));
		const char *comma = memchr(s, ',', (size_t)(end - s));
		size_t nlen, vlen;
		double v;

		if (!comma)
			comma = end;
		if (!colon || colon > comma || !isalpha((unsigned char)*s) ||
		    !number(colon + 1, (size_t)(comma - colon - 1), &v))
			return 0;
		nlen = (size_t)(colon - s);
		vlen = (size_t)(comma - colon - 1);
		if (fs && klen + 1 + nlen < sizeof(sub)) {
			memcpy(sub, key, klen);
			sub[klen] = '_';
			memcpy(sub + klen + 1, s, nlen);
			sub[klen + 1 + nlen] = '\0';
			/* the % stays out of the reduced figures' text */
			add_number(fs, sub, colon + 1, vlen - (comma[-1] == '%'), v);
		}
		s = comma + 1;
	}
	return 1;
}

static int skipped(const char *key, const char *const *skip)
{
	for (; skip && *skip; skip++)
		if (!strcmp(key, *skip))
			return 1;
	return 0;
}

void nb_figures_add_line(struct nb_figures *fs, const char *line, const char *const *skip)
{
	const char *s = line + strcspn(line, " \n");

	fs->lines++;
	while (*s && *s != '\n') {
		const char *tok = s + strspn(s, " "), *eq, *end;
		char key[NB_FIGURE_KEY];
		size_t len;
		double v;

		end = tok + strcspn(tok, " \n");
		s = end;
		eq = memchr(tok, '=', (size_t)(end - tok));
		if (!eq || eq == tok || (size_t)(eq - tok) >= sizeof(key))
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(eq - tok), tok);
		if (skipped(key, skip))
			continue;
		len = (size_t)(end - eq - 1);
		if (number(eq + 1, len, &v)) {
			add_number(fs, key, eq + 1, len - (eq[len] == '%'), v);
		} else if (list(NULL, key, eq + 1, len)) {
			list(fs, key, eq + 1, len);
		} else {
			struct nb_figure *f = find(fs, key, 1);

			if (f->is_word && !f->count++)
				snprintf(f->first, NB_FIGURE_TEXT, "%.*s", (int)len, eq + 1);
		}
	}
}

void nb_figures_merge(struct nb_figures *fs, const struct nb_figure *f, size_t n, uint64_t lines)
{
	fs->lines += lines;
	for (size_t i = 0; i < n; i++) {
		struct nb_figure *to = find(fs, f[i].key, f[i].is_word);

		if (to->is_word != f[i].is_word)
			continue;
		if (to->is_word) {
			if (!to->count && f[i].count)
				memcpy(to->first, f[i].first, NB_FIGURE_TEXT);
		} else {
			if (f[i].count && f[i].min < to->min) {
				to->min = f[i].min;
				memcpy(to->min_text, f[i].min_text, NB_FIGURE_TEXT);
			}
			if (f[i].count && f[i].max > to->max) {
				to->max = f[i].max;
				memcpy(to->max_text, f[i].max_text, NB_FIGURE_TEXT);
			}
			to->sum += f[i].sum;
		}
		to->count += f[i].count;
	}
}

void nb_figures_print(const struct nb_figures *fs, FILE *out)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct nb_figure *f = &fs->f[i];

		if (f->is_word)
			fprintf(out, " %s_first=%s", f->key, f->first);
		else if (!f->count)
			fprintf(out, " %s_min=nan %s_avg=nan %s_max=nan", f->key, f->key, f->key);
		else
			fprintf(out, " %s_min=%s %s_avg=%.6g %s_max=%s", f->key, f->min_text, f->key,
				f->sum / (double)f->count, f->key, f->max_text);
	}
}

void nb_figures_free(struct nb_figures *fs)
{
	free(fs->f);
	memset(fs, 0, sizeof(*fs));
}

const char *nb_line_value(const char *line, const char *key, size_t *len)
{
	size_t k = strlen(key);

	for (const char *p = line; (p = strstr(p, key)); p += k) {
		if ((p == line || p[-1] == ' ') && p[k] == '=') {
			*len = strcspn(p + k + 1, " \n");
			return p + k + 1;
		}
	}
	return NULL;
}
