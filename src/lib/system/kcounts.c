#define _GNU_SOURCE
#include "kcounts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The name of a line: "<irq>:<device>" for a numbered interrupt (its last
 * word, as /proc/interrupts ends the line with the device), else the label
 * ("LOC", "TIMER"). */
static void line_name(const char *label, const char *rest, char *out)
{
	const char *last = NULL, *p = rest;

	if (!isdigit((unsigned char)label[0])) {
		snprintf(out, NB_KCOUNT_NAME, "%s", label);
		return;
	}
	while (*p) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p)
			last = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
	}
	if (!last) {
		snprintf(out, NB_KCOUNT_NAME, "%s", label);
		return;
	}
	int n = 0;

	while (last[n] && !isspace((unsigned char)last[n]))
		n++;
	snprintf(out, NB_KCOUNT_NAME, "%.12s:%.*s", label, n > 26 ? 26 : n, last);
}

/* Reads /proc/interrupts or /proc/softirqs: a header of CPU columns, then
 * "LABEL: count count ... [description]" lines (some with one count). */
static void read_table(const char *path, struct nb_kcount_table *t)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t size = 0;
	int cap = 0;

	memset(t, 0, sizeof(*t));
	if (!f)
		return;
	if (getline(&line, &size, f) > 0) {
		for (char *p = strstr(line, "CPU"); p; p = strstr(p + 3, "CPU"))
			t->columns++;
		t->cpu = calloc(t->columns ? t->columns : 1, sizeof(*t->cpu));
		int c = 0;

		for (char *p = strstr(line, "CPU"); p && t->cpu; p = strstr(p + 3, "CPU"))
			t->cpu[c++] = atoi(p + 3);
	}
	while (t->cpu && getline(&line, &size, f) > 0) {
		char *colon = strchr(line, ':'), *p, *label = line;

		if (!colon)
			continue;
		*colon = '\0';
		while (isspace((unsigned char)*label))
			label++;
		if (t->rows == cap) {
			int grown = cap ? 2 * cap : 64;
			void *n = realloc(t->name, (size_t)grown * sizeof(*t->name));
			void *v = n ? realloc(t->count, (size_t)grown * t->columns * sizeof(*t->count))
				    : NULL;

			if (n)
				t->name = n;
			if (!v)
				break;
			t->count = v;
			cap = grown;
		}
		uint64_t *row = t->count + (size_t)t->rows * t->columns;

		p = colon + 1;
		for (int c = 0; c < t->columns; c++) {
			char *end;

			row[c] = strtoull(p, &end, 10);
			if (end == p) { /* fewer counts than CPUs (ERR, MIS) */
				for (; c < t->columns; c++)
					row[c] = 0;
				break;
			}
			p = end;
		}
		line_name(label, p, t->name[t->rows]);
		t->rows++;
	}
	free(line);
	fclose(f);
}

static void free_table(struct nb_kcount_table *t)
{
	free(t->cpu);
	free(t->name);
	free(t->count);
	memset(t, 0, sizeof(*t));
}

void nb_kcounts_before(struct nb_kcounts *k)
{
	memset(k, 0, sizeof(*k));
	read_table("/proc/interrupts", &k->irq[0]);
	read_table("/proc/softirqs", &k->softirq[0]);
	k->read = 1;
}

void nb_kcounts_after(struct nb_kcounts *k)
{
	if (k->read != 1)
		return;
	read_table("/proc/interrupts", &k->irq[1]);
	read_table("/proc/softirqs", &k->softirq[1]);
	k->read = 2;
}

void nb_kcounts_free(struct nb_kcounts *k)
{
	for (int i = 0; i < 2; i++) {
		free_table(&k->irq[i]);
		free_table(&k->softirq[i]);
	}
	k->read = 0;
}

void nb_thread_switches(int tid, int64_t out[2])
{
	char path[64], line[128];
	FILE *f;

	out[0] = out[1] = -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		long long v;

		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1)
			out[0] = v;
		else if (sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1)
			out[1] = v;
	}
	fclose(f);
}

static int column_of(const struct nb_kcount_table *t, int cpu)
{
	for (int c = 0; c < t->columns; c++)
		if (t->cpu[c] == cpu)
			return c;
	return -1;
}

/* Adds each line's increase on `cpu` to the summary's total and top list. */
static void deltas(const struct nb_kcount_table *before, const struct nb_kcount_table *after,
		   int cpu, const char *kind, uint64_t *total, struct nb_kcount_summary *s)
{
	int cb = column_of(before, cpu), ca = column_of(after, cpu);

	if (cb < 0 || ca < 0)
		return;
	for (int r = 0; r < after->rows; r++) {
		uint64_t was = 0, now = after->count[(size_t)r * after->columns + ca], d;
		int i;

		/* lines can come and go (a device's interrupt set up mid-run) */
		for (int b = 0; b < before->rows; b++)
			if (strcmp(before->name[b], after->name[r]) == 0) {
				was = before->count[(size_t)b * before->columns + cb];
				break;
			}
		d = now > was ? now - was : 0;
		*total += d;
		if (!d)
			continue;
		if (s->ntop < NB_KCOUNT_TOP)
			i = s->ntop++;
		else if (s->top[NB_KCOUNT_TOP - 1].count < d)
			i = NB_KCOUNT_TOP - 1;
		else
			continue;
		snprintf(s->top[i].name, sizeof(s->top[i].name), "%s:%s", kind, after->name[r]);
		s->top[i].count = d;
		for (; i > 0 && s->top[i].count > s->top[i - 1].count; i--) {
			__typeof__(s->top[0]) swap = s->top[i];

			s->top[i] = s->top[i - 1];
			s->top[i - 1] = swap;
		}
	}
}

void nb_kcounts_summary(const struct nb_kcounts *k, int cpu, const int64_t before[2],
			const int64_t after[2], struct nb_kcount_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->voluntary = before[0] >= 0 && after[0] >= 0 ? after[0] - before[0] : -1;
	s->involuntary = before[1] >= 0 && after[1] >= 0 ? after[1] - before[1] : -1;
	if (k->read != 2 || cpu < 0)
		return;
	s->known = 1;
	deltas(&k->irq[0], &k->irq[1], cpu, "irq", &s->interrupts, s);
	deltas(&k->softirq[0], &k->softirq[1], cpu, "softirq", &s->softirqs, s);
}

void nb_kcounts_json(struct nb_json *j, const struct nb_kcount_summary *s)
{
	nb_json_object(j, "kernel_counts");
	if (s->voluntary >= 0)
		nb_json_int(j, "voluntary_switches", s->voluntary);
	else
		nb_json_null(j, "voluntary_switches");
	if (s->involuntary >= 0)
		nb_json_int(j, "involuntary_switches", s->involuntary);
	else
		nb_json_null(j, "involuntary_switches");
	if (s->known) {
		nb_json_uint(j, "interrupts", s->interrupts);
		nb_json_uint(j, "softirqs", s->softirqs);
		nb_json_object(j, "top");
		for (int i = 0; i < s->ntop; i++)
			nb_json_uint(j, s->top[i].name, s->top[i].count);
		nb_json_end(j, '}');
	}
	nb_json_end(j, '}');
}
