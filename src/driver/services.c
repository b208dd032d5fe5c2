/* What the driver tells a kernel of its run (kernel.h's nb_run_* calls
 * that are not collectives): its length in samples, its start, its node
 * files, its signal, the cost of a work loop. */
#include "driver.h"

#include <math.h>

void nb_run_samples_for(struct nb_run *r, double sample_seconds)
{
	if (r->seconds_opt <= 0)
		return;
	/* whole samples covering it, but for 10 ppm: FTQ's quantum is whole
	 * ticks, so 2 s at 10 kHz is 20000 quanta, not 20001 */
	double x = r->seconds_opt / sample_seconds, n = ceil(x - 1e-5 * x);

	r->samples = n < 1 ? 1 : (uint64_t)n;
}

uint64_t nb_run_start_tick(const struct nb_run *r)
{
	return r->d->team.start_tick;
}

int nb_run_node_files(const struct nb_run *r)
{
	return r->d->node_files;
}

int nb_run_signal(const struct nb_run *r)
{
	return r->d->info.signo;
}

double nb_run_ticks_per_work_loop(const struct nb_run *r)
{
	static double ticks;
	struct nb_work_ctx ctx;

	if (ticks == 0) {
		nb_work_ctx_init(&ctx, r->daxpy_len);
		ticks = nb_work_ticks_per_loop(r->work, &ctx, r->cal.ticks_per_ns);
		nb_work_ctx_free(&ctx);
	}
	return ticks;
}
