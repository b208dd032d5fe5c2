#define _GNU_SOURCE
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
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

/* A label set's value from a rank line (kernel overriding the line's). */
static void line_label(FILE *f, const char *line, const char *key, const char *kernel)
{
	size_t len = 0;
	const char *s = nb_line_value(line, key, &len);

	if (kernel && !strcmp(key, "kernel")) {
		s = kernel;
		len = strlen(kernel);
	}
	label_value(f, s ? s : "", s ? len : 0);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The node's series of each metric: its worst CPU and its median one, and
 * how many CPUs it measured and how many broke a rule. */
static void node_series(FILE *f, char *const *lines, const int *broken, int n,
			const char *kernel)
{
	double *v = malloc(((size_t)n + 1) * sizeof(*v));
	int nbroken = 0;

	if (!v)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the node's metrics");
	for (int k = 0; k < NB_METRIC_COUNT; k++) {
		const struct metric *m = &catalogue[k];
		const char *base = m->name + strlen(NB_METRICS_CPU_PREFIX);
		/* a counter's twin is a gauge (a node's worst or median CPU's
		 * count), so it goes without the counter's _total */
		int len = (int)strlen(base) -
			  (!strcmp(m->type, "counter") && strstr(base, "_total") ? 6 : 0);
		int seen = 0;

		/* a CPU without the figure (nan) has no place in its order */
		for (int i = 0; i < n; i++)
			seen += metric_value(m, lines[i], &v[seen]) && !isnan(v[seen]);
		if (!seen)
			continue;
		qsort(v, (size_t)seen, sizeof(*v), by_value);
		fprintf(f, "# HELP %s%.*s %s Over the node's CPUs: stat max, the worst; median, the "
			"median.\n# TYPE %s%.*s gauge\n", NB_METRICS_NODE_PREFIX, len, base, m->help,
			NB_METRICS_NODE_PREFIX, len, base);
		for (int s = 0; s < 2; s++) {
			fprintf(f, "%s%.*s{kernel=\"", NB_METRICS_NODE_PREFIX, len, base);
			line_label(f, lines[0], "kernel", kernel);
			fprintf(f, "\",stat=\"%s\"} ", s ? "median" : "max");
			number(f, s ? (v[(seen - 1) / 2] + v[seen / 2]) / 2 : v[seen - 1]);
			fputc('\n', f);
		}
	}
	free(v);
	for (int i = 0; i < n; i++)
		nbroken += broken[i] != 0;
	for (int s = 0; s < 2; s++) {
		const char *name = s ? "noisebench_node_cpus_breaking" : "noisebench_node_cpus";

		family(f, name, s ? "CPUs of the node that broke a rule: each has its own series."
				  : "CPUs of the node measured.",
		       "gauge");
		fprintf(f, "%s{kernel=\"", name);
		line_label(f, lines[0], "kernel", kernel);
		fputs("\"} ", f);
		number(f, s ? nbroken : n);
		fputc('\n', f);
	}
}

void nb_metrics_rank_lines(FILE *f, char *const *lines, const int *broken, int n,
			   const char *kernel, int every_cpu)
{
	static const char *const labels[] = { "kernel", "rank", "cpu" };

	if (n > 0)
		node_series(f, lines, broken, n, kernel);
	for (int k = 0; k < NB_METRIC_COUNT; k++) {
		const struct metric *m = &catalogue[k];
		int written = 0;

		for (int i = 0; i < n; i++) {
			double v;

			if (!(every_cpu || broken[i]) || !metric_value(m, lines[i], &v))
				continue;
			if (!written++)
				family(f, m->name, m->help, m->type);
			fprintf(f, "%s{", m->name);
			for (size_t l = 0; l < sizeof(labels) / sizeof(*labels); l++) {
				fprintf(f, "%s%s=\"", l ? "," : "", labels[l]);
				line_label(f, lines[i], labels[l], kernel);
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
