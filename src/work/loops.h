/* The measured loops of FWQ and FTQ, stamped out once per work kind.
 *
 * Before including this file a work_<kind>.c defines
 *   NB_WORK_KIND       its name (multiiter, asm, daxpy)
 *   WORK_DECL(ctx)     register variables the work keeps, set up before the loop
 *   WORK_UNIT()        one work loop (unless it defines WORK_LOOPS)
 *   WORK_SINK()        stores the result where the compiler must keep it
 * and may define
 *   WORK_LOOPS(n)      n work loops as one loop of its own (the ASM kind: the
 *                      LLNL loop, whose compare and branch are part of it)
 *
 * Inside the loops there is only the work, the timer read (which carries the
 * lfence at the top of each sample), a compare and a store into memory that
 * was faulted in before the start.  These files are compiled with
 * -falign-functions=4096 so each loop starts on its own page and its
 * instruction-cache behaviour does not depend on how the binary is linked.
 */
#include "timer.h"
#include "work.h"

#define NB_CAT_(a, b) a##b
#define NB_CAT(a, b) NB_CAT_(a, b)

#ifndef WORK_LOOPS
#define WORK_LOOPS(n)                                                                        \
	for (uint64_t k_ = 0; k_ < (n); k_++)                                                \
	WORK_UNIT()
#endif

void NB_CAT(nb_fixed_work_, NB_WORK_KIND)(struct nb_work_ctx *ctx, uint64_t *restrict samples,
					  size_t n, uint64_t loops, uint64_t *first)
{
	WORK_DECL(ctx);
	/* One read ends a sample and starts the next: every tick of the run is
	 * in some sample, and no detour falls between two unseen. */
	uint64_t t0 = nb_ticks();

	__atomic_store_n(first, t0, __ATOMIC_RELAXED);

	for (size_t i = 0; i < n; i++) {
		WORK_LOOPS(loops);
		uint64_t t1 = nb_ticks();

		__atomic_store_n(&samples[i], t1 - t0, __ATOMIC_RELAXED);
		t0 = t1;
	}
	WORK_SINK();
}

void NB_CAT(nb_fixed_time_, NB_WORK_KIND)(struct nb_work_ctx *ctx,
					  struct nb_quantum_sample *restrict samples, size_t n,
					  uint64_t start, uint64_t interval, uint64_t per_count)
{
	WORK_DECL(ctx);
	uint64_t end = start;

	for (size_t i = 0; i < n; i++) {
		uint64_t count = 0, now;

		end += interval;
		for (now = nb_ticks(); now < end; now = nb_ticks()) {
			WORK_LOOPS(per_count);
			count++;
		}
		samples[i].count = count;
		/* release: a reader that sees the tick also sees the count */
		__atomic_store_n(&samples[i].tick, now, __ATOMIC_RELEASE);
	}
	WORK_SINK();
}
