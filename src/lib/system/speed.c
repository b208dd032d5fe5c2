#include "speed.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The median of w values, by insertion sort of a copy: w is small. */
static uint64_t median_of(const uint64_t *v, int w)
{
	uint64_t s[NB_SPEED_WINDOW];

	for (int i = 0; i < w; i++) {
		int j = i;

		while (j > 0 && s[j - 1] > v[i]) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = v[i];
	}
	return s[w / 2];
}

void nb_speed_split(const uint64_t *x, size_t n, double ideal, struct nb_speed *s)
{
	const int half = NB_SPEED_WINDOW / 2;
	double weighted = 0;

	memset(s, 0, sizeof(*s));
	s->slow_factor = 1.0;
	for (size_t i = 0; i < n; i++) {
		/* the window slides in from the ends: it starts at 0 and ends at n */
		size_t w = n < NB_SPEED_WINDOW ? n : NB_SPEED_WINDOW;
		size_t lo = i < (size_t)half ? 0 : i - half;

		if (lo + w > n)
			lo = n - w;
		double usual = (double)median_of(x + lo, (int)w), t = (double)x[i];
		double kept = t;

		s->total_ticks += t;
		s->lost_ticks += t - ideal;
		if (t > (1 + NB_SPEED_THRESHOLD) * usual) {
			s->detours++;
			s->detour_ticks += t - usual;
			kept = usual;
		}
		if (usual > (1 + NB_SPEED_THRESHOLD) * ideal) {
			s->slow_samples++;
			s->slow_ticks += kept - ideal;
			s->slow_span_ticks += t;
			weighted += usual / ideal * t;
		}
	}
	if (s->slow_span_ticks > 0)
		s->slow_factor = weighted / s->slow_span_ticks;
}

double nb_speed_percent(const struct nb_speed *s, double part)
{
	return s->total_ticks > 0 ? 100.0 * part / s->total_ticks : NAN;
}

/* What the system took: detours and running slow. */
static double system_ticks(const struct nb_speed *s)
{
	return s->detour_ticks + s->slow_ticks;
}

double nb_speed_variation(const struct nb_speed *s)
{
	return s->lost_ticks - system_ticks(s);
}

/* Each part printed to the precision the whole is, so that the printed
 * parts add up to the printed whole within the last digit's rounding. */
void nb_speed_print(const struct nb_speed *s, FILE *out)
{
	fprintf(out,
		" lost_percent=%.4f detour_percent=%.4f slow_percent=%.4f variation_percent=%.4f"
		" system_percent=%.4f slow_time_percent=%.4f slow_factor=%.4f",
		nb_speed_percent(s, s->lost_ticks), nb_speed_percent(s, s->detour_ticks),
		nb_speed_percent(s, s->slow_ticks), nb_speed_percent(s, nb_speed_variation(s)),
		nb_speed_percent(s, system_ticks(s)),
		nb_speed_percent(s, s->slow_span_ticks), s->slow_factor);
}

void nb_speed_json(struct nb_json *j, const struct nb_speed *s)
{
	nb_json_double(j, "lost_percent", nb_speed_percent(s, s->lost_ticks));
	nb_json_double(j, "detour_percent", nb_speed_percent(s, s->detour_ticks));
	nb_json_double(j, "slow_percent", nb_speed_percent(s, s->slow_ticks));
	nb_json_double(j, "variation_percent", nb_speed_percent(s, nb_speed_variation(s)));
	nb_json_double(j, "system_percent", nb_speed_percent(s, system_ticks(s)));
	nb_json_double(j, "slow_time_percent", nb_speed_percent(s, s->slow_span_ticks));
	nb_json_double(j, "slow_factor", s->slow_factor);
}
