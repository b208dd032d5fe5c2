/* A participant's samples over the run's time: NB_STRETCHES equal stretches
 * of one width for every participant of the run (the longest one's
 * measurement, divided), each with how many samples ended in it and the sum
 * of their values. From these alone the analysis draws the heat map of
 * noise over time and compares each core's stretches with its node's and
 * every node's (nodes, outliers) without reading a sample: a few KB a
 * participant, whatever its samples. */
#ifndef NB_STRETCHES_H
#define NB_STRETCHES_H

#include <stdint.h>

#include "json.h"

enum { NB_STRETCHES = 100 };

struct nb_stretches {
	double width_s; /* 0: the kernel kept none */
	uint64_t n[NB_STRETCHES];
	/* the values summed, in the data files' unit (or, where the kernel's
	 * notes say, the time they lost) */
	double sum[NB_STRETCHES];
};

/* Empty stretches of width_s each (a run of run_s seconds at most). */
void nb_stretches_init(struct nb_stretches *s, double run_s);
/* A sample that ended end_s seconds into the run: stretch k holds
 * (k width, (k + 1) width], the last one anything later. */
void nb_stretches_add(struct nb_stretches *s, double end_s, double value);
/* "stretches": {width_s, n, sum}, without the empty stretches at the end */
void nb_stretches_json(struct nb_json *j, const struct nb_stretches *s);

#endif
