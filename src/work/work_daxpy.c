/* DAXPY: y = a*x + y over the thread's vectors (compiled -O3 to vectorise).
 * The memory clobber makes every pass store y, so no pass can be skipped. */
#define NB_WORK_KIND daxpy
#define WORK_DECL(ctx)                                                                       \
	double *restrict y_ = (ctx)->y;                                                      \
	const double *restrict x_ = (ctx)->x;                                                \
	const size_t len_ = (ctx)->len;                                                      \
	const double a_ = (ctx)->a
#define WORK_UNIT()                                                                          \
	do {                                                                                 \
		for (size_t k_ = 0; k_ < len_; k_++)                                         \
			y_[k_] += a_ * x_[k_];                                               \
		__asm__ volatile("" : : "r"(y_) : "memory");                                 \
	} while (0)
#define WORK_SINK() (nb_work_sink = (uint64_t)y_[0])

#include "loops.h"
