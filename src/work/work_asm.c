/* ASM: the Sequoia/LLNL FWQ's x86-64 work loop (fwq.c, -DASMx8664, "Core
 * work loop in gas"): a register counter from -n up to 0, each iteration
 * `incq`, 16 `nop`s, `cmpq $0` and `js`, 19 instructions, no memory. A work
 * loop is one iteration, as the original's -w counts them. */
#if defined(__x86_64__)
#define NB_WORK_KIND asm
#define WORK_DECL(ctx) (void)(ctx)
#define WORK_LOOPS(n)                                                                        \
	do {                                                                                 \
		int64_t count_ = -(int64_t)(n); /* n >= 1: as the original, no check */      \
			__asm__ volatile("1:\n\t"                                            \
					 "incq %[c]\n\t"                                      \
					 "nop\n\tnop\n\tnop\n\tnop\n\t"                     \
					 "nop\n\tnop\n\tnop\n\tnop\n\t"                     \
					 "nop\n\tnop\n\tnop\n\tnop\n\t"                     \
					 "nop\n\tnop\n\tnop\n\tnop\n\t"                     \
					 "cmpq $0, %[c]\n\t"                                  \
					 "js 1b"                                               \
					 : [c] "+r"(count_)                                    \
					 :                                                     \
					 : "cc");                                              \
	} while (0)
#define WORK_SINK() (nb_work_sink = 0)

#include "loops.h"
#else
/* No register-only loop for this architecture; the build leaves asm out. */
typedef int nb_work_asm_unavailable;
#endif
