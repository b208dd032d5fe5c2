/* A rank's result line, the same grammar for every kernel, with the
 * requirements' verdict on it, and its figures added into the ranks line's. */
#define _GNU_SOURCE
#include "driver.h"

#include <stdlib.h>

#include "errors.h"
#include "figures.h"
#include "requirements.h"

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
char *nb_driver_rank_line_text(const struct nb_run *r, const void *record, int verdict)
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

/* A rank's line into the figures of the run's "ranks" line; its text, to
 * free, in *text when text is not NULL. */
void nb_driver_add_rank_line(const struct nb_run *r, const void *record, struct nb_figures *fs,
			  char **text)
{
	char *line = nb_driver_rank_line_text(r, record, 1);

	nb_figures_add_line(fs, line, rank_line_prefix);
	if (text)
		*text = line;
	else
		free(line);
}
