#include "work.h"

#include <string.h>

#include "samples.h"
#include "timer.h"

const struct nb_work_kind nb_work_kinds[] = {
#ifdef NB_WORK_HAVE_MULTIITER
	{ "multiiter", nb_fixed_work_multiiter, nb_fixed_time_multiiter },
#endif
#ifdef NB_WORK_HAVE_INCREMENT
	{ "increment", nb_fixed_work_increment, nb_fixed_time_increment },
#endif
#ifdef NB_WORK_HAVE_ASM
	{ "asm", nb_fixed_work_asm, nb_fixed_time_asm },
#endif
#ifdef NB_WORK_HAVE_DAXPY
	{ "daxpy", nb_fixed_work_daxpy, nb_fixed_time_daxpy },
#endif
	{ NULL, NULL, NULL },
};

const int nb_work_kind_count = sizeof(nb_work_kinds) / sizeof(nb_work_kinds[0]) - 1;

const struct nb_work_kind *nb_work_find(const char *name)
{
	for (int i = 0; i < nb_work_kind_count; i++)
		if (strcmp(nb_work_kinds[i].name, name) == 0)
			return &nb_work_kinds[i];
	return NULL;
}

void nb_work_ctx_init(struct nb_work_ctx *ctx, size_t len)
{
	ctx->len = len;
	ctx->a = 1e-9;
	ctx->x = nb_samples_alloc(len, sizeof(double));
	ctx->y = nb_samples_alloc(len, sizeof(double));
	for (size_t i = 0; i < len; i++) {
		ctx->x[i] = 1.0;
		ctx->y[i] = 0.0;
	}
}

void nb_work_ctx_free(struct nb_work_ctx *ctx)
{
	nb_samples_free(ctx->x, ctx->len, sizeof(double));
	nb_samples_free(ctx->y, ctx->len, sizeof(double));
}

double nb_work_ticks_per_loop(const struct nb_work_kind *w, struct nb_work_ctx *ctx,
			      double ticks_per_ns)
{
	enum { N = 256 };
	static uint64_t s[N];
	uint64_t loops = 1, best = UINT64_MAX, first;

	/* samples of about 50 us */
	for (;;) {
		w->fixed_work(ctx, s, 1, loops, &first);
		if (s[0] > 50000 * ticks_per_ns || loops >= ((uint64_t)1 << 30))
			break;
		loops *= 2;
	}
	/* 50 ms of the loop first: a core that has been idle runs slower for a
	 * while (its clock, its caches), and the fastest sample is what is kept */
	uint64_t until = nb_ticks() + (uint64_t)(50e6 * ticks_per_ns);

	while (nb_ticks() < until)
		w->fixed_work(ctx, s, 1, loops, &first);
	w->fixed_work(ctx, s, N, loops, &first);
	for (int i = 0; i < N; i++)
		best = s[i] < best ? s[i] : best;
	return (double)best / (double)loops;
}
