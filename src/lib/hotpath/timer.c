#include "timer.h"

/* Bracket the tick read between two reference reads and keep the tightest
 * bracket: its midpoint is the reference time of the tick read to within half
 * the bracket (tens of ns), which over a 100 ms span is well under 1 ppm. */
struct nb_clock_pair nb_clock_pair_read(void)
{
	struct nb_clock_pair best = { 0, 0 };
	uint64_t best_width = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t before = nb_raw_ns();
		uint64_t t = nb_ticks();
		uint64_t after = nb_raw_ns();

		if (after - before < best_width) {
			best_width = after - before;
			best.ticks = t;
			best.raw_ns = before + (after - before) / 2;
		}
	}
	return best;
}

double nb_ticks_per_ns_calibrate(unsigned span_ms)
{
	struct nb_clock_pair a = nb_clock_pair_read();
	struct timespec nap = { span_ms / 1000, (long)(span_ms % 1000) * 1000000L };

	while (nanosleep(&nap, &nap) != 0)
		;
	struct nb_clock_pair b = nb_clock_pair_read();

	return (double)(b.ticks - a.ticks) / (double)(b.raw_ns - a.raw_ns);
}
