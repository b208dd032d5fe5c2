/* The finish of a run, complete or interrupted, in the one order every
 * kernel's takes: each participant's data written and its record filled,
 * its causes, the kernel's summaries and reductions, then the report
 * (rank_report.c) and the metrics (node_metrics.c). */
#define _GNU_SOURCE
#include "driver.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
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

static void reduce_loss(struct nb_run *r, const char *mine, int signo, struct nb_run_loss *l)
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
	struct nb_run_loss loss;

	if (!mine || !n)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the results");
	r->d->info.signo = signo;
	if (r->stream.on)
		r->d->writer_cpu = nb_stream_writer_finish(r->d->writer, signo == 0,
							   &r->d->writer_cpu_ms);
	for (int i = 0; i < rk->nlocal; i++)
		n[i] = h->taken ? h->taken(r, i, signo) : taken(r, i, signo);
	nb_driver_write_data(r, n, signo);
	/* -s: stdout holds the samples alone, as the original's did, so that a
	 * pipe reads them whole; every line after them goes to stderr */
	if (r->to_stdout) {
		fflush(stdout);
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			nb_fail(NB_EXIT_FAILURE, "-s: cannot send the result lines to stderr: %s",
				strerror(errno));
	}
	for (int i = 0; i < rk->nlocal; i++)
		participant(r, i, n[i], (struct nb_participant *)(mine + i * h->size));
	nb_driver_commit_files(r, mine);
	if (h->exchange)
		h->exchange(r, n, signo);
	r->measured_s = longest_measurement_s(r, mine, signo);
	/* The samples are on disk: summarise may now reorder them, once their
	 * order has been read for the causes. */
	if (r->trace_opt)
		nb_driver_attribute(r, n, mine);
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
	nb_driver_report(r, mine, &loss, nall, signo);
	nb_driver_write_metrics(r, mine, signo);
	fflush(stdout);
	free(n);
	free(mine);
}
