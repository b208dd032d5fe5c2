/* --trace: each participant's detours joined to what the trace saw on its
 * CPU, its causes written into its node's file or its own. */
#define _GNU_SOURCE
#include "driver.h"

#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "node_data.h"

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
void nb_driver_attribute(struct nb_run *r, const size_t *n, char *mine)
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
