/* Compiled like the work loops: -O2, page-aligned (see src/CMakeLists.txt).
 * The loop does only what osnoise's does: read the clock, subtract, compare
 * with a threshold already in ticks, and store when it is passed. The end
 * time is checked once a chunk, so the fast path has one compare more than
 * the timer's own code: the chunk counter's.
 *
 * The reads are unfenced (plain rdtsc): the loop only compares each read
 * with the one before, and a fence on every read would cost it its
 * resolution (a quarter of the iteration here). Without one, a read may be
 * taken a few cycles before or after its place among the instructions
 * around it: a difference can come out a few cycles long or short, or even
 * negative. A detour is hundreds of cycles and more, so it is found just the
 * same; the compare is signed so that a negative difference (two reads taken
 * out of order) is never a detour. The threshold is set from the same reads
 * (nb_selfish_min_iteration, the fastest 16 iterations in a row), so it
 * includes what they cost. */
#include "selfish.h"

#include "timer.h"

enum { CHUNK = 4096 };

/* Over 16 iterations in a row: unfenced reads overlap, and one iteration
 * alone can come out 1 tick long (its read taken before the one ahead of it
 * completed), which says nothing of what an iteration costs. */
enum { MIN_WINDOW = 16 };

uint64_t nb_selfish_min_iteration(uint64_t iterations)
{
	uint64_t back[MIN_WINDOW], min = UINT64_MAX;

	for (int i = 0; i < MIN_WINDOW; i++)
		back[i] = nb_ticks_unfenced();
	for (uint64_t i = 0; i < iterations; i++) {
		uint64_t now = nb_ticks_unfenced(), span = now - back[i % MIN_WINDOW];

		if ((int64_t)span > 0 && span < min)
			min = span;
		back[i % MIN_WINDOW] = now;
	}
	return (min + MIN_WINDOW / 2) / MIN_WINDOW;
}

double nb_selfish_ordinary_iteration(uint64_t iterations, uint64_t threshold)
{
	uint64_t last = nb_ticks_unfenced(), sum = 0, n = 0;

	for (uint64_t i = 0; i < iterations; i++) {
		uint64_t now = nb_ticks_unfenced();

		if ((int64_t)(now - last) > 0 && now - last <= threshold) {
			sum += now - last;
			n++;
		}
		last = now;
	}
	return n ? (double)sum / (double)n : 0.0;
}

uint64_t nb_selfish_loop(struct nb_detour *restrict detours, size_t max, uint64_t threshold,
			 uint64_t end, size_t *ndetours, uint64_t *from)
{
	uint64_t iterations = 0, last = *from ? *from : nb_ticks_unfenced();
	size_t k = 0;

	if (max == 0)
		goto done;
	for (;;) {
		for (int i = 0; i < CHUNK; i++) {
			uint64_t now = nb_ticks_unfenced();

			if (__builtin_expect((int64_t)(now - last) > (int64_t)threshold, 0)) {
				detours[k].start = last;
				__atomic_store_n(&detours[k].length, now - last, __ATOMIC_RELEASE);
				if (++k == max) {
					iterations += (uint64_t)i + 1;
					last = now;
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
	*from = last;
	return iterations;
}
