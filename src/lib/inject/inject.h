/* Noise of a known period and length, injected on purpose: a per-thread POSIX
 * timer sends the measuring thread a signal every period (or, as a Poisson
 * stream, at random times a period apart on average), and the handler
 * busy-waits for the duration on that thread.  The whole chain (kernel, files,
 * analysis) can then be checked against what we know is there. */
#ifndef NB_INJECT_H
#define NB_INJECT_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* One injection the handler served, in ticks: when its timer was due, when
 * the handler began (entry - due is the delivery latency: interrupt, signal
 * and any wait for the CPU) and when it returned to the interrupted code; and
 * the CPU it ran on. The ground truth a kernel's findings are matched to. */
struct nb_injection {
	uint64_t due, entry, exit;
	int64_t cpu;
};

/* What a thread's injection timer did: expirations the handler served, and
 * expirations that came while one was still pending (the thread was not
 * running, e.g. in a machine stall) and were folded into it, so served +
 * missed is the number of periods the timer ran. The first `capacity`
 * served are logged in `events`, memory faulted in before the start. */
struct nb_inject_count {
	volatile uint64_t served, missed, logged;
	struct nb_injection *events;
	uint64_t capacity;
};

struct nb_inject {
	uint64_t period_us;
	uint64_t duration_us; /* 0: no injection */
	/* each next injection due DURATION plus an exponential wait (mean PERIOD
	 * - DURATION) after the last was due: a renewal stream that no periodic
	 * work can phase-lock with, its mean period PERIOD */
	int poisson;
	/* measured by nb_inject_setup: how much longer than its logged due to
	 * exit an injection looks to the interrupted code (an interrupt a little
	 * ahead of the due time read back, and the return after the exit tick):
	 * the median of 64 */
	uint64_t overhead_ticks;
};

/* Parses "PERIOD_US:DURATION_US[:periodic|:poisson]"; one line and exit 2
 * when it makes no sense. */
void nb_inject_parse(const char *opt, const char *arg, struct nb_inject *in);

/* Measures the injector's overhead (overhead_ticks) and installs the
 * handler; call once, before any thread arms a timer. Returns why it could
 * not (one line), or NULL: every rank of a run fails here alike, and the
 * caller has one of them say so. */
const char *nb_inject_setup(struct nb_inject *in, double ticks_per_ns);

/* Faults in room for the injections of a run of about `seconds`, before the
 * warm-up: four times that, as noise (the injection's own included) can
 * stretch a run of fixed work to several times its nominal length, and the
 * log cannot grow inside the handler. */
void nb_inject_log_alloc(const struct nb_inject *in, double seconds,
			 struct nb_inject_count *count);
void nb_inject_log_free(struct nb_inject_count *count);

/* Writes the first n injections logged (a run stopped by a signal may still
 * be logging: n is the count its JSON gives), "due_tick entry_tick exit_tick
 * cpu" a line; returns what fprintf returned last (negative on error). */
int nb_inject_log_write(FILE *f, const struct nb_inject_count *count, uint64_t n);

/* Arms/disarms the calling thread's timer; a no-op without injection.  The
 * handler counts what it serves and what was missed in *count. */
void nb_inject_arm(const struct nb_inject *in, timer_t *timer, struct nb_inject_count *count);
void nb_inject_disarm(const struct nb_inject *in, timer_t timer);

#endif
