/* Noise of a known period and length, injected on purpose: a per-thread POSIX
 * timer sends the measuring thread a signal every period, and the handler
 * busy-waits for the duration on that thread.  The whole chain (kernel, files,
 * analysis) can then be checked against what we know is there. */
#ifndef NB_INJECT_H
#define NB_INJECT_H

#include <stdint.h>
#include <time.h>

/* What a thread's injection timer did: expirations the handler served, and
 * expirations that came while one was still pending (the thread was not
 * running, e.g. in a machine stall) and were folded into it, so served +
 * missed is the number of periods the timer ran. */
struct nb_inject_count {
	volatile uint64_t served, missed;
};

struct nb_inject {
	uint64_t period_us;
	uint64_t duration_us; /* 0: no injection */
};

/* Parses "PERIOD_US:DURATION_US"; one line and exit 2 when it makes no sense. */
void nb_inject_parse(const char *opt, const char *arg, struct nb_inject *in);

/* Installs the handler; call once, before any thread arms a timer. */
void nb_inject_setup(const struct nb_inject *in, double ticks_per_ns);

/* Arms/disarms the calling thread's timer; a no-op without injection.  The
 * handler counts what it serves and what was missed in *count. */
void nb_inject_arm(const struct nb_inject *in, timer_t *timer, struct nb_inject_count *count);
void nb_inject_disarm(const struct nb_inject *in, timer_t timer);

#endif
