/* The run's description, PREFIX.json: its head (the run, the machines, the
 * rules), a participant's entry, the loss histogram, its tail. */
#define _GNU_SOURCE
#include "driver.h"

#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "requirements.h"

/* The requirements' verdict on a rank's figures in its entry: how many rules
 * applied, how many were not met, and which. */
static void json_verdict(const struct nb_run *r, struct nb_json *j, const void *record)
{
	const struct nb_requirements *q = &r->d->requirements;
	char *line = nb_driver_rank_line_text(r, record, 0), text[NB_RULES_MAX * NB_RULE_TEXT] = "";
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

void nb_driver_json_head(struct nb_run *r, struct nb_json *j, int signo)
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

void nb_driver_json_tail(struct nb_run *r, struct nb_json *j, int n, uint64_t samples)
{
	char path[4096];

	nb_json_run_tail(j, &r->d->info);
	snprintf(path, sizeof(path), "%s", r->d->json->path);
	nb_outfile_commit_or_fail(r->d->json);
	/* rules=: which rules judged the ranks, for JUBE's and ReFrame's tables */
	printf("run kernel=%s complete=%s ranks=%d samples=%llu json=%s rules=%s\n", r->k->name,
	       r->d->info.signo ? "false" : "true", n, (unsigned long long)samples, path,
	       r->d->requirements.source);
}

void nb_driver_json_loss_histogram(struct nb_json *j, const struct nb_run_loss *l)
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

/* A participant's entry in the run's description: in PREFIX.json's "ranks",
 * or with node_files in its node's file. */
void nb_driver_json_rank_entry(struct nb_run *r, struct nb_json *j, const struct nb_participant *p)
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
