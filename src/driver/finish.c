/* The finish of a run, complete or interrupted: each participant's record,
 * its causes, the kernel's summaries and reductions, the rank lines and the
 * ranks line on stdout, the run's JSON (or its node files) and the metrics. */
#define _GNU_SOURCE
#include "driver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "figures.h"
#include "metrics.h"
#include "node_data.h"
#include "ranks_table.h"
#include "requirements.h"
#include "samples.h"
#include "timer.h"

static size_t taken(struct nb_run *r, int local, int signo)
{
	if (!signo)
		return r->samples;
	return nb_samples_taken(r->ranks.local[local].samples, r->samples, r->k->sample_size,
				r->k->done_word);
}

static void participant(struct nb_run *r, int local, uint64_t samples, struct nb_participant *p)
{
	struct nb_thread *t = &r->ranks.local[local];
	int64_t before[2], after[2];

	*p = (struct nb_participant){
		.rank = t->index,
		.cpu = t->cpu,
		.ticks_per_ns = r->cal.ticks_per_ns,
		.timer_read_ticks = r->cal.timer_read_ticks,
		.samples = samples,
		.start_tick = t->start_tick,
		.end_tick = t->end_tick,
		.inject_period_us = r->inject.period_us,
		.inject_duration_us = r->inject.duration_us,
		.inject_poisson = r->inject.poisson,
		.injections = t->injections.served,
		.injections_missed = t->injections.missed,
		.injections_logged = __atomic_load_n(&t->injections.logged, __ATOMIC_ACQUIRE),
		.steal_ms = nb_team_steal_ms(t),
	};
	snprintf(p->host, sizeof(p->host), "%.63s", r->ranks.host);
	p->data_node = r->d->data_by_node ? r->ranks.node : -1;
	p->inject_node = r->d->node_injections.ranges ? r->ranks.node : -1;
	p->causes_node = r->d->node_causes.ranges ? r->ranks.node : -1;
	if (p->data_node >= 0)
		memcpy(p->data_ranges, r->d->node_data.ranges + (size_t)local * r->k->nfiles,
		       r->k->nfiles * sizeof(*p->data_ranges));
	if (p->inject_node >= 0)
		memcpy(p->inject_range, r->d->node_injections.ranges[local], sizeof(p->inject_range));
	nb_cpu_place(t->cpu, &p->place);
	nb_kcounts_after(&r->d->kcounts);
	nb_team_switches(t, before, after);
	nb_kcounts_summary(&r->d->kcounts, t->cpu, before, after, &p->kcounts);
}

/* --trace: joins a local participant's detours (in time order) to what the
 * trace saw on its CPU, writes its causes into f (name: f's, for errors) and
 * fills *tot; 0 when nothing could be attributed. */
static int attribute(struct nb_run *r, int local, size_t n, FILE *f, const char *name,
		     struct nb_cause_totals *tot)
{
	struct nb_cause_detour *d = NULL;
	size_t nd;

	memset(tot, 0, sizeof(*tot));
	if (!r->d->trace.started || !r->d->results->detours)
		return 0;
	if (!r->d->trace.read &&
	    nb_trace_read(&r->d->trace, r->cal.ticks_per_ns, r->d->info.start.ticks,
			  r->d->info.start.raw_ns) != 0) {
		nb_warn("--trace: detours not attributed: %s", r->d->trace.why);
		r->d->trace.started = 0;
		return 0;
	}
	nd = r->d->results->detours(r, local, n, &d);
	nb_causes_attribute(&r->d->trace, r->ranks.local, r->ranks.nlocal, local, d, nd,
			    r->cal.ticks_per_ns, f, name, tot);
	free(d);
	return 1;
}

struct node_causes {
	const size_t *n;
	char *mine;
};

static int write_node_causes(struct nb_run *r, FILE **files, void *arg)
{
	const struct node_causes *a = arg;
	int attributed = 0;

	for (int i = 0; i < r->ranks.nlocal; i++)
		attributed += attribute(r, i, a->n[i], files[i], r->prefix,
					&nb_driver_participant_at(r, a->mine, i)->causes);
	return attributed;
}

/* --trace: every local participant's causes, in its node's file or its own. */
static void attribute_all(struct nb_run *r, const size_t *n, char *mine)
{
	if (r->d->node_causes.ranges) {
		struct node_causes a = { n, mine };

		/* the trace is read, and the detours joined, once to count the
		 * bytes and once to write them */
		nb_node_set_write(r, &r->d->node_causes, write_node_causes, &a);
		for (int i = 0; i < r->ranks.nlocal; i++)
			memcpy(nb_driver_participant_at(r, mine, i)->causes_range, r->d->node_causes.ranges[i],
			       sizeof(r->d->node_causes.ranges[i]));
		return;
	}
	for (int i = 0; i < r->ranks.nlocal; i++) {
		struct nb_outfile *o = r->d->cause_files[i];

		r->d->cause_files[i] = NULL;
		if (attribute(r, i, n[i], o ? o->f : NULL, o ? o->tmp : NULL,
			      &nb_driver_participant_at(r, mine, i)->causes) && o)
			nb_outfile_commit_or_fail(o);
		else if (o)
			nb_outfile_discard(o);
	}
}

/* A rank's result record, one line, the same grammar for every kernel (the
 * catalogue's rank_line): "rank kernel=K rank=N host=H cpu=C", then the
 * kernel's key=value figures, the injections and the causes. */
static void rank_line(const struct nb_run *r, const void *record, FILE *out)
{
	const struct nb_participant *p = record;

	fprintf(out, "rank kernel=%s rank=%d host=%s cpu=%d", r->k->name, p->rank, p->host,
		p->cpu);
	r->d->results->print(r, record, out);
	if (p->tails.measured)
		nb_tails_print(&p->tails, out);
	fprintf(out, " injections=%llu", (unsigned long long)p->injections);
	if (p->inject_duration_us)
		fprintf(out, " injections_missed=%llu", (unsigned long long)p->injections_missed);
	/* with --trace, whether this rank's detours were attributed: the ranks
	 * line's traced_min says whether every rank's were */
	if (r->trace_opt)
		fprintf(out, " traced=%d", p->causes.attributed ? 1 : 0);
	nb_causes_print(&p->causes, p->ticks_per_ns, out);
}

/* the rank line's prefix, which says which rank, not how it measured */
static const char *const rank_line_prefix[] = { "kernel", "rank", "host", "cpu", NULL };

/* A rank's line as text, to free: its figures, then with verdict set the
 * requirements' verdict on them and the newline. */
static char *rank_line_text(const struct nb_run *r, const void *record, int verdict)
{
	char *line = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&line, &size);

	if (!f)
		nb_fail(NB_EXIT_FAILURE, "out of memory for a result line");
	rank_line(r, record, f);
	if (fflush(f))
		nb_fail(NB_EXIT_FAILURE, "out of memory for a result line");
	if (verdict) {
		int unmet, judged = nb_requirements_judge(&r->d->requirements, line, NULL, &unmet);

		/* a line no rule speaks of has no verdict, rather than a pass */
		if (judged)
			fprintf(f, " rules_judged=%d rules_unmet=%d", judged, unmet);
		fputc('\n', f);
	}
	if (fclose(f))
		nb_fail(NB_EXIT_FAILURE, "out of memory for a result line");
	return line;
}

/* The requirements' verdict on a rank's figures in its entry: how many rules
 * applied, how many were not met, and which. */
static void json_verdict(const struct nb_run *r, struct nb_json *j, const void *record)
{
	const struct nb_requirements *q = &r->d->requirements;
	char *line = rank_line_text(r, record, 0), text[NB_RULES_MAX * NB_RULE_TEXT] = "";
	unsigned char unmet[NB_RULES_MAX];
	int nunmet, judged = nb_requirements_judge(q, line, unmet, &nunmet);

	free(line);
	if (!judged)
		return;
	/* one string, "rule; rule", so that a node's table has one column */
	for (int i = 0; i < q->n; i++) {
		size_t used = strlen(text);

		if (!unmet[i])
			continue;
		if (used)
			used += (size_t)snprintf(text + used, sizeof(text) - used, "; ");
		nb_rule_format(&q->rule[i], text + used, sizeof(text) - used);
	}
	nb_json_object(j, "requirements");
	nb_json_int(j, "judged", judged);
	nb_json_int(j, "unmet", nunmet);
	nb_json_string(j, "unmet_rules", text);
	nb_json_end(j, '}');
}

/* A rank's line into the figures of the run's "ranks" line; its text, to
 * free, in *text when text is not NULL. */
static void add_rank_line(const struct nb_run *r, const void *record, struct nb_figures *fs,
			  char **text)
{
	char *line = rank_line_text(r, record, 1);

	nb_figures_add_line(fs, line, rank_line_prefix);
	if (text)
		*text = line;
	else
		free(line);
}

/* The rules the ranks were judged by, and where they came from. */
static void json_requirements(struct nb_json *j, const struct nb_requirements *q)
{
	char text[NB_RULE_TEXT];

	nb_json_object(j, "requirements");
	nb_json_string(j, "source", q->source);
	nb_json_array(j, "rules");
	for (int i = 0; i < q->n; i++) {
		nb_rule_format(&q->rule[i], text, sizeof(text));
		nb_json_string(j, NULL, text);
	}
	nb_json_end(j, ']');
	nb_json_end(j, '}');
}

static void json_head(struct nb_run *r, struct nb_json *j, int signo)
{
	clock_gettime(CLOCK_REALTIME, &r->d->info.end_utc);
	r->d->info.end = nb_clock_pair_read();
	nb_tuning_after(&r->d->tuning, &r->d->machine, r->ranks.cpus, r->ranks.nlocal);
	r->d->info.signo = signo;
	nb_json_open(j, r->d->json->f);
	nb_json_run_head(j, &r->d->info);
	nb_json_int(j, "ranks_in_run", r->ranks.size);
	if (r->d->nhousekeeping) {
		nb_json_array(j, "housekeeping_cpus");
		for (int i = 0; i < r->d->nhousekeeping; i++)
			nb_json_int(j, NULL, r->d->housekeeping[i]);
		nb_json_end(j, ']');
	}
	if (r->k->has_work) {
		nb_json_string(j, "work", r->work->name);
		if (strcmp(r->work->name, "daxpy") == 0)
			nb_json_uint(j, "daxpy_len", r->daxpy_len);
	}
	if (r->k->default_samples)
		nb_json_uint(j, "samples_requested", r->samples);
	nb_json_uint(j, "start_tick", r->d->team.start_tick);
	nb_trace_json(j, &r->d->trace);
	nb_tuning_json(j, &r->d->tuning);
	json_requirements(j, &r->d->requirements);
	/* one description per host: MPI runs span nodes */
	nb_json_array(j, "machines");
	for (int h = 0; h < r->d->nhosts; h++)
		nb_machine_json(&r->d->machines[h], j, NULL);
	nb_json_end(j, ']');
}

static void json_participant(struct nb_run *r, struct nb_json *j, const struct nb_participant *p)
{
	char name[4096];

	nb_json_object(j, NULL);
	nb_json_int(j, "rank", p->rank);
	nb_json_string(j, "host", p->host);
	nb_json_int(j, "cpu", p->cpu);
	nb_cpu_place_json(j, &p->place);
	nb_json_uint(j, "samples", p->samples);
	nb_json_double(j, "ticks_per_ns", p->ticks_per_ns);
	nb_json_double(j, "timer_read_ticks", p->timer_read_ticks);
	nb_json_array(j, "files");
	for (int f = 0; f < r->k->nfiles && !r->to_stdout && !r->stream.on; f++) {
		nb_driver_participant_file(r, p->rank, p->data_node, r->k->suffixes[f], name, sizeof(name));
		nb_json_string(j, NULL, name);
	}
	nb_json_end(j, ']');
	if (p->data_node >= 0) {
		nb_json_array(j, "file_ranges");
		for (int f = 0; f < r->k->nfiles; f++)
			nb_json_range(j, NULL, p->data_ranges[f]);
		nb_json_end(j, ']');
	}
	nb_json_uint(j, "start_tick", p->start_tick);
	nb_json_uint(j, "end_tick", p->end_tick);
	nb_json_uint(j, "injections", p->injections);
	nb_json_uint(j, "injections_missed", p->injections_missed);
	nb_json_uint(j, "injections_logged", p->injections_logged);
	nb_json_double(j, "steal_ms", p->steal_ms);
	nb_kcounts_json(j, &p->kcounts);
	/* ranks of one MPMD job (srun --multi-prog) may be given different ones */
	if (p->inject_duration_us) {
		nb_json_object(j, "inject");
		nb_json_uint(j, "period_us", p->inject_period_us);
		nb_json_uint(j, "duration_us", p->inject_duration_us);
		nb_json_string(j, "pattern", p->inject_poisson ? "poisson" : "periodic");
		nb_json_end(j, '}');
	}
	if (p->inject_duration_us && !r->to_stdout) {
		nb_driver_participant_file(r, p->rank, p->inject_node, NB_INJECTIONS_SUFFIX, name, sizeof(name));
		nb_json_string(j, "injections_file", name);
		if (p->inject_node >= 0)
			nb_json_range(j, "injections_file_range", p->inject_range);
	}
	if (r->trace_opt) {
		nb_driver_participant_file(r, p->rank, p->causes_node, NB_CAUSES_SUFFIX, name, sizeof(name));
		nb_causes_json(j, &p->causes, p->ticks_per_ns, r->to_stdout ? NULL : name,
			       p->causes_node >= 0 ? p->causes_range : NULL);
	}
}

static void json_tail(struct nb_run *r, struct nb_json *j, int n, uint64_t samples)
{
	char path[4096];

	nb_json_run_tail(j, &r->d->info);
	snprintf(path, sizeof(path), "%s", r->d->json->path);
	nb_outfile_commit_or_fail(r->d->json);
	printf("run kernel=%s complete=%s ranks=%d samples=%llu json=%s\n", r->k->name,
	       r->d->info.signo ? "false" : "true", n, (unsigned long long)samples, path);
}

/* Every participant's loss histogram summed where the participants are: the
 * whole run's distribution of the loss, in fixed memory whatever the ranks. */
struct run_loss {
	struct nb_loss_histogram sum;
	double seconds, measured;
};

static void reduce_loss(struct nb_run *r, const char *mine, int signo, struct run_loss *l)
{
	const struct nb_results *h = r->d->results;
	double figures[2];

	memset(l, 0, sizeof(*l));
	for (int i = 0; i < r->ranks.nlocal; i++) {
		const struct nb_participant *p = (const void *)(mine + (size_t)i * h->size);

		if (!p->tails.measured)
			continue;
		nb_loss_histogram_add(&l->sum, &p->tails.histogram);
		l->seconds += p->tails.seconds;
		l->measured++;
	}
	nb_run_sum_u64(r, l->sum.samples, NB_LOSS_BUCKETS, signo);
	nb_run_sum(r, l->sum.lost_ns, NB_LOSS_BUCKETS, signo);
	figures[0] = l->seconds;
	figures[1] = l->measured;
	nb_run_sum(r, figures, 2, signo);
	l->seconds = figures[0];
	l->measured = figures[1];
}

static void json_loss_histogram(struct nb_json *j, const struct run_loss *l)
{
	if (!l->measured)
		return;
	nb_json_object(j, "loss_histogram");
	nb_json_int(j, "participants", (int)l->measured);
	nb_json_double(j, "seconds", l->seconds);
	nb_loss_edges_json(j, "edges_ns");
	nb_loss_histogram_json(j, &l->sum);
	nb_json_end(j, '}');
}

/* The root's report, written as the records arrive (nb_ranks_each). */
struct report {
	struct nb_run *r;
	struct nb_json j;
	uint64_t samples;
	struct nb_figures figures; /* of every rank's line, on the root */
};

/* What a node sends the root with node_files instead of its records. */
struct node_summary {
	uint64_t samples, lines, n;
	struct nb_figure figures[];
};

/* A participant's entry in the run's description: in PREFIX.json's "ranks",
 * or with node_files in its node's file. */
static void json_rank_entry(struct nb_run *r, struct nb_json *j, const struct nb_participant *p)
{
	const struct nb_results *h = r->d->results;

	json_participant(r, j, p);
	if (h->json_rank)
		h->json_rank(r, j, p);
	json_verdict(r, j, p);
	if (p->tails.measured)
		nb_tails_json(j, &p->tails);
	if (p->stretches.width_s > 0)
		nb_stretches_json(j, &p->stretches);
	nb_json_end(j, '}');
}

static void report_rank(const void *x, void *arg)
{
	struct report *rep = arg;
	struct nb_run *r = rep->r;
	const struct nb_participant *p = x;
	char *line;

	add_rank_line(r, p, &rep->figures, &line);
	fputs(line, stdout);
	free(line);
	rep->samples += p->samples;
	if (!r->d->node_files)
		json_rank_entry(r, &rep->j, p);
}

struct node_records {
	struct nb_run *r;
	const char *records;
};

static void table_entry(void *arg, int i, struct nb_json *j)
{
	const struct node_records *a = arg;

	json_rank_entry(a->r, j, (const void *)(a->records + (size_t)i * a->r->d->results->size));
}

/* With node_files, on each node's first rank, every node at once: the
 * node's entries in its own file, {"node": K, "host": H, "ranks": [...]},
 * the same as a table of a row a rank beside it, and what the root is sent
 * instead of them: the figures of their lines and their samples. */
static void *report_node(const void *records, int n, void *arg, size_t *bytes)
{
	struct report *rep = arg;
	struct nb_run *r = rep->r;
	struct nb_outfile *o = r->d->node_json;
	struct nb_figures fs = { 0 };
	struct node_summary *sum;
	uint64_t samples = 0;
	struct nb_json j;

	nb_json_open(&j, o->f);
	nb_json_object(&j, NULL);
	nb_json_int(&j, "node", r->ranks.node);
	nb_json_string(&j, "host", r->ranks.host);
	nb_json_array(&j, "ranks");
	nb_json_lines(&j);
	for (int i = 0; i < n; i++)
		json_rank_entry(r, &j, (const void *)((const char *)records +
						      (size_t)i * r->d->results->size));
	nb_json_end(&j, ']');
	nb_json_end(&j, '}');
	r->d->node_json = NULL;
	nb_outfile_commit_or_fail(o);
	o = r->d->node_table;
	nb_ranks_table_write(o->f, n, table_entry,
			     &(struct node_records){ .r = r, .records = records });
	r->d->node_table = NULL;
	nb_outfile_commit_or_fail(o);
	for (int i = 0; i < n; i++) {
		const struct nb_participant *p =
			(const void *)((const char *)records + (size_t)i * r->d->results->size);

		add_rank_line(r, p, &fs, NULL);
		samples += p->samples;
	}
	*bytes = sizeof(*sum) + fs.n * sizeof(*fs.f);
	sum = malloc(*bytes);
	if (!sum)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the node's figures");
	*sum = (struct node_summary){ .samples = samples, .lines = fs.lines, .n = fs.n };
	if (fs.n)
		memcpy(sum->figures, fs.f, fs.n * sizeof(*fs.f));
	nb_figures_free(&fs);
	return sum;
}

/* On the root, with node_files: a node's summary, in node order */
static void report_node_summary(const void *x, size_t bytes, void *arg)
{
	struct report *rep = arg;
	const struct node_summary *sum = x;

	if (bytes < sizeof(*sum) || bytes != sizeof(*sum) + sum->n * sizeof(*sum->figures))
		nb_fail(NB_EXIT_FAILURE, "a node's summary of %zu bytes is not whole", bytes);
	rep->samples += sum->samples;
	nb_figures_merge(&rep->figures, sum->figures, sum->n, sum->lines);
}

static void report_head(struct nb_run *r, struct report *rep, const struct run_loss *l, int n,
			int signo)
{
	const struct nb_results *h = r->d->results;
	char name[4096];

	if (h->print_head)
		h->print_head(r, n);
	json_head(r, &rep->j, signo);
	if (r->k->json_options)
		r->k->json_options(r, &rep->j);
	if (h->json_run)
		h->json_run(r, &rep->j, n);
	json_loss_histogram(&rep->j, l);
	if (r->d->node_files) {
		/* by node, as "machines" */
		nb_json_array(&rep->j, "node_files");
		for (int k = 0; k < r->d->nhosts; k++) {
			nb_driver_node_file_name(r, k, name, sizeof(name), 1);
			nb_json_string(&rep->j, NULL, name);
		}
		nb_json_end(&rep->j, ']');
		nb_json_array(&rep->j, "ranks_files");
		for (int k = 0; k < r->d->nhosts; k++) {
			nb_node_file_name(r, k, NB_NODE_RANKS_SUFFIX, name, sizeof(name), 1);
			nb_json_string(&rep->j, NULL, name);
		}
		nb_json_end(&rep->j, ']');
		return;
	}
	nb_json_array(&rep->j, "ranks");
	nb_json_lines(&rep->j);
}

static void report_tail(struct nb_run *r, struct report *rep, int n)
{
	const struct nb_results *h = r->d->results;

	if (!r->d->node_files)
		nb_json_end(&rep->j, ']');
	/* every rank line's figures in one line, with or without the lines */
	printf("ranks kernel=%s ranks=%d", r->k->name, n);
	nb_figures_print(&rep->figures, stdout);
	putchar('\n');
	nb_figures_free(&rep->figures);
	if (h->print_run)
		h->print_run(r, n);
	if (r->d->info.signo && r->ranks.nlocal < r->ranks.size)
		printf("interrupted: this report covers the %d rank(s) of the root process only; every "
		       "rank wrote its own data files\n", r->ranks.nlocal);
	json_tail(r, &rep->j, n, rep->samples);
}

/* How long the longest of the local participants measured; of every
 * participant of the run when signo is 0. */
static double longest_measurement_s(struct nb_run *r, const char *mine, int signo)
{
	const struct nb_results *h = r->d->results;
	uint64_t now = nb_ticks();
	double longest = 0;

	for (int i = 0; i < r->ranks.nlocal; i++) {
		const struct nb_participant *p = (const void *)(mine + i * h->size);
		uint64_t end = p->end_tick ? p->end_tick : now;

		if (end > p->start_tick && p->ticks_per_ns > 0)
			longest = fmax(longest, (double)(end - p->start_tick) / p->ticks_per_ns / 1e9);
	}
	return signo ? longest : nb_ranks_max(&r->ranks, longest);
}

/* With --metrics, on each node's first rank, every node at once: the
 * node's rank lines as a node_exporter textfile. What travels to the root
 * is a byte a node (nb_ranks_nodes wants a summary), no figure. */
static void *write_node_metrics(const void *records, int n, void *arg, size_t *bytes)
{
	struct nb_run *r = arg;
	char **lines = calloc((size_t)n + 1, sizeof(*lines));
	FILE *f = r->d->metrics->f;

	if (!lines)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the node's metrics");
	for (int i = 0; i < n; i++)
		lines[i] = rank_line_text(r, (const char *)records + (size_t)i * r->d->results->size,
					  1);
	nb_metrics_info(f, &r->d->machine);
	nb_metrics_rank_lines(f, lines, n, NULL);
	for (int i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	nb_outfile_commit_or_fail(r->d->metrics);
	r->d->metrics = NULL;
	*bytes = 1;
	return calloc(1, 1);
}

/* the root's side of it: nothing to do */
static void metrics_written(const void *summary, size_t bytes, void *arg)
{
	(void)summary, (void)bytes, (void)arg;
}

/* The one finish sequence. Complete: every rank writes its files, summarises
 * its participants, takes part in the kernel's collectives and reductions,
 * and the root reports, receiving the records node by node. Interrupted: no
 * collective is safe any more; each process writes what its participants
 * measured and the root reports on its own. */
void nb_driver_finish(struct nb_run *r, int signo)
{
	const struct nb_results *h = r->d->results;
	struct nb_ranks *rk = &r->ranks;
	char *mine = calloc(rk->nlocal, h->size);
	size_t *n = calloc(rk->nlocal, sizeof(*n));
	int nall = signo ? rk->nlocal : rk->size;
	struct run_loss loss;
	struct report rep = { .r = r };

	if (!mine || !n)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the results");
	r->d->info.signo = signo;
	if (r->stream.on)
		r->d->writer_cpu = nb_stream_writer_finish(r->d->writer, signo == 0,
							   &r->d->writer_cpu_ms);
	for (int i = 0; i < rk->nlocal; i++)
		n[i] = h->taken ? h->taken(r, i, signo) : taken(r, i, signo);
	nb_driver_write_data(r, n, signo);
	for (int i = 0; i < rk->nlocal; i++)
		participant(r, i, n[i], (struct nb_participant *)(mine + i * h->size));
	nb_driver_commit_files(r, mine);
	if (h->exchange)
		h->exchange(r, n, signo);
	r->measured_s = longest_measurement_s(r, mine, signo);
	/* The samples are on disk: summarise may now reorder them, once their
	 * order has been read for the causes. */
	if (r->trace_opt)
		attribute_all(r, n, mine);
	for (int i = 0; i < rk->nlocal; i++)
		h->summarise(r, i, n[i], nb_driver_participant_at(r, mine, i));
	if (h->reduce)
		h->reduce(r, mine, rk->nlocal, signo);
	reduce_loss(r, mine, signo, &loss);
	/* interrupted, the root describes its own participants alone */
	if (signo && r->d->node_json) {
		nb_outfile_discard(r->d->node_json);
		r->d->node_json = NULL;
		nb_outfile_discard(r->d->node_table);
		r->d->node_table = NULL;
	}
	r->d->node_files = r->d->node_files && !signo;
	if (rk->root)
		report_head(r, &rep, &loss, nall, signo);
	if (!signo && r->d->node_files)
		nb_ranks_nodes(rk, mine, h->size, report_node, report_node_summary, &rep);
	else if (!signo)
		nb_ranks_each(rk, mine, h->size, report_rank, &rep);
	else if (rk->root)
		for (int i = 0; i < rk->nlocal; i++)
			report_rank(mine + i * h->size, &rep);
	if (rk->root)
		report_tail(r, &rep, nall);
	/* an interrupted run's figures are not the node's: no file then */
	if (!signo && r->d->metrics_opt)
		nb_ranks_nodes(rk, mine, h->size, write_node_metrics, metrics_written, r);
	else if (r->d->metrics) {
		nb_outfile_discard(r->d->metrics);
		r->d->metrics = NULL;
	}
	fflush(stdout);
	free(n);
	free(mine);
}
