/* The driver's options: the common ones every kernel takes, the kernel's
 * own, their usage text and their checks. */
#define _GNU_SOURCE
#include "driver.h"

#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "errors.h"
#include "kernel_files.h"
#include "speed.h"

static const struct option common_options[] = {
	{ "cpus", required_argument, NULL, NB_OPT_CPUS },
	{ "warmup-ms", required_argument, NULL, NB_OPT_WARMUP },
	{ "ticks-per-ns", required_argument, NULL, NB_OPT_TPN },
	{ "inject", required_argument, NULL, NB_OPT_INJECT },
	{ "no-pin", no_argument, NULL, NB_OPT_NO_PIN },
	{ "trace", no_argument, NULL, NB_OPT_TRACE },
	{ "node-files", no_argument, NULL, NB_OPT_NODE_FILES },
	{ "housekeeping", required_argument, NULL, NB_OPT_HOUSEKEEPING },
	{ "metrics", required_argument, NULL, NB_OPT_METRICS },
	{ "metrics-every-cpu", no_argument, NULL, NB_OPT_METRICS_EVERY_CPU },
	{ "requirements", required_argument, NULL, NB_OPT_REQUIREMENTS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, NB_OPT_VERSION },
};

static const struct option samples_options[] = {
	{ "seconds", required_argument, NULL, NB_OPT_SECONDS },
};

static const struct option until_ci_options[] = {
	{ "until-ci", required_argument, NULL, NB_OPT_UNTIL_CI },
};

static const struct option stream_options[] = {
	{ "stream", no_argument, NULL, NB_OPT_STREAM },
	{ "checkpoint", required_argument, NULL, NB_OPT_CHECKPOINT },
	{ "stream-top", required_argument, NULL, NB_OPT_STREAM_TOP },
	{ "stream-context", required_argument, NULL, NB_OPT_STREAM_CONTEXT },
};

static const struct option work_options[] = {
	{ "work", required_argument, NULL, NB_OPT_WORK },
	{ "daxpy-len", required_argument, NULL, NB_OPT_DAXPY },
};

enum { MAX_OPTIONS = 64 };

static void usage(const struct nb_kernel *k)
{
	printf("usage: %s [options]\n%s", nb_program(), k->usage);
	if (k->has_work) {
		printf("  --work KIND          work loop:");
		for (int i = 0; i < nb_work_kind_count; i++)
			printf(" %s", nb_work_kinds[i].name);
		printf(" (default multiiter)\n"
		       "  --daxpy-len N        doubles in each DAXPY vector (default 1024)\n");
	}
	if (k->has_stdout)
		printf("  -s                   write the samples to stdout instead of data files (the\n"
		       "                       result lines to stderr)\n");
	if (k->default_samples)
		printf("  --seconds S          run for S seconds instead of -n samples\n");
	else if (k->default_seconds)
		printf("  --seconds S          run for S seconds (default %g)\n", k->default_seconds);
	if (k->has_stream)
		printf("  --stream             any length in fixed memory: a loss histogram, the\n"
		       "                       longest losses with the samples around them, a line\n"
		       "                       a second (docs/kernels.md); until --seconds or a signal\n"
		       "  --checkpoint S       --stream: write the figures out every S s (default 60)\n"
		       "  --stream-top K       --stream: keep the K longest losses (default 10)\n"
		       "  --stream-context S   --stream: and S s of samples either side (default 1)\n");
	if (k->has_stream || k->stops_at_ci)
		printf("  --until-ci PCT       run until the stolen share's 95%% interval is at most PCT\n"
		       "                       points wide (at least %g s; --seconds the longest,\n"
		       "                       default %g; 0: off)%s\n", NB_UNTIL_CI_MIN_S, NB_UNTIL_CI_MAX_S,
		       k->has_stream ? ": a --stream" : "");
	printf("  -t THREADS           without MPI: measuring threads, one per CPU (default 1\n"
	       "                       for pthreads, OMP_NUM_THREADS for OpenMP; 0 = every CPU)\n"
	       "  --cpus LIST          pin participant i (rank i on its node) to the i-th CPU of\n"
	       "                       LIST, e.g. 0-3,8\n"
	       "  --no-pin             leave placement to the launcher and the OS\n"
	       "  -o PREFIX            output prefix (default: the kernel's name)\n"
	       "  --warmup-ms MS       spin this long, pinned, before the start (default 300)\n"
	       "  --ticks-per-ns X     use this tick rate instead of measuring it\n"
	       "  --inject P:D         every P us, busy-wait D us on each participant\n"
	       "  --inject P:D:poisson the same at random times, P us apart on average\n"
	       "  --trace              name the cause of each sample's loss (tracefs, as root)\n"
	       "  --housekeeping LIST  the CPUs the site keeps for the system (Slurm's\n"
	       "                       CpuSpecList, a boot's housekeeping cores): the report\n"
	       "                       judges them apart from the application's\n"
	       "  --metrics FILE       each node's first rank writes its ranks' figures to FILE\n"
	       "                       ({host}: the node's name), a node_exporter textfile:\n"
	       "                       the node's worst and median CPU, and each CPU that\n"
	       "                       broke a rule\n"
	       "  --metrics-every-cpu  --metrics: the series of every CPU\n"
	       "  --requirements FILE  judge each rank's figures by FILE's rules (default:\n"
	       "                       the Sequoia criteria; noise-info --requirements)\n"
	       "  --node-files         each node's first rank writes its node's rank entries to\n"
	       "                       PREFIX_nodeK.json, which PREFIX.json lists (the default\n"
	       "                       beyond %d ranks)\n"
	       "  -h, --help           this text;  --version  the version\n",
	       NB_INLINE_RANKS);
}

static void common_option(struct nb_run *r, int c, const char *arg)
{
	switch (c) {
	case 'n':
		r->samples = nb_parse_u64("-n", arg, 1, (uint64_t)1 << 40);
		return;
	case 't':
		r->d->threads_opt = (int)nb_parse_u64("-t", arg, 0, NB_MAX_CPUS);
		return;
	case 'o':
		if (!*arg)
			nb_fail(NB_EXIT_USAGE, "-o: the output prefix is empty");
		r->prefix = arg;
		return;
	case 's':
		r->to_stdout = 1;
		return;
	case NB_OPT_CPUS:
		r->d->cpus_opt = arg;
		return;
	case NB_OPT_NO_PIN:
		r->d->pin = 0;
		return;
	case NB_OPT_WARMUP:
		r->d->warmup_ms = (unsigned)nb_parse_u64("--warmup-ms", arg, 0, 600000);
		return;
	case NB_OPT_TPN:
		r->d->ticks_per_ns_opt = nb_parse_double("--ticks-per-ns", arg, 1e-6, 1e6);
		return;
	case NB_OPT_INJECT:
		nb_inject_parse("--inject", arg, &r->inject);
		return;
	case NB_OPT_TRACE:
		r->trace_opt = 1;
		return;
	case NB_OPT_NODE_FILES:
		r->d->node_files = 1;
		return;
	case NB_OPT_HOUSEKEEPING: {
		const char *bad;
		int n = nb_cpu_list_parse(arg, r->d->housekeeping, NB_MAX_CPUS, &bad);

		if (n <= 0)
			nb_fail(NB_EXIT_USAGE, "--housekeeping: '%s' is not a CPU list (e.g. 0,52 or "
				"0-7)", arg);
		r->d->nhousekeeping = n;
		return;
	}
	case NB_OPT_METRICS:
		if (!*arg)
			nb_fail(NB_EXIT_USAGE, "--metrics: the file name is empty");
		r->d->metrics_opt = arg;
		return;
	case NB_OPT_METRICS_EVERY_CPU:
		r->d->metrics_every_cpu = 1;
		return;
	case NB_OPT_REQUIREMENTS:
		if (!*arg)
			nb_fail(NB_EXIT_USAGE, "--requirements: the file name is empty");
		r->d->requirements_opt = arg;
		return;
	case NB_OPT_DAXPY:
		r->daxpy_len = nb_parse_u64("--daxpy-len", arg, 1, (uint64_t)1 << 26);
		return;
	case NB_OPT_SECONDS:
		r->seconds_opt = nb_parse_double("--seconds", arg, 0.001, 1e9);
		return;
	case NB_OPT_STREAM:
		r->stream.on = 1;
		return;
	case NB_OPT_UNTIL_CI:
		r->until_ci = nb_parse_double("--until-ci", arg, 0, 100); /* 0: off */
		return;
	case NB_OPT_CHECKPOINT:
		r->stream.checkpoint_s = nb_parse_double("--checkpoint", arg, 0.1, 86400);
		return;
	case NB_OPT_STREAM_TOP:
		r->stream.top = (int)nb_parse_u64("--stream-top", arg, 1, 10000);
		return;
	case NB_OPT_STREAM_CONTEXT:
		r->stream.context_s = nb_parse_double("--stream-context", arg, 0, 3600);
		return;
	case 'h':
		if (r->ranks.root)
			usage(r->k);
		nb_ranks_finalize(&r->ranks);
		exit(0);
	case NB_OPT_VERSION:
		if (r->ranks.root)
			printf("%s (noisebench) %s\n", nb_program(), NOISEBENCH_VERSION);
		nb_ranks_finalize(&r->ranks);
		exit(0);
	default:
		nb_fail_option(c, r->d->argv);
	}
}

static int is_kernel_option(const struct nb_kernel *k, int c)
{
	if (c >= NB_OPT_KERNEL)
		return 1;
	return c > 0 && c < 256 && c != ':' && strchr(k->shortopts, c) != NULL;
}

/* --until-ci: a streamed kernel runs as a stream (its length open, its
 * memory fixed), one that stops itself (selfish) as it is; --seconds is then
 * the longest. */
static void check_until_ci(struct nb_run *r, int samples_given)
{
	if (r->until_ci <= 0)
		return;
	if (samples_given)
		nb_fail(NB_EXIT_USAGE, "--until-ci runs until the interval is narrow, at most "
			"--seconds: -n has no meaning there");
	r->stream.on = r->k->has_stream;
	r->stream.until_ci = r->until_ci;
	if (r->seconds_opt <= 0)
		r->seconds_opt = NB_UNTIL_CI_MAX_S;
}

/* --seconds, --stream and their options together. */
static void check_stream(struct nb_run *r, int samples_given)
{
	struct nb_stream_opts *o = &r->stream;

	if (samples_given && r->seconds_opt > 0)
		nb_fail(NB_EXIT_USAGE, "-n and --seconds both set the length: give one of them");
	if (!o->on && (o->checkpoint_s > 0 || o->top || o->context_s > 0))
		nb_fail(NB_EXIT_USAGE, "--checkpoint, --stream-top and --stream-context go with "
			"--stream");
	if (!o->on)
		return;
	if (samples_given)
		nb_fail(NB_EXIT_USAGE, "--stream runs for --seconds, or until a signal: -n has no "
			"meaning there");
	if (r->to_stdout || r->trace_opt)
		nb_fail(NB_EXIT_USAGE, "--stream%s writes its own files: not with %s",
			r->until_ci > 0 ? " (so --until-ci)" : "", r->to_stdout ? "-s" : "--trace");
	o->seconds = r->seconds_opt;
	o->checkpoint_s = o->checkpoint_s > 0 ? o->checkpoint_s : 60;
	o->top = o->top ? o->top : 10;
	o->context_s = o->context_s > 0 ? o->context_s : 1;
}

void nb_driver_parse(struct nb_run *r)
{
	const struct nb_kernel *k = r->k;
	static struct option longopts[MAX_OPTIONS];
	char shortopts[64];
	const char *work = "multiiter";
	size_t n = 0;
	int c, samples_given = 0;

	/* leading '+': stop at the first non-option; ':': report a missing value */
	snprintf(shortopts, sizeof(shortopts), "+:t:o:h%s%s%s", k->default_samples ? "n:" : "",
		 k->has_stdout ? "s" : "", k->shortopts);
	for (size_t i = 0; i < sizeof(common_options) / sizeof(*common_options); i++)
		longopts[n++] = common_options[i];
	for (size_t i = 0; k->has_work && i < sizeof(work_options) / sizeof(*work_options); i++)
		longopts[n++] = work_options[i];
	for (size_t i = 0; (k->default_samples || k->default_seconds) &&
			   i < sizeof(samples_options) / sizeof(*samples_options);
	     i++)
		longopts[n++] = samples_options[i];
	for (size_t i = 0; (k->has_stream || k->stops_at_ci) &&
			   i < sizeof(until_ci_options) / sizeof(*until_ci_options);
	     i++)
		longopts[n++] = until_ci_options[i];
	for (size_t i = 0; k->has_stream && i < sizeof(stream_options) / sizeof(*stream_options); i++)
		longopts[n++] = stream_options[i];
	for (const struct option *o = k->longopts; o && o->name && n < MAX_OPTIONS - 1; o++)
		longopts[n++] = *o;
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };

	opterr = 0;
	while ((c = getopt_long(r->d->argc, r->d->argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'n')
			samples_given = 1;
		if (c == NB_OPT_WORK)
			work = optarg;
		else if (is_kernel_option(k, c))
			k->option(r, c, optarg);
		else
			common_option(r, c, optarg);
	}
	if (optind < r->d->argc)
		nb_fail(NB_EXIT_USAGE, "unexpected argument '%s' (see -h)", r->d->argv[optind]);
	check_until_ci(r, samples_given);
	check_stream(r, samples_given);
	r->seconds_given = r->seconds_opt > 0;
	if (r->seconds_opt <= 0)
		r->seconds_opt = k->default_seconds;
	if (!k->has_work)
		return;
	r->work = nb_work_find(work);
	if (!r->work) {
		char known[128] = "";

		for (int i = 0; i < nb_work_kind_count; i++)
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
				 i ? ", " : "", nb_work_kinds[i].name);
		nb_fail(NB_EXIT_USAGE, "--work %s: not compiled into this binary (it has: %s)", work,
			known);
	}
}
