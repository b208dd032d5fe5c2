/* Random draws for noise made on purpose (--inject's Poisson stream,
 * noise-slowdown --random): xorshift64*, fast and async-signal-safe, not
 * for statistics. The caller keeps the state, seeded non-zero. */
#ifndef NB_DRAW_H
#define NB_DRAW_H

#include <stdint.h>

/* A uniform draw in (0, 1]: never 0, so its log is finite. */
double nb_draw_uniform(uint64_t *state);
/* An exponential draw of that mean: a Poisson process's next wait. */
double nb_draw_exponential(uint64_t *state, double mean);

#endif
