/* noise-slowdown: makes a CPU run slow, on purpose and on record.
 *
 * A competitor pinned to the CPU, at real-time priority (it preempts what is
 * measured there the moment it wakes), takes the CPU in short slices (ON us
 * busy, OFF us asleep) during stretches (LENGTH ms every EVERY ms). A kernel
 * whose samples are much longer than a slice sees the stretch as running
 * slower, not as detours. With --random the sleeps are drawn at random
 * (exponential, OFF us on average): slices at the times of a Poisson
 * process, which no sampling period keeps in step with. Each slice is
 * logged, "due_tick start_tick end_tick" a line, on the kernels' own timer:
 * the ground truth of how much the competitor took, and when. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calibrate.h"
#include "cpuset.h"
#include "draw.h"
#include "machine.h"
#include "outfile.h"
#include "errors.h"
#include "samples.h"
#include "timer.h"

/* due: when the competitor's sleep ended (the measured thread loses the CPU
 * from then on: the timer's interrupt and the switch); start and end: when it
 * was busy. */
struct slice {
	uint64_t due, start, end;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s --cpu N -o FILE [--seconds S] [--stretch EVERY_MS:LENGTH_MS]\n"
		"          [--slice ON_US:OFF_US] [--random]\n"
		"Takes CPU N in slices of ON us busy and OFF us asleep (default 100:100) for\n"
		"LENGTH ms of every EVERY ms (default 1000:200), for S seconds (default 10) or\n"
		"until SIGTERM/SIGINT, at real-time priority where allowed (CAP_SYS_NICE).\n"
		"--random: each sleep is drawn at random, OFF us on average (a Poisson\n"
		"process of slices).\n"
		"Writes FILE: 'due_tick start_tick end_tick' for each slice: when its sleep\n"
		"ended, and when it was busy.\n",
		nb_program());
}

static void parse_pair(const char *opt, const char *arg, uint64_t *a, uint64_t *b)
{
	char *end;

	errno = 0;
	*a = strtoull(arg, &end, 10);
	if (end == arg || *end != ':' || arg[0] == '-' || errno)
		nb_fail(NB_EXIT_USAGE, "%s %s: expected two numbers, A:B", opt, arg);
	*b = nb_parse_u64(opt, end + 1, 1, 60000000);
	if (*a < 1 || *a > 60000000)
		nb_fail(NB_EXIT_USAGE, "%s %s: the first number must be from 1 to 60000000", opt, arg);
}

/* A Poisson process's next sleep, of mean `mean` us (at least 1). */
static uint64_t exponential_us(uint64_t mean, uint64_t *state)
{
	double x = nb_draw_exponential(state, (double)mean);

	return x < 1 ? 1 : (uint64_t)x;
}

/* Sleeps us microseconds; returns the tick the sleep was due to end. */
static uint64_t sleep_us(uint64_t us, double tpn)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	uint64_t due = nb_ticks() + (uint64_t)((double)us * 1e3 * tpn);

	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	return due;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "stretch", required_argument, NULL, 'r' },
		{ "slice", required_argument, NULL, 'l' },
		{ "random", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t every_ms = 1000, length_ms = 200, on_us = 100, off_us = 100;
	double seconds = 10;
	const char *path = NULL;
	int cpu = -1, random = 0, c;
	uint64_t state = 0x9e3779b97f4a7c15ULL;
	struct nb_calibration cal;

	nb_set_program(argv[0]);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cpu = (int)nb_parse_u64("--cpu", optarg, 0, NB_MAX_CPUS - 1);
			break;
		case 's':
			seconds = nb_parse_double("--seconds", optarg, 0.001, 1e7);
			break;
		case 'r':
			parse_pair("--stretch", optarg, &every_ms, &length_ms);
			break;
		case 'l':
			parse_pair("--slice", optarg, &on_us, &off_us);
			break;
		case 'x':
			random = 1;
			break;
		case 'o':
			path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			nb_fail_option(c, argv);
		}
	}
	if (optind < argc)
		nb_fail(NB_EXIT_USAGE, "unexpected argument '%s' (see -h)", argv[optind]);
	if (cpu < 0 || !path)
		nb_fail(NB_EXIT_USAGE, "--cpu and -o are needed (see -h)");
	if (length_ms > every_ms)
		nb_fail(NB_EXIT_USAGE, "--stretch %llu:%llu: the stretch is longer than its period",
			(unsigned long long)every_ms, (unsigned long long)length_ms);

	struct nb_outfile *out = nb_outfile_open(path);

	if (!out)
		nb_fail(NB_EXIT_USAGE, "-o %s: cannot create it: %s", path, strerror(errno));
	int err = nb_pin_self(cpu);

	if (err)
		nb_fail(NB_EXIT_USAGE, "--cpu %d: cannot pin to it: %s", cpu, strerror(err));
	struct sched_param sp = { .sched_priority = 1 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		nb_warn("no real-time priority (%s): slices start when the scheduler lets them",
			strerror(errno));
	nb_calibrate(&cal, 0);

	/* random sleeps may be short: room for slices back to back */
	size_t max = (size_t)(seconds * 1e6 / (double)(on_us + (random ? 1 : off_us))) + 16, n = 0;
	struct slice *log = nb_samples_alloc(max, sizeof(*log));
	double tpn = cal.ticks_per_ns;
	uint64_t t0 = nb_ticks(), stop_at = t0 + (uint64_t)(seconds * 1e9 * tpn);
	uint64_t every = (uint64_t)((double)every_ms * 1e6 * tpn);
	uint64_t length = (uint64_t)((double)length_ms * 1e6 * tpn);
	uint64_t on = (uint64_t)((double)on_us * 1e3 * tpn);

	uint64_t due = t0;

	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	while (!stop && n < max) {
		uint64_t now = nb_ticks();

		if (now >= stop_at)
			break;
		uint64_t phase = (now - t0) % every;

		if (phase >= length) { /* between stretches: sleep to the next one */
			due = sleep_us((uint64_t)((double)(every - phase) / tpn / 1e3) + 1, tpn);
			continue;
		}
		uint64_t end = now + on;

		while (nb_ticks() < end)
			;
		log[n++] = (struct slice){ due < now ? due : now, now, nb_ticks() };
		due = sleep_us(random ? exponential_us(off_us, &state) : off_us, tpn);
	}
	uint64_t busy = 0;

	for (size_t i = 0; i < n; i++) {
		fprintf(out->f, "%llu %llu %llu\n", (unsigned long long)log[i].due,
			(unsigned long long)log[i].start, (unsigned long long)log[i].end);
		busy += log[i].end - log[i].due;
	}
	nb_outfile_commit_or_fail(out);
	printf("noise-slowdown cpu=%d slices=%zu busy_ms=%.3f\n", cpu, n,
	       (double)busy / tpn / 1e6);
	return 0;
}
