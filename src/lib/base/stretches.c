#include "stretches.h"

#include <math.h>
#include <string.h>

void nb_stretches_init(struct nb_stretches *s, double run_s)
{
	memset(s, 0, sizeof(*s));
	s->width_s = run_s > 0 ? run_s / NB_STRETCHES : 0;
}

void nb_stretches_add(struct nb_stretches *s, double end_s, double value)
{
	double k = s->width_s > 0 ? ceil(end_s / s->width_s) - 1 : 0;
	int i = k < 0 || isnan(k) ? 0 : k > NB_STRETCHES - 1 ? NB_STRETCHES - 1 : (int)k;

	s->n[i]++;
	s->sum[i] += value;
}

void nb_stretches_json(struct nb_json *j, const struct nb_stretches *s)
{
	int used = NB_STRETCHES;

	while (used > 0 && s->n[used - 1] == 0)
		used--;
	nb_json_object(j, "stretches");
	nb_json_double(j, "width_s", s->width_s);
	nb_json_array(j, "n");
	for (int i = 0; i < used; i++)
		nb_json_uint(j, NULL, s->n[i]);
	nb_json_end(j, ']');
	nb_json_array(j, "sum");
	for (int i = 0; i < used; i++)
		nb_json_double(j, NULL, s->sum[i]);
	nb_json_end(j, ']');
	nb_json_end(j, '}');
}
