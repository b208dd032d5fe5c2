/* MULTIITER: 32 increments and 31 decrements, as the Sequoia FWQ/FTQ default.
 * The empty asm after each step pins the counter to a register and stops the
 * compiler from folding the 63 steps into one (brho's FTQ notes: a counter on
 * the stack becomes load-add-store and gives bands). */
#define NB_WORK_KIND multiiter
#define WORK_DECL(ctx)                                                                       \
	(void)(ctx);                                                                         \
	uint64_t acc = 0
#define WORK_UNIT()                                                                          \
	do {                                                                                 \
		_Pragma("GCC unroll 32") for (int k_ = 0; k_ < 32; k_++)                     \
		{                                                                            \
			acc++;                                                               \
			__asm__ volatile("" : "+r"(acc));                                    \
		}                                                                            \
		_Pragma("GCC unroll 31") for (int k_ = 0; k_ < 31; k_++)                     \
		{                                                                            \
			acc--;                                                               \
			__asm__ volatile("" : "+r"(acc));                                    \
		}                                                                            \
	} while (0)
#define WORK_SINK() (nb_work_sink = acc)

#include "loops.h"
