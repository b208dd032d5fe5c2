/* The work loops, one translation unit per work kind (see loops.h).
 *
 * A "work loop" is one iteration of the Sequoia/LLNL FWQ's loop, which FWQ
 * repeats 2^w times (-w, as the original's) and FTQ counts per_count at a
 * time (src/kernels/kernels.json, work_kinds, says which build where):
 *   multiiter  32 increments then 31 decrements of a register counter
 *   increment  one increment of a register counter (MULTIITER unset)
 *   asm        LLNL's x86-64 loop: incq, 16 nops, cmpq $0 and js
 *   daxpy      y = a*x + y over the thread's vectors (1024 doubles by default)
 */
#ifndef NB_WORK_H
#define NB_WORK_H

#include <stddef.h>
#include <stdint.h>

/* Per-thread state of a work kind: only DAXPY has any. */
struct nb_work_ctx {
	double *x, *y;
	size_t len;
	double a;
};

/* One FTQ quantum: work loops done and the tick at which the quantum ended.
 * 16 bytes, so 256 samples a page (the 40 Hz line at 10 kHz in brho's FTQ notes). */
struct nb_quantum_sample {
	uint64_t count;
	uint64_t tick;
};

/* FWQ: samples[i] = ticks taken by `loops` work loops; *first = the tick of
 * the read that starts samples[0], stored before the loop begins, so that
 * sample i starts at *first plus the samples before it. */
typedef void (*nb_fixed_work_fn)(struct nb_work_ctx *ctx, uint64_t *samples, size_t n,
				 uint64_t loops, uint64_t *first);
/* FTQ: quantum i ends at the first tick >= start + (i + 1) * interval; its
 * count is of per_count work loops each. */
typedef void (*nb_fixed_time_fn)(struct nb_work_ctx *ctx, struct nb_quantum_sample *samples,
				 size_t n, uint64_t start, uint64_t interval, uint64_t per_count);

struct nb_work_kind {
	const char *name;
	nb_fixed_work_fn fixed_work;
	nb_fixed_time_fn fixed_time;
};

/* The kinds compiled in, and lookup by name (NULL when not compiled in). */
extern const struct nb_work_kind nb_work_kinds[];
extern const int nb_work_kind_count;
const struct nb_work_kind *nb_work_find(const char *name);

/* Sets up a thread's work state (DAXPY vectors of len doubles, pre-faulted). */
void nb_work_ctx_init(struct nb_work_ctx *ctx, size_t len);
void nb_work_ctx_free(struct nb_work_ctx *ctx);

/* Ticks one work loop takes, at least: the fastest of 256 FWQ samples of
 * about 50 us each, after 50 ms of the loop. */
double nb_work_ticks_per_loop(const struct nb_work_kind *w, struct nb_work_ctx *ctx,
			      double ticks_per_ns);

/* Where the loops leave their result so the compiler cannot drop the work. */
extern volatile uint64_t nb_work_sink;

/* The kernels' loops, defined by loops.h in each work_<kind>.c. */
#define NB_WORK_DECLARE(kind)                                                               \
	void nb_fixed_work_##kind(struct nb_work_ctx *, uint64_t *, size_t, uint64_t,       \
				  uint64_t *);                                              \
	void nb_fixed_time_##kind(struct nb_work_ctx *, struct nb_quantum_sample *, size_t, \
				  uint64_t, uint64_t, uint64_t);
NB_WORK_DECLARE(multiiter)
NB_WORK_DECLARE(increment)
NB_WORK_DECLARE(asm)
NB_WORK_DECLARE(daxpy)

#endif
