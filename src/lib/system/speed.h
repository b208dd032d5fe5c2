/* Running slow or interrupted: what a series of fixed-work samples lost
 * beyond the ideal sample, split in two.
 *
 * A detour (an interrupt, a preemption) makes one sample longer than the
 * samples around it; a change of speed (frequency, an SMT sibling, a
 * hypervisor sharing the core more finely than a sample) makes many
 * consecutive samples longer by a similar factor. Each sample's usual level
 * is the median of the NB_SPEED_WINDOW samples centred on it: a median filter
 * keeps a change of speed's edges where they are and ignores single detours.
 * A sample more than NB_SPEED_THRESHOLD above its usual level is a detour (its
 * excess over that level is detour time); a sample whose usual level is more
 * than NB_SPEED_THRESHOLD above the ideal runs slow (its time beyond the
 * ideal, up to its usual level, is slow time). What is left is the work's
 * own variation: samples within NB_SPEED_THRESHOLD of their usual level, a
 * usual level within it of the ideal. The parts add up to the whole:
 *   lost = detours + slow + variation, each a share of the run's time;
 *   the system took detours + slow (system_percent), and the variation is
 *   the work's, shown beside it (docs/analysis.md, "The figures"). */
#ifndef NB_SPEED_H
#define NB_SPEED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

#define NB_SPEED_WINDOW 15
#define NB_SPEED_THRESHOLD 0.05

struct nb_speed {
	double total_ticks;     /* all samples */
	double lost_ticks;      /* beyond the ideal, in all: detours + slow + variation */
	double detour_ticks;    /* samples' excess over their usual level, in detours */
	double slow_ticks;      /* time beyond the ideal of samples that ran slow */
	double slow_span_ticks; /* the time of the samples that ran slow */
	double slow_factor;     /* their usual level over the ideal, time-weighted;
				 * 1 when none ran slow */
	uint64_t detours, slow_samples;
};

/* Splits the samples x[0..n) against the ideal sample (ticks). */
void nb_speed_split(const uint64_t *x, size_t n, double ideal, struct nb_speed *s);

/* The figures every kernel reports of it, as shares of the run's time:
 * lost_percent (the whole), detour_percent, slow_percent (time lost running
 * slow), variation_percent (the work's own), system_percent (detours and
 * running slow: what the system took), slow_time_percent (time spent
 * running slow) and slow_factor. */
double nb_speed_percent(const struct nb_speed *s, double part);
/* The work's own variation (ticks): what the loss holds beyond the system's. */
double nb_speed_variation(const struct nb_speed *s);
/* " detour_percent=... slow_factor=..." on stdout, for a summary line. */
void nb_speed_print(const struct nb_speed *s, FILE *out);
/* The same keys in the current JSON object. */
void nb_speed_json(struct nb_json *j, const struct nb_speed *s);

#endif
