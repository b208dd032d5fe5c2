/* What the system stole from a thread, and what the work lost on its own:
 * a series of samples' time split three ways (docs/analysis.md, "The
 * figures").
 *
 * The headline is defined by time, as osnoise and Netgauge define theirs,
 * so that every probe gives the same figure: a sample's excess over its
 * usual time is stolen when it passes one absolute threshold
 * (NB_STOLEN_THRESHOLD_NS), the same for every kernel and work kind. A
 * sample's usual time is a median, per unit of work, over the
 * NB_USUAL_WINDOW_NS around it: the median of the medians of
 * NB_USUAL_BLOCKS blocks of a tenth of that each (a block holds one sample
 * or more). The median ignores single detours and follows a change of
 * speed that lasts, which is the work's: an SMT sibling, a co-tenant on the
 * memory bus, the clock's frequency. A change of speed shorter than the
 * window is the work's too when it lasts over a sample's neighbours: where
 * the NB_NEIGHBOURS samples either side ran slower (their median), that is
 * the sample's usual time. Where the neighbours' own times spread wide (a
 * stretch of uneven speed: a busy SMT sibling), only an excess past three
 * robust sds of them counts. A gap stops the thread inside one sample and
 * never moves its neighbours. A sample longer than a block, or noise that
 * hits most samples, is beyond what a median can tell apart: the probe's
 * resolution says so.
 *
 * The parts add up to the whole, each a share of the run's time:
 *   lost = stolen + slowdown + variation
 *   lost       the time beyond the ideal (the fastest sample; P-SNAP's
 *              calibrated time), the kernels' figure before this one
 *   stolen     samples' excess over their usual time past the threshold
 *   slowdown   the usual time beyond the work's robust best speed (the
 *              NB_BEST_QUANTILE of the blocks' medians): no single fastest
 *              sample, no cliff; the work's sensitivity, never the system's
 *   variation  the rest: the loop's own spread under the threshold.
 *
 * A probe's resolution is the smallest loss it can tell from its own
 * spread: three robust sds (1.4826 median absolute deviations) of the
 * samples' excess over their usual time, and never less than its unit (a
 * timer read, an FTQ count). Above the threshold the probe is coarse: it
 * counts only excess past its resolution, since under that its own spread
 * and a gap look alike, and it says so (coarse=1) rather than under-count
 * in silence. */
#ifndef NB_SPEED_H
#define NB_SPEED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

#define NB_STOLEN_THRESHOLD_NS 1000.0 /* osnoise's default since Linux 6.11 */
#define NB_USUAL_WINDOW_NS 10e6
#define NB_USUAL_BLOCKS 11 /* odd: a median's centre */
#define NB_NEIGHBOURS 4    /* a sample's neighbours either side */
#define NB_RESOLUTION_SDS 3.0 /* what a spread hides: three robust sds */
#define NB_SD_PER_MAD 1.4826  /* a normal sd in median absolute deviations */
#define NB_BEST_QUANTILE 0.05
#define NB_STOLEN_GROUPS 100    /* the interval's blocks of time, at most */
#define NB_STOLEN_GROUPS_MIN 10 /* fewer: no interval (NaN) */
#define NB_STOLEN_RESAMPLES 1000
/* --until-ci: a run ends once its interval is that many points wide, but
 * never before NB_UNTIL_CI_MIN_S (a quiet start says little of the hour
 * after it), and without --seconds after NB_UNTIL_CI_MAX_S at most. */
#define NB_UNTIL_CI_MIN_S 1.0
#define NB_UNTIL_CI_MAX_S 3600.0

struct nb_speed {
	double total_ticks;    /* all samples */
	double lost_ticks;     /* beyond the ideal, in all */
	double stolen_ticks;   /* excess over the usual time, past the threshold */
	double slowdown_ticks; /* the usual time beyond the robust best */
	double threshold_ticks, resolution_ticks, ticks_per_ns;
	double ci_low, ci_high; /* the stolen share's 95% interval, percent; NaN: none */
	uint64_t samples, stolen_samples;
};

/* One sample of a series: its time and how much work it did (fixed work:
 * 1; FTQ: its count). */
struct nb_speed_sample {
	double ticks, work;
};

/* Splits n samples, in time order, read by sample(ctx, i). ideal: the
 * ticks of one unit of work at the ideal (lost is against it); unit: the
 * smallest time the samples resolve (ticks). */
void nb_speed_split(size_t n, struct nb_speed_sample (*sample)(const void *ctx, size_t i),
		    const void *ctx, double ideal, double unit, double ticks_per_ns,
		    struct nb_speed *s);
/* Fixed work: x[0..n) each one unit's ticks. */
void nb_speed_fixed_work(const uint64_t *x, size_t n, double ideal, double unit,
			 double ticks_per_ns, struct nb_speed *s);
/* A loop that records only its detours (selfish): n detours, detour i
 * starting at tick start[i * stride] and lasting length[i * stride] ticks,
 * in a span of span ticks from tick origin, each against an ordinary
 * iteration of base ticks; unit its resolution. Leaves the slowdown to the
 * caller. */
void nb_speed_detours(const uint64_t *start, const uint64_t *length, size_t stride, size_t n,
		      uint64_t origin, double base, double span, double unit, double ticks_per_ns,
		      struct nb_speed *s);

/* The stolen share's 95% percentile interval (percent), sum(part) /
 * sum(whole) over g groups of time resampled with replacement; NaN with
 * fewer than NB_STOLEN_GROUPS_MIN groups. */
void nb_speed_interval(const double *part, const double *whole, size_t g, double *low,
		       double *high);
/* --until-ci's rule: the interval is known and at most width points wide. */
int nb_speed_narrow(double low, double high, double width);

/* A share of the run's time, in percent. */
double nb_speed_percent(const struct nb_speed *s, double part);
/* The loop's own variation (ticks): what the loss holds beyond the rest. */
double nb_speed_variation(const struct nb_speed *s);
/* " stolen_percent=... coarse=..." on stdout, for a result line. */
void nb_speed_print(const struct nb_speed *s, FILE *out);
/* The same keys in the current JSON object. */
void nb_speed_json(struct nb_json *j, const struct nb_speed *s);

#endif
