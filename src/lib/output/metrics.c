#define _GNU_SOURCE
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "metrics_catalogue.h"

struct metric {
	const char *name, *help, *type;
	double scale;
	const char *keys[4];
};

static const struct metric catalogue[NB_METRIC_COUNT] = NB_METRICS;

int nb_metrics_path(const char *template, const char *host, char *buf, size_t size)
{
	size_t used = 0;

	for (const char *p = template; *p;) {
		const char *piece = p;
		size_t len = 1;

		if (strncmp(p, "{host}", 6) == 0) {
			piece = host;
			len = strlen(host);
			p += 6;
		} else {
			p++;
		}
		if (used + len >= size)
			return -1;
		memcpy(buf + used, piece, len);
		used += len;
	}
	buf[used] = '\0';
	return 0;
}

/* A label's value, with \, " and newline escaped as the format asks. */
static void label_value(FILE *f, const char *v, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (v[i] == '\\' || v[i] == '"')
			fputc('\\', f);
		if (v[i] == '\n')
			fputs("\\n", f);
		else
			fputc(v[i], f);
	}
}

static void number(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.9g", v);
}

static void family(FILE *f, const char *name, const char *help, const char *type)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void nb_metrics_info(FILE *f, const struct nb_machine *m)
{
	family(f, "noisebench_info", "The noisebench that measured, and where.", "gauge");
	fprintf(f, "noisebench_info{version=\"%s\",kernel_release=\"", NOISEBENCH_VERSION);
	label_value(f, m->kernel_release, strlen(m->kernel_release));
	fputs("\",host=\"", f);
	label_value(f, m->hostname, strlen(m->hostname));
	fputs("\"} 1\n", f);
}

/* The sum of the metric's keys in line; 0 if one is absent or not a number. */
static int metric_value(const struct metric *m, const char *line, double *v)
{
	*v = 0;
	for (int i = 0; m->keys[i]; i++) {
		size_t len;
		const char *s = nb_line_value(line, m->keys[i], &len);
		char *end;

		if (!s)
			return 0;
		double x = strtod(s, &end);

		if (end != s + len || len == 0)
			return 0;
		*v += x;
	}
	*v *= m->scale;
	return 1;
}

void nb_metrics_rank_lines(FILE *f, char *const *lines, int n, const char *kernel)
{
	static const char *const labels[] = { "kernel", "rank", "cpu" };

	for (int k = 0; k < NB_METRIC_COUNT; k++) {
		const struct metric *m = &catalogue[k];
		int written = 0;

		for (int i = 0; i < n; i++) {
			double v;

			if (!metric_value(m, lines[i], &v))
				continue;
			if (!written++)
				family(f, m->name, m->help, m->type);
			fprintf(f, "%s{", m->name);
			for (size_t l = 0; l < sizeof(labels) / sizeof(*labels); l++) {
				size_t len = 0;
				const char *s = nb_line_value(lines[i], labels[l], &len);

				if (l == 0 && kernel) {
					s = kernel;
					len = strlen(kernel);
				}
				fprintf(f, "%s%s=\"", l ? "," : "", labels[l]);
				label_value(f, s ? s : "", s ? len : 0);
				fputc('"', f);
			}
			fputs("} ", f);
			number(f, v);
			fputc('\n', f);
		}
	}
}

void nb_metrics_gauge(FILE *f, const char *name, const char *help, double value)
{
	family(f, name, help, "gauge");
	fprintf(f, "%s ", name);
	number(f, value);
	fputc('\n', f);
}
