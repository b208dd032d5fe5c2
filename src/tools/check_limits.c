#define _GNU_SOURCE
#include "check_limits.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "machine.h"

/* --- the survey: what the kernels' JSON files say, line by line ---------
 * The driver writes each rank's entry on a line of its own ({"rank":...},
 * in PREFIX.json or in a node's PREFIX_nodeK.json) and the run's head and
 * machines one key a line, so a survey of any size is read a line at a
 * time, holding one record a node and run. */

/* A node in one run: its worst CPU. */
struct node_run {
	int run, selfish;
	char host[64];
	double lost_percent, longest_us;
	int cpus;
};

/* A host's kind in one run's machines. */
struct host_kind {
	int run;
	char host[64], kind[300];
};

struct survey {
	struct node_run *nodes;
	size_t nnodes, cap_nodes;
	struct host_kind *hosts;
	size_t nhosts, cap_hosts;
	char **runs; /* each run's prefix (its PREFIX.json without .json) */
	/* run_kept: complete and without injected noise, the machine's own */
	int *run_selfish, *run_kept;
	int nruns;
};

static struct survey sv;

static void *grow(void *p, size_t *cap, size_t n, size_t each)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	p = realloc(p, *cap * each);
	if (!p)
		nb_fail(NB_EXIT_USAGE, "--limits-from: out of memory");
	return p;
}

/* The string value of "key": "..." or "key":"..." in line, into buf. */
static int string_value(const char *line, const char *key, char *buf, size_t size)
{
	const char *p = strstr(line, key);

	if (!p)
		return 0;
	p += strlen(key);
	p += strspn(p, " :");
	if (*p++ != '"')
		return 0;
	snprintf(buf, size, "%.*s", (int)strcspn(p, "\""), p);
	return 1;
}

static int number_value(const char *line, const char *key, double *v)
{
	const char *p = strstr(line, key);
	char *end;

	if (!p)
		return 0;
	p += strlen(key);
	p += strspn(p, " :");
	*v = strtod(p, &end);
	return end != p;
}

/* A run's prefix from one of its JSON files: PREFIX.json or PREFIX_nodeK.json. */
static void run_prefix(const char *path, char *buf, size_t size, int *node_file)
{
	size_t n = strlen(path) - strlen(".json");
	size_t k = n;

	while (k > 0 && path[k - 1] >= '0' && path[k - 1] <= '9')
		k--;
	*node_file = k < n && k >= 5 && strncmp(path + k - 5, "_node", 5) == 0;
	if (*node_file)
		n = k - 5;
	snprintf(buf, size, "%.*s", (int)n, path);
}

static int find_run(const char *prefix)
{
	for (int i = sv.nruns - 1; i >= 0; i--)
		if (strcmp(sv.runs[i], prefix) == 0)
			return i;
	return -1;
}

/* PREFIX.json's head and machines (pass 1). */
static void read_run_head(const char *path, const char *prefix)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, kernel[64] = "", host[64] = "", model[256] = "";
	size_t size = 0;
	int version = 0, complete = 0, injected = 0, run = sv.nruns;
	double cpus;

	if (!f)
		return;
	while (getline(&line, &size, f) > 0) {
		if (strstr(line, "{\"rank\":"))
			continue;
		if (!strncmp(line, "  \"noisebench_version\":", 23))
			version = 1;
		else if (!strncmp(line, "  \"kernel\":", 11))
			string_value(line, "\"kernel\"", kernel, sizeof(kernel));
		else if (!strncmp(line, "  \"complete\": true", 18))
			complete = 1;
		else if (!strncmp(line, "  \"inject\": {", 13))
			injected = 1;
		else if (string_value(line, "\"hostname\"", host, sizeof(host)))
			model[0] = '\0';
		else if (host[0] && !model[0])
			string_value(line, "\"cpu_model\"", model, sizeof(model));
		else if (host[0] && model[0] && number_value(line, "\"cpus_online\"", &cpus)) {
			sv.hosts = grow(sv.hosts, &sv.cap_hosts, sv.nhosts, sizeof(*sv.hosts));
			struct host_kind *h = &sv.hosts[sv.nhosts++];

			h->run = run;
			snprintf(h->host, sizeof(h->host), "%s", host);
			snprintf(h->kind, sizeof(h->kind), "%s, %.0f CPUs", model, cpus);
			host[0] = '\0';
		}
	}
	free(line);
	fclose(f);
	if (!version) {
		while (sv.nhosts && sv.hosts[sv.nhosts - 1].run == run)
			sv.nhosts--;
		return;
	}
	sv.runs = realloc(sv.runs, (size_t)(run + 1) * sizeof(*sv.runs));
	sv.run_selfish = realloc(sv.run_selfish, (size_t)(run + 1) * sizeof(int));
	sv.run_kept = realloc(sv.run_kept, (size_t)(run + 1) * sizeof(int));
	if (!sv.runs || !sv.run_selfish || !sv.run_kept || !(sv.runs[run] = strdup(prefix)))
		nb_fail(NB_EXIT_USAGE, "--limits-from: out of memory");
	sv.run_selfish[run] = strcmp(kernel, "selfish") == 0;
	sv.run_kept[run] = complete && !injected;
	sv.nruns++;
}

/* Every rank line of a run's file (pass 2), a record a node: a node's
 * ranks are consecutive lines. */
static void read_rank_lines(const char *path, int run)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, host[64];
	size_t size = 0;
	struct node_run *cur = NULL;

	if (!f)
		return;
	while (getline(&line, &size, f) > 0) {
		double lost, injections = 0, longest = NAN;
		const char *tails = strstr(line, "\"tails\":{");

		/* the system's share, as noise-check gives it; system_percent and
		 * detour_percent in runs from before stolen_percent */
		if (!strstr(line, "{\"rank\":") || !string_value(line, "\"host\"", host, sizeof(host)) ||
		    !(number_value(line, "\"stolen_percent\"", &lost) ||
		      number_value(line, "\"system_percent\"", &lost) ||
		      number_value(line, "\"detour_percent\"", &lost)))
			continue;
		number_value(line, "\"injections\"", &injections);
		if (tails)
			number_value(tails, "\"max_us\"", &longest);
		if (injections > 0 || isnan(lost) || isnan(longest))
			continue;
		if (!cur || strcmp(cur->host, host) != 0) {
			sv.nodes = grow(sv.nodes, &sv.cap_nodes, sv.nnodes, sizeof(*sv.nodes));
			cur = &sv.nodes[sv.nnodes++];
			*cur = (struct node_run){ .run = run, .selfish = sv.run_selfish[run] };
			snprintf(cur->host, sizeof(cur->host), "%s", host);
		}
		cur->lost_percent = fmax(cur->lost_percent, lost);
		cur->longest_us = fmax(cur->longest_us, longest);
		cur->cpus++;
	}
	free(line);
	fclose(f);
}

static int pass;

/* a survey without any loss still gets limits a check can be held to:
 * below these a 5-s check sees its own timer and start-up */
#define MIN_LOST_PERCENT 0.01
#define MIN_DETOUR_US 10

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char prefix[4096];
	int node_file, run;
	size_t n = strlen(path);

	(void)st, (void)ftw;
	if (flag != FTW_F || n < 6 || strcmp(path + n - 5, ".json") != 0)
		return 0;
	run_prefix(path, prefix, sizeof(prefix), &node_file);
	if (pass == 1 && !node_file)
		read_run_head(path, prefix);
	else if (pass == 2 && (run = find_run(prefix)) >= 0 && sv.run_kept[run])
		read_rank_lines(path, run);
	return 0;
}

static int by_run_host(const void *a, const void *b)
{
	const struct host_kind *x = a, *y = b;

	return x->run != y->run ? (x->run > y->run) - (x->run < y->run) : strcmp(x->host, y->host);
}

/* The host's kind in its run (sv.hosts sorted by_run_host). */
static const char *kind_of(const struct node_run *x)
{
	struct host_kind key = { .run = x->run };
	const struct host_kind *h;

	snprintf(key.host, sizeof(key.host), "%s", x->host);
	h = bsearch(&key, sv.hosts, sv.nhosts, sizeof(key), by_run_host);
	return h ? h->kind : "";
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest rank, as the kernels' tails: the smallest value with at least
 * that share at or below it. */
static double percentile(double *v, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	qsort(v, n, sizeof(*v), by_value);
	return v[k ? k - 1 : 0];
}

void limits_from_survey(const char *dir, double margin, FILE *out)
{
	struct nb_machine m;
	char kind[300];

	nb_machine_describe(&m);
	snprintf(kind, sizeof(kind), "%s, %d CPUs", m.cpu_model, m.cpus_online);
	for (pass = 1; pass <= 2; pass++) {
		if (nftw(dir, visit, 32, FTW_PHYS) != 0)
			nb_fail(NB_EXIT_USAGE, "--limits-from %s: %s", dir, strerror(errno));
		if (pass == 1 && sv.nhosts)
			qsort(sv.hosts, sv.nhosts, sizeof(*sv.hosts), by_run_host);
	}
	int selfish = 0;
	size_t alike = 0, runs = 0, cpus = 0;

	for (size_t i = 0; i < sv.nnodes; i++)
		selfish |= sv.nodes[i].selfish && strcmp(kind_of(&sv.nodes[i]), kind) == 0;
	double *lost = malloc((sv.nnodes + 1) * sizeof(*lost));
	double *longest = malloc((sv.nnodes + 1) * sizeof(*longest));
	char *seen = calloc((size_t)sv.nruns + 1, 1);

	if (!lost || !longest || !seen)
		nb_fail(NB_EXIT_USAGE, "--limits-from: out of memory");
	for (size_t i = 0; i < sv.nnodes; i++) {
		const struct node_run *x = &sv.nodes[i];

		if (x->selfish != selfish || strcmp(kind_of(x), kind) != 0)
			continue;
		lost[alike] = x->lost_percent;
		longest[alike++] = x->longest_us;
		cpus += (size_t)x->cpus;
		runs += !seen[x->run];
		seen[x->run] = 1;
	}
	if (!alike) {
		const char *other = sv.nnodes ? kind_of(&sv.nodes[0]) : NULL;

		nb_fail(NB_EXIT_USAGE, "--limits-from %s: no complete run measured a node like this "
			"one (%s)%s%s%s", dir, kind, other ? "; it has nodes of " : "",
			other ? other : "", other ? "" : " without injected noise");
	}
	fprintf(out,
		"# noise-check requirements for nodes of %s, from noise-check --limits-from %s:\n"
		"# each node's worst CPU in each of %zu run(s) of %s (%zu node run(s), %zu CPU\n"
		"# measurements), the 99th percentile over those node runs, times %g\n"
		"stolen_percent <= %.3g\nmax_loss_us <= %.0f\n",
		kind, dir, runs, selfish ? "the selfish detour" : "the kernels (no selfish run)",
		alike, cpus, margin,
		fmin(100, fmax(MIN_LOST_PERCENT, margin * percentile(lost, alike, 0.99))),
		fmax(MIN_DETOUR_US, ceil(margin * percentile(longest, alike, 0.99))));
	free(lost);
	free(longest);
	free(seen);
}
