/* FWQ, fixed work quantum: every sample does the same work (2^w work loops)
 * and records how many ticks it took.  Noise makes samples longer. */
#include <stdlib.h>

#include "driver.h"

static void configure(struct nb_run *r)
{
	r->loops = (uint64_t)1 << r->work_bits;
	r->seconds = nb_ticks_to_ns(&r->cal, (double)r->samples * (double)r->loops *
						     r->ticks_per_work_loop) / 1e9;
}

static void measure(struct nb_thread *t)
{
	struct nb_run *r = t->arg;

	r->work->fwq(&t->work, t->samples, r->samples, r->loops, &t->start_tick);
}

static void write_samples(struct nb_run *r, struct nb_thread *t, size_t n, FILE **out)
{
	(void)r;
	nb_write_u64_column(out[0], t->samples, n, 1);
}

static uint64_t *values(struct nb_thread *t, size_t n)
{
	(void)n;
	return t->samples;
}

/* Sequoia's scaled noise (t - min) / min, averaged over the samples. */
static double scaled_noise_mean(const struct nb_stats *s)
{
	return (s->mean - s->min) / s->min;
}

/* Against the fastest sample, Sequoia's ideal. */
static void speed(struct nb_thread *t, size_t n, struct nb_speed *s)
{
	const uint64_t *x = t->samples;
	uint64_t min = UINT64_MAX;

	for (size_t i = 0; i < n; i++)
		min = x[i] < min ? x[i] : min;
	nb_speed_split(x, n, (double)min, s);
}

static size_t detours(struct nb_run *r, struct nb_thread *t, size_t n, struct nb_cause_detour **out)
{
	return nb_detours_fixed_work(t->samples, n, t->start_tick, r->cal.timer_read_ticks, out);
}

static void json(struct nb_run *r, struct nb_json *j)
{
	nb_json_uint(j, "work_bits", r->work_bits);
	nb_json_uint(j, "work_loops_per_sample", r->loops);
	nb_json_string(j, "sample_unit", "ticks");
}

static const char *const suffixes[] = { "times.dat" };

static const struct nb_kernel fwq = {
	.id = NB_KERNEL_FWQ,
	.name = "fwq",
	.sample_size = sizeof(uint64_t),
	.done_word = 0,
	.files_per_thread = 1,
	.file_suffixes = suffixes,
	.value_unit = "ticks",
	.configure = configure,
	.measure = measure,
	.write = write_samples,
	.values = values,
	.scaled_noise_mean = scaled_noise_mean,
	.speed = speed,
	.detours = detours,
	.json = json,
	.usage = "Fixed work quantum: time 2^BITS work loops, SAMPLES times, on each thread.\n"
		 "Writes PREFIX_<thread>_times.dat (ticks per sample) and PREFIX.json.\n"
		 "  -w BITS              2^BITS work loops per sample (default 12, at most 40)\n",
};

int main(int argc, char **argv)
{
	return nb_driver_main(&fwq, argc, argv);
}
