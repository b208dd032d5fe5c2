/* The selfish-detour loop (Netgauge, after Beckman et al.): read the timer in
 * a tight loop; an iteration longer than the threshold is a detour, and its
 * start and length are stored. */
#ifndef NB_SELFISH_H
#define NB_SELFISH_H

#include <stddef.h>
#include <stdint.h>

/* 16 bytes; length is stored last (release), so a sample with a length set
 * is complete. Both in ticks. */
struct nb_detour {
	uint64_t start;
	uint64_t length;
};

/* The shortest of `iterations` back-to-back loop iterations, in ticks. */
uint64_t nb_selfish_min_iteration(uint64_t iterations);

/* The mean of `iterations` back-to-back iterations, leaving out those longer
 * than threshold (detours), in ticks: what an ordinary iteration costs. */
double nb_selfish_ordinary_iteration(uint64_t iterations, uint64_t threshold);

/* Runs until `max` detours are stored or the timer passes `end`; returns the
 * iterations done and sets *ndetours. *last is the read the first iteration
 * starts from (0: a read of its own) and, on return, the last read: a loop
 * called again goes on where this one ended. */
uint64_t nb_selfish_loop(struct nb_detour *detours, size_t max, uint64_t threshold,
			 uint64_t end, size_t *ndetours, uint64_t *last);

#endif
