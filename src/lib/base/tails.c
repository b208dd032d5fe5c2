#include "tails.h"

#include <math.h>
#include <stdio.h>

static const double thresholds_ns[NB_TAIL_THRESHOLDS] = { 1e4, 1e5, 1e6 };
static const char *const threshold_names[NB_TAIL_THRESHOLDS] = { "10us", "100us", "1000us" };

/* The j-th smallest loss (0-based). */
static double loss(const uint64_t *v, size_t n, double base, double scale, int falling, size_t j)
{
	double x = (double)v[falling ? n - 1 - j : j];

	return fabs(x - base) * scale;
}

static double percentile(const uint64_t *v, size_t n, double base, double scale, int falling,
			 double p)
{
	size_t j = (size_t)ceil(p * (double)n);

	return loss(v, n, base, scale, falling, j ? j - 1 : 0);
}

void nb_tails_sorted(const uint64_t *v, size_t n, double base, double ns_per_unit, int falling,
		     double seconds, struct nb_tails *t)
{
	*t = (struct nb_tails){ .n = n, .p50_ns = NAN, .p99_ns = NAN, .p99_9_ns = NAN,
				.p99_99_ns = NAN, .max_ns = NAN, .base = base,
				.ns_per_unit = ns_per_unit, .seconds = seconds, .falling = falling };
	if (!n)
		return;
	t->p50_ns = percentile(v, n, base, ns_per_unit, falling, 0.5);
	t->p99_ns = percentile(v, n, base, ns_per_unit, falling, 0.99);
	t->p99_9_ns = percentile(v, n, base, ns_per_unit, falling, 0.999);
	t->p99_99_ns = percentile(v, n, base, ns_per_unit, falling, 0.9999);
	t->max_ns = loss(v, n, base, ns_per_unit, falling, n - 1);
	for (int k = 0; k < NB_TAIL_THRESHOLDS; k++) {
		size_t above = 0;

		/* from the largest loss down, while it passes the threshold */
		while (above < n && loss(v, n, base, ns_per_unit, falling, n - 1 - above) >
					    thresholds_ns[k])
			above++;
		t->above_per_hour[k] = seconds > 0 ? (double)above / (seconds / 3600) : NAN;
	}
}

void nb_tails_rescale(struct nb_tails *t, double file_per_value)
{
	t->base *= file_per_value;
	t->ns_per_unit /= file_per_value;
}

void nb_tails_json(struct nb_json *j, const struct nb_tails *t)
{
	char key[64];

	nb_json_object(j, "tails");
	nb_json_double(j, "p50_us", t->p50_ns / 1e3);
	nb_json_double(j, "p99_us", t->p99_ns / 1e3);
	nb_json_double(j, "p99_9_us", t->p99_9_ns / 1e3);
	nb_json_double(j, "p99_99_us", t->p99_99_ns / 1e3);
	nb_json_double(j, "max_us", t->max_ns / 1e3);
	for (int k = 0; k < NB_TAIL_THRESHOLDS; k++) {
		snprintf(key, sizeof(key), "above_%s_per_hour", threshold_names[k]);
		nb_json_double(j, key, t->above_per_hour[k]);
	}
	/* what a sample lost, from its value in the data files */
	nb_json_object(j, "loss");
	nb_json_double(j, "base", t->base);
	nb_json_double(j, "us_per_unit", t->ns_per_unit / 1e3);
	nb_json_bool(j, "falling", t->falling);
	nb_json_double(j, "seconds", t->seconds);
	nb_json_end(j, '}');
	nb_json_end(j, '}');
}

void nb_tails_print(const struct nb_tails *t)
{
	printf(" p99_9_loss_us=%.3f max_loss_us=%.3f above_100us_per_hour=%.1f", t->p99_9_ns / 1e3,
	       t->max_ns / 1e3, t->above_per_hour[1]);
}
