/* noise-info: what the timer allows and what the machine is, before any run. */
#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "json.h"
#include "machine.h"
#include "requirements.h"
#include "errors.h"
#include "timer.h"
#include "work.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: %s [--json] [--ticks-per-ns X]\n"
		   "       %s --requirements [FILE]\n"
		   "Calibrates the timer (read cost, resolution, loop overhead, minimum\n"
		   "measurable duration, ticks per ns), times each work loop compiled in and\n"
		   "describes the machine. With --requirements, prints the rules the kernels\n"
		   "judge by (FILE's, checked, or the default: the Sequoia criteria).\n",
		nb_program(), nb_program());
}

/* The rules a kernel would judge by: the default, or a site's file checked. */
static int print_requirements(const char *path)
{
	static struct nb_requirements q;
	const char *bad;

	if (!path) {
		nb_requirements_default(&q);
	} else if ((bad = nb_requirements_read(path, &q))) {
		nb_fail(NB_EXIT_USAGE, "--requirements %s", bad);
	}
	nb_requirements_print(&q, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static struct nb_machine m;
	struct nb_calibration c;
	struct nb_work_ctx ctx;
	double per_loop[8];
	int as_json = 0;
	double tpn = 0;

	nb_set_program(argv[0]);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			as_json = 1;
		} else if (strcmp(argv[i], "--ticks-per-ns") == 0 && i + 1 < argc) {
			tpn = nb_parse_double("--ticks-per-ns", argv[++i], 1e-6, 1e6);
		} else if (strcmp(argv[i], "--requirements") == 0) {
			return print_requirements(i + 1 < argc ? argv[i + 1] : NULL);
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			nb_fail(NB_EXIT_USAGE, "unknown argument %s (see -h)", argv[i]);
		}
	}
	nb_machine_describe(&m);
	nb_calibrate(&c, tpn);
	nb_work_ctx_init(&ctx, 1024);
	for (int i = 0; i < nb_work_kind_count && i < 8; i++)
		per_loop[i] = nb_work_ticks_per_loop(&nb_work_kinds[i], &ctx, c.ticks_per_ns);
	nb_work_ctx_free(&ctx);

	if (as_json) {
		struct nb_json j;

		nb_json_open(&j, stdout);
		nb_json_object(&j, NULL);
		nb_json_string(&j, "noisebench_version", NOISEBENCH_VERSION);
		nb_json_string(&j, "timer", NB_TIMER_NAME);
		nb_json_double(&j, "ticks_per_ns", c.ticks_per_ns);
		nb_json_string(&j, "ticks_per_ns_source", c.ticks_per_ns_given ? "option" : "measured");
		/* timer_read_*: the mean, as earlier versions wrote it */
		nb_json_double(&j, "timer_read_ticks", c.timer_read_ticks);
		nb_json_double(&j, "timer_read_ns", nb_ticks_to_ns(&c, c.timer_read_ticks));
		nb_json_double(&j, "timer_read_mean_ticks", c.timer_read_ticks);
		nb_json_double(&j, "timer_read_min_ticks", c.timer_read_min_ticks);
		nb_json_double(&j, "timer_read_median_ticks", c.timer_read_median_ticks);
		nb_json_double(&j, "timer_read_min_ns", nb_ticks_to_ns(&c, c.timer_read_min_ticks));
		nb_json_double(&j, "timer_read_median_ns",
			       nb_ticks_to_ns(&c, c.timer_read_median_ticks));
		nb_json_double(&j, "unfenced_read_min_ticks", c.unfenced_read_min_ticks);
		nb_json_double(&j, "unfenced_read_median_ticks", c.unfenced_read_median_ticks);
		nb_json_double(&j, "unfenced_read_min_ns",
			       nb_ticks_to_ns(&c, c.unfenced_read_min_ticks));
		nb_json_double(&j, "unfenced_read_median_ns",
			       nb_ticks_to_ns(&c, c.unfenced_read_median_ticks));
		nb_json_double(&j, "timer_resolution_ticks", c.timer_resolution_ticks);
		nb_json_double(&j, "timer_resolution_ns", nb_ticks_to_ns(&c, c.timer_resolution_ticks));
		nb_json_double(&j, "loop_overhead_ticks", c.loop_overhead_ticks);
		nb_json_double(&j, "loop_overhead_ns", nb_ticks_to_ns(&c, c.loop_overhead_ticks));
		nb_json_double(&j, "min_measurable_ns", c.min_measurable_ns);
		nb_json_int(&j, "cpus_online", c.cpus_online);
		nb_json_int(&j, "cpus_allowed", c.cpus_allowed);
		nb_json_object(&j, "ticks_per_work_loop");
		for (int i = 0; i < nb_work_kind_count && i < 8; i++)
			nb_json_double(&j, nb_work_kinds[i].name, per_loop[i]);
		nb_json_end(&j, '}');
		nb_machine_json(&m, &j, "machine");
		nb_json_end(&j, '}');
		return 0;
	}
	printf("noisebench %s\n", NOISEBENCH_VERSION);
	printf("timer:            %s\n", NB_TIMER_NAME);
	printf("ticks per ns:     %.6f (%s)\n", c.ticks_per_ns,
	       c.ticks_per_ns_given ? "given" : "measured against CLOCK_MONOTONIC_RAW");
	printf("timer read:       %.1f ticks = %.1f ns (mean of a back-to-back run)\n",
	       c.timer_read_ticks, nb_ticks_to_ns(&c, c.timer_read_ticks));
	printf("  one read:       min %.0f, median %.0f ticks (fenced: %s)\n",
	       c.timer_read_min_ticks, c.timer_read_median_ticks, NB_TIMER_NAME);
	printf("  unfenced:       min %.0f, median %.0f ticks (the detour loop's)\n",
	       c.unfenced_read_min_ticks, c.unfenced_read_median_ticks);
	printf("timer resolution: %.1f ticks = %.1f ns\n", c.timer_resolution_ticks,
	       nb_ticks_to_ns(&c, c.timer_resolution_ticks));
	printf("loop overhead:    %.2f ticks = %.2f ns per iteration\n", c.loop_overhead_ticks,
	       nb_ticks_to_ns(&c, c.loop_overhead_ticks));
	printf("min measurable:   %.0f ns (to within 1%%)\n", c.min_measurable_ns);
	printf("cpus allowed:     %d of %d online\n", c.cpus_allowed, c.cpus_online);
	for (int i = 0; i < nb_work_kind_count && i < 8; i++)
		printf("work loop %-9s %.1f ticks = %.1f ns\n", nb_work_kinds[i].name, per_loop[i],
		       nb_ticks_to_ns(&c, per_loop[i]));
	nb_machine_print(&m, stdout);
	return 0;
}
