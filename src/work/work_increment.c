/* INCREMENT: one increment of a register counter, the Sequoia FWQ/FTQ with
 * MULTIITER unset. The Sequoia notes warn that most of such a loop's
 * instructions are its own branch and compare, so its samples vary with the
 * instruction stream: it is here to show that, not as the default. The
 * empty asm keeps the counter in a register and stops the compiler from
 * folding the loop into one addition. */
#define NB_WORK_KIND increment
#define WORK_DECL(ctx)                                                                       \
	(void)(ctx);                                                                         \
	uint64_t acc = 0
#define WORK_UNIT()                                                                          \
	do {                                                                                 \
		acc++;                                                                       \
		__asm__ volatile("" : "+r"(acc));                                            \
	} while (0)
#define WORK_SINK() (nb_work_sink = acc)

#include "loops.h"
