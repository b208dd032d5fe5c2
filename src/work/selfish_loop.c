/* Compiled like the work loops: -O2, page-aligned (see src/CMakeLists.txt).
 * The loop does only what osnoise's does: read the clock, subtract, compare
 * with a threshold already in ticks, and store when it is passed. The end
 * time is checked once a chunk, so the fast path has one compare more than
 * the timer's own code: the chunk counter's. */
#include "selfish.h"

#include "timer.h"

enum { CHUNK = 4096 };

uint64_t nb_selfish_min_iteration(uint64_t iterations)
{
	uint64_t last = nb_ticks(), min = UINT64_MAX;

	for (uint64_t i = 0; i < iterations; i++) {
		uint64_t now = nb_ticks();

		if (now - last < min)
			min = now - last;
		last = now;
	}
	return min;
}

double nb_selfish_ordinary_iteration(uint64_t iterations, uint64_t threshold)
{
	uint64_t last = nb_ticks(), sum = 0, n = 0;

	for (uint64_t i = 0; i < iterations; i++) {
		uint64_t now = nb_ticks();

		if (now - last <= threshold) {
			sum += now - last;
			n++;
		}
		last = now;
	}
	return n ? (double)sum / (double)n : 0.0;
}

uint64_t nb_selfish_loop(struct nb_detour *restrict detours, size_t max, uint64_t threshold,
			 uint64_t end, size_t *ndetours)
{
	uint64_t iterations = 0, last = nb_ticks();
	size_t k = 0;

	if (max == 0)
		goto done;
	for (;;) {
		for (int i = 0; i < CHUNK; i++) {
			uint64_t now = nb_ticks();

			if (__builtin_expect(now - last > threshold, 0)) {
				detours[k].start = last;
				__atomic_store_n(&detours[k].length, now - last, __ATOMIC_RELEASE);
				if (++k == max) {
					iterations += (uint64_t)i + 1;
					goto done;
				}
			}
			last = now;
		}
		iterations += CHUNK;
		if (last >= end)
			break;
	}
done:
	*ndetours = k;
	return iterations;
}
