/* ASM: a register-only x86-64 loop, as LLNL's -DASMx8664 FWQ.  Both operands
 * are outputs ("+r"), so the compiler must give them distinct registers; the
 * loop ends because its own counter reaches zero, not by register accident. */
#if defined(__x86_64__)
#define NB_WORK_KIND asm
#define WORK_DECL(ctx)                                                                       \
	(void)(ctx);                                                                         \
	uint64_t acc = 0
#define WORK_UNIT()                                                                          \
	do {                                                                                 \
		uint64_t left_ = 64;                                                         \
		__asm__ volatile("1:\n\t"                                                    \
				 "inc %[acc]\n\t"                                            \
				 "nop\n\t"                                                   \
				 "dec %[left]\n\t"                                           \
				 "jnz 1b"                                                    \
				 : [acc] "+r"(acc), [left] "+r"(left_)                       \
				 :                                                           \
				 : "cc");                                                    \
	} while (0)
#define WORK_SINK() (nb_work_sink = acc)

#include "loops.h"
#else
/* No register-only loop for this architecture; the build leaves asm out. */
typedef int nb_work_asm_unavailable;
#endif
