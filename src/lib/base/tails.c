#include "tails.h"

#include <math.h>
#include <stdio.h>

static const double thresholds_ns[NB_TAIL_THRESHOLDS] = { 1e4, 1e5, 1e6 };
static const char *const threshold_names[NB_TAIL_THRESHOLDS] = { "10us", "100us", "1000us" };

const double nb_loss_edges_ns[NB_LOSS_BUCKETS - 1] = {
	1e2, 2e2, 5e2, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6,
	2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9, 2e9, 5e9, 1e10,
};

/* The j-th smallest loss (0-based). */
static double loss(const uint64_t *v, size_t n, double base, double scale, int falling, size_t j)
{
	return nb_loss((double)v[falling ? n - 1 - j : j], base, scale, falling);
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
				.ns_per_unit = ns_per_unit, .seconds = seconds, .falling = falling,
				.measured = 1 };
	if (!n)
		return;
	t->p50_ns = percentile(v, n, base, ns_per_unit, falling, 0.5);
	t->p99_ns = percentile(v, n, base, ns_per_unit, falling, 0.99);
	t->p99_9_ns = percentile(v, n, base, ns_per_unit, falling, 0.999);
	t->p99_99_ns = percentile(v, n, base, ns_per_unit, falling, 0.9999);
	t->max_ns = loss(v, n, base, ns_per_unit, falling, n - 1);
	/* the losses ascend with j: one pass, the bucket moving up */
	for (size_t j = 0, b = 0; j < n; j++) {
		double x = loss(v, n, base, ns_per_unit, falling, j);

		if (isnan(x)) /* no best value to measure against */
			continue;
		while (b < NB_LOSS_BUCKETS - 1 && x >= nb_loss_edges_ns[b])
			b++;
		t->histogram.samples[b]++;
		t->histogram.lost_ns[b] += x;
	}
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
	nb_json_object(j, "histogram");
	nb_loss_histogram_json(j, &t->histogram);
	nb_json_end(j, '}');
	nb_json_end(j, '}');
}

void nb_loss_histogram_add(struct nb_loss_histogram *to, const struct nb_loss_histogram *h)
{
	for (int b = 0; b < NB_LOSS_BUCKETS; b++) {
		to->samples[b] += h->samples[b];
		to->lost_ns[b] += h->lost_ns[b];
	}
}

void nb_loss_histogram_json(struct nb_json *j, const struct nb_loss_histogram *h)
{
	int used = NB_LOSS_BUCKETS;

	while (used > 0 && h->samples[used - 1] == 0)
		used--;
	nb_json_array(j, "samples");
	for (int b = 0; b < used; b++)
		nb_json_uint(j, NULL, h->samples[b]);
	nb_json_end(j, ']');
	/* to the ns: the loss is known to a timer read, tens of ns */
	nb_json_array(j, "lost_ns");
	for (int b = 0; b < used; b++)
		nb_json_uint(j, NULL, (uint64_t)llround(h->lost_ns[b]));
	nb_json_end(j, ']');
}

void nb_loss_edges_json(struct nb_json *j, const char *key)
{
	nb_json_array(j, key);
	for (int b = 0; b < NB_LOSS_BUCKETS - 1; b++)
		nb_json_uint(j, NULL, (uint64_t)nb_loss_edges_ns[b]);
	nb_json_end(j, ']');
}

void nb_tails_print(const struct nb_tails *t, FILE *out)
{
	fprintf(out, " p99_9_loss_us=%.3f max_loss_us=%.3f above_100us_per_hour=%.1f",
		t->p99_9_ns / 1e3, t->max_ns / 1e3, t->above_per_hour[1]);
}
