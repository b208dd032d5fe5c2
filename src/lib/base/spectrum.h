/* The strongest lines of a series' spectrum: noise that repeats at a rate
 * (a timer tick, a daemon's wake-up) takes a comb of lines out of FTQ's
 * counts (brho's FTQ notes). Found where the samples are, once a
 * participant, so that a survey has every core's lines in its run
 * descriptions and the report needs no FFT per core. The method is the
 * report's (analysis/R/spectrum.R, docs/analysis.md "FTQ peaks"): Bartlett's
 * averaged periodogram, a running-median floor, and the local maxima well
 * above it, a line's fragments merged. */
#ifndef NB_SPECTRUM_H
#define NB_SPECTRUM_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

/* the strongest a participant keeps: as many as the report's peaks.csv, so
 * that a line a load's comb would push out of a shorter list stays */
enum { NB_SPECTRAL_LINES = 20 };

struct nb_spectral_line {
	double frequency_hz;
	double power;       /* variance of the series the line carries (counts^2) */
	double above_floor; /* its peak bin's power over the floor there */
};

struct nb_spectrum_lines {
	uint32_t n;          /* lines found, strongest first */
	uint32_t segments;   /* periodograms averaged */
	uint64_t segment;    /* samples in each (2^a 3^b 5^c, at most 2^17) */
	double resolution_hz; /* between two bins */
	struct nb_spectral_line line[NB_SPECTRAL_LINES];
};

/* The lines of x[0..n) sampled at sampling_hz, in time order. No lines
 * (n 0, resolution NAN) when fewer than 16 samples. */
void nb_spectrum_lines(const uint64_t *x, size_t n, double sampling_hz,
		       struct nb_spectrum_lines *out);
/* "spectrum": {resolution_hz, segments, segment, and the lines' figures
 * strongest first: frequency_hz: [...], power, above_floor, share_percent}
 * (a column a figure: a rank's entry stays one short line). A short detour taking a share s of
 * every period takes an impulse train out of the counts, whose first line's
 * amplitude is 2 s times the undisturbed count: share_percent is that s,
 * were the line one, 100 sqrt(power / 2) / undisturbed. */
void nb_spectrum_lines_json(struct nb_json *j, const struct nb_spectrum_lines *s,
			    double undisturbed);
/* the share of a line, as in the JSON */
double nb_spectral_line_share_percent(const struct nb_spectral_line *l, double undisturbed);

#endif
