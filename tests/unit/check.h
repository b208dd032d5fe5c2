/* The C unit tests' checks: each counts as passed or failed, and a failed
 * one says where; main prints "NAME: N passed, N failed". */
#ifndef NB_CHECK_H
#define NB_CHECK_H

#include <math.h>
#include <stdio.h>

static int passed, failed;

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (cond) {                                                                  \
			passed++;                                                            \
		} else {                                                                     \
			failed++;                                                            \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                            \
	} while (0)

#define NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

#endif
