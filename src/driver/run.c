#define _GNU_SOURCE
#include "driver.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuset.h"
#include "errors.h"
#include "figures.h"
#include "interrupt.h"
#include "kernel_files.h"
#include "metrics.h"
#include "node_data.h"
#include "samples.h"
#include "timer.h"

/* The run the signal thread finishes when SIGINT/SIGTERM arrives. */
static struct nb_run *current;

static void finish(struct nb_run *r, int signo);

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
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, NB_OPT_VERSION },
};

static const struct option samples_options[] = {
	{ "seconds", required_argument, NULL, NB_OPT_SECONDS },
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
		printf("  -s                   write the samples to stdout instead of data files\n");
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
	       "  --trace              attribute each detour to its cause (tracefs, as root)\n"
	       "  --housekeeping LIST  the CPUs the site keeps for the system (Slurm's\n"
	       "                       CpuSpecList, a boot's housekeeping cores): the report\n"
	       "                       judges them apart from the application's\n"
	       "  --metrics FILE       each node's first rank writes its ranks' figures to FILE\n"
	       "                       ({host}: the node's name), a node_exporter textfile\n"
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
	case NB_OPT_DAXPY:
		r->daxpy_len = nb_parse_u64("--daxpy-len", arg, 1, (uint64_t)1 << 26);
		return;
	case NB_OPT_SECONDS:
		r->seconds_opt = nb_parse_double("--seconds", arg, 0.001, 1e9);
		return;
	case NB_OPT_STREAM:
		r->stream.on = 1;
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
		nb_fail(NB_EXIT_USAGE, "--stream writes its own files: not with %s",
			r->to_stdout ? "-s" : "--trace");
	o->seconds = r->seconds_opt;
	o->checkpoint_s = o->checkpoint_s > 0 ? o->checkpoint_s : 60;
	o->top = o->top ? o->top : 10;
	o->context_s = o->context_s > 0 ? o->context_s : 1;
}

static void parse(struct nb_run *r)
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
	check_stream(r, samples_given);
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

/* Every rank learns whether any failed; the first failing one says why in
 * one line, and all leave having written nothing, with exit code `code`. */
static void agree_or_exit(struct nb_run *r, const char *why, int code)
{
	int first = nb_ranks_first_failing(&r->ranks, why != NULL);

	if (first < 0)
		return;
	nb_outfile_discard_all();
	nb_set_exit_hook(NULL, 0);
	if (first == r->ranks.rank)
		fprintf(stderr, "%s: error: %s\n", nb_program(), why);
	nb_ranks_finalize(&r->ranks);
	exit(code);
}

/* agree_or_exit for bad input */
static void agree(struct nb_run *r, const char *why)
{
	agree_or_exit(r, why, NB_EXIT_USAGE);
}

static void file_name(struct nb_run *r, int rank, const char *suffix, char *buf, size_t size,
		      int base)
{
	const char *slash = strrchr(r->prefix, '/');

	snprintf(buf, size, "%s_%d_%s", base && slash ? slash + 1 : r->prefix, rank, suffix);
}

/* Node `node`'s description (kernels.json's node_files; base: without the
 * prefix's directory, as PREFIX.json names it) */
static void node_file_name(struct nb_run *r, int node, char *buf, size_t size, int base)
{
	const char *slash = strrchr(r->prefix, '/');

	snprintf(buf, size, NB_NODE_FILE_FORMAT, base && slash ? slash + 1 : r->prefix, node);
}

/* Opens `path` as out, or says why not in why. */
static void open_one(struct nb_run *r, const char *path, struct nb_outfile **out, char *why,
		     size_t size)
{
	if (why[0])
		return;
	*out = nb_outfile_open(path);
	if (!*out)
		snprintf(why, size, "-o %s: cannot create %s: %s", r->prefix, path, strerror(errno));
}

/* Each local participant's data files of its own. */
static void open_rank_files(struct nb_run *r, char *why, size_t size)
{
	const struct nb_kernel *k = r->k;
	char path[4096];

	for (int i = 0; i < r->ranks.nlocal; i++)
		for (int f = 0; f < k->nfiles; f++) {
			file_name(r, r->ranks.local[i].index, k->suffixes[f], path, sizeof(path), 0);
			open_one(r, path, &r->d->files[i * k->nfiles + f], why, size);
		}
}

/* Each local participant's injection log of its own. */
static void open_inject_files(struct nb_run *r, char *why, size_t size)
{
	char path[4096];

	for (int i = 0; i < r->ranks.nlocal; i++) {
		file_name(r, r->ranks.local[i].index, "injections.dat", path, sizeof(path), 0);
		open_one(r, path, &r->d->inject_files[i], why, size);
	}
}

static const char *const injections_suffix[] = { "injections.dat" };
static const char *const causes_suffix[] = { "causes.dat" };

/* Whether `mine` holds on every rank of the run (a collective). */
static int every_rank(struct nb_ranks *rk, int mine)
{
	return nb_ranks_first_failing(rk, !mine) < 0;
}

/* Every file is created under its temporary name before anything is
 * measured, on every rank: an unwritable prefix fails now, not after the run. */
static void open_files(struct nb_run *r)
{
	struct nb_ranks *rk = &r->ranks;
	const struct nb_kernel *k = r->k;
	char path[4096], why[4400] = "";
	int files = !r->to_stdout;
	int data = files && !r->stream.on; /* a stream writes its own (stream.h) */

	if (k->nfiles > NB_MAX_NFILES)
		nb_fail(NB_EXIT_FAILURE, "%s writes %d kinds of data file, more than the "
			"catalogue's %d", k->name, k->nfiles, NB_MAX_NFILES);
	/* NB_INLINE_RANKS (kernels.json): the most ranks whose entries PREFIX.json
	 * holds itself, 4-17 MB, which the root writes and R reads in seconds.
	 * Beyond, each node's first rank writes its node's, all nodes at once,
	 * and no file grows with the ranks of the whole machine, nor does the
	 * count of files: the data files are the node's too (node_data.h). */
	/* A node's files are written by all its ranks at once: each kind only
	 * if every rank of the run asked for it (the ranks of an MPMD job,
	 * srun --multi-prog, may be given different options). */
	r->d->node_files = every_rank(rk, r->d->node_files || rk->size > NB_INLINE_RANKS);
	r->d->data_by_node = every_rank(rk, data && r->d->node_files);
	int inject_by_node = every_rank(rk, r->inject.duration_us != 0) && r->d->data_by_node;
	int causes_by_node = every_rank(rk, r->trace_opt) && r->d->data_by_node;

	r->d->files = calloc((size_t)rk->nlocal * k->nfiles, sizeof(*r->d->files));
	r->d->inject_files = calloc(rk->nlocal, sizeof(*r->d->inject_files));
	if (!r->d->files || !r->d->inject_files)
		nb_fail(NB_EXIT_FAILURE, "out of memory");

	if (data && !r->d->data_by_node)
		open_rank_files(r, why, sizeof(why));
	if (r->d->data_by_node && !why[0])
		nb_node_set_open(r, &r->d->node_data, k->nfiles, k->suffixes, why, sizeof(why));
	if (inject_by_node && !why[0])
		nb_node_set_open(r, &r->d->node_injections, 1, injections_suffix, why, sizeof(why));
	else if (files && r->inject.duration_us)
		open_inject_files(r, why, sizeof(why));
	if (causes_by_node && !why[0])
		nb_node_set_open(r, &r->d->node_causes, 1, causes_suffix, why, sizeof(why));
	if (rk->root) {
		snprintf(path, sizeof(path), "%s.json", r->prefix);
		open_one(r, path, &r->d->json, why, sizeof(why));
	}
	if (r->d->node_files && rk->node_first) {
		node_file_name(r, rk->node, path, sizeof(path), 0);
		open_one(r, path, &r->d->node_json, why, sizeof(why));
	}
	if (r->d->metrics_opt && rk->node_first && !why[0]) {
		if (nb_metrics_path(r->d->metrics_opt, rk->host, path, sizeof(path)) != 0)
			snprintf(why, sizeof(why), "--metrics %s: the name is too long",
				 r->d->metrics_opt);
		else if (!(r->d->metrics = nb_outfile_open(path)))
			snprintf(why, sizeof(why), "--metrics: cannot create %s: %s", path,
				 strerror(errno));
	}
	agree(r, why[0] ? why : NULL);
}

static void check_memory(struct nb_run *r)
{
	size_t each = r->k->sample_size;
	long double per = (long double)r->samples * each;
	uint64_t avail = nb_memory_available();
	static char why[512];

	if (r->stream.on && r->sample_ticks > 0)
		per = nb_stream_memory(&r->stream, r->sample_ticks, r->cal.ticks_per_ns, each);
	else if (r->stream.on)
		per = 0; /* known once configured */
	long double need = per * r->ranks.nlocal;

	if (need > 0.8L * avail)
		snprintf(why, sizeof(why),
			 "%d participants x %.1Lf MiB (%s) need %.1Lf GiB, more than the %.1f GiB %s "
			 "has available",
			 r->ranks.nlocal, per / (1u << 20),
			 r->stream.on ? "--stream's ring and events" : "their samples",
			 need / (1u << 30), (double)avail / (1u << 30), r->ranks.host);
	agree(r, why[0] ? why : NULL);
}

static void prepare_participant(struct nb_thread *t)
{
	struct nb_run *r = t->arg;

	nb_work_ctx_init(&t->work, r->daxpy_len);
	if (r->stream.on) {
		t->stream = &r->d->streams[t - r->ranks.local];
		nb_stream_init(t->stream, &r->stream, r->k->stream_kind, r->sample_ticks,
			       r->cal.ticks_per_ns);
	} else if (r->k->grows) {
		t->samples = nb_samples_reserve(r->samples, r->k->sample_size);
	} else {
		t->samples = nb_samples_alloc(r->samples, r->k->sample_size);
	}
	if (r->k->prepare)
		r->k->prepare(t);
}

/* --stream: each participant's figures, labelled, and the writer that
 * folds them in while the threads measure. */
static void start_streams(struct nb_run *r)
{
	struct nb_ranks *rk = &r->ranks;
	struct nb_stream **each = calloc(rk->nlocal, sizeof(*each));

	r->d->streams = calloc(rk->nlocal, sizeof(*r->d->streams));
	if (!r->d->streams || !each)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (int i = 0; i < rk->nlocal; i++) {
		struct nb_stream *s = &r->d->streams[i];

		s->rank = rk->local[i].index;
		s->cpu = rk->cpus[i];
		snprintf(s->host, sizeof(s->host), "%.63s", rk->host);
		s->kernel = r->k->name;
		s->work = r->work->name;
		s->loops = r->work_loops;
		s->quantum_ticks = (uint64_t)r->sample_ticks;
		file_name(r, s->rank, "", s->path, sizeof(s->path), 0);
		each[i] = s;
	}
	r->d->writer = nb_stream_writer_start(each, rk->nlocal, &r->stream, rk->cpus, rk->nlocal);
}

static void measure(struct nb_run *r)
{
	struct nb_ranks *rk = &r->ranks;

	r->d->team = (struct nb_team){
		.nthreads = rk->nlocal,
		.cpus = rk->cpus,
		.warmup_ms = r->d->warmup_ms,
		.lead_ticks = (uint64_t)(1e6 * r->cal.ticks_per_ns), /* 1 ms */
		.inject = &r->inject,
		.seconds = r->seconds,
		.prepare = prepare_participant,
		.measure = r->k->measure,
	};
	r->d->cause_files = nb_causes_start(&r->d->trace, r->trace_opt, rk->local, rk->cpus, rk->nlocal,
					 r->seconds + r->d->warmup_ms / 1000.0 + 1, r->prefix,
					 r->to_stdout || r->d->node_causes.ranges);
	nb_kcounts_before(&r->d->kcounts);
	nb_tuning_before(&r->d->tuning, &r->d->machine, rk->cpus, rk->nlocal, nb_ranks_library());
	if (r->stream.on)
		start_streams(r);
	clock_gettime(CLOCK_REALTIME, &r->d->info.start_utc);
	r->d->info.start = nb_clock_pair_read();
	__atomic_store_n(&r->d->measuring, 1, __ATOMIC_RELEASE);
	nb_ranks_run(rk, &r->d->team);
	pthread_mutex_lock(&r->d->out_lock);
}

static void on_signal(int signo)
{
	struct nb_run *r = current;
	char name[16];

	if (!__atomic_load_n(&r->d->measuring, __ATOMIC_ACQUIRE)) {
		/* Silent when nothing was created: a launcher stopping the other
		 * ranks of a job that failed its checks needs no second word. */
		nb_trace_remove(&r->d->trace);
		if (nb_outfile_discard_all())
			fprintf(stderr, "%s: interrupted by %s before measuring; nothing written\n",
				nb_program(), nb_signal_name(signo, name, sizeof(name)));
		_exit(128 + signo);
	}
	/* Blocks for good when the complete results are being written: the main
	 * thread then exits with them. */
	pthread_mutex_lock(&r->d->out_lock);
	nb_trace_skip(&r->d->trace, signo);
	nb_causes_discard(r->d->cause_files, r->ranks.nlocal);
	finish(r, signo);
	nb_trace_remove(&r->d->trace);
	if (signo)
		printf("interrupted by %s: the files hold the samples taken until then\n",
		       nb_signal_name(signo, name, sizeof(name)));
	fflush(stdout);
	/* mpirun kills the whole job when one rank exits non-zero: every rank
	 * waits a moment after writing, so all have written before any exits. */
	if (r->ranks.nlocal < r->ranks.size) {
		struct timespec grace = { 2, 0 };

		nanosleep(&grace, NULL);
	}
	_exit(128 + signo);
}

static void free_run(struct nb_run *r)
{
	for (int i = 0; i < r->ranks.nlocal; i++) {
		struct nb_thread *t = &r->ranks.local[i];

		nb_samples_free(t->samples, r->samples, r->k->sample_size);
		if (t->stream)
			nb_stream_free(t->stream);
		nb_work_ctx_free(&t->work);
		nb_inject_log_free(&t->injections);
	}
	free(r->d->files);
	nb_node_set_discard(&r->d->node_data);
	nb_node_set_discard(&r->d->node_injections);
	nb_node_set_discard(&r->d->node_causes);
	free(r->d->inject_files);
	free(r->d->cause_files);
	free(r->d->streams);
	free(r->d->machines);
	nb_trace_free(&r->d->trace);
	nb_kcounts_free(&r->d->kcounts);
	nb_ranks_finalize(&r->ranks);
}

int nb_driver_main(const struct nb_kernel *k, int argc, char **argv)
{
	static struct nb_driver driver;
	static struct nb_run run = { .d = &driver };
	struct nb_run *r = &run;

	nb_set_program(argv[0]);
	r->k = k;
	r->prefix = k->name;
	r->samples = k->default_samples;
	r->d->threads_opt = -1;
	r->d->pin = 1;
	r->d->warmup_ms = 300;
	r->daxpy_len = 1024;
	pthread_mutex_init(&r->d->out_lock, NULL);
	current = r;
	nb_interrupt_start(on_signal);
	/* MPI after the signal thread: the threads it starts block SIGINT and
	 * SIGTERM too */
	nb_ranks_init(&r->ranks, &argc, &argv);
	r->d->argc = argc;
	r->d->argv = argv;
	parse(r);
	r->d->results = r->stream.on ? &nb_stream_results : &k->results;
	if (k->check)
		k->check(r);
	nb_ranks_place(&r->ranks, r->d->threads_opt, r->d->cpus_opt, r->d->pin);
	if (r->to_stdout && r->ranks.nlocal < r->ranks.size)
		nb_fail(NB_EXIT_USAGE, "-s: %d MPI ranks cannot share stdout; leave -s out to get "
			"one data file per rank", r->ranks.size);
	check_memory(r);
	open_files(r);

	nb_machine_describe(&r->d->machine);
	r->d->machines = nb_ranks_hosts(&r->ranks, &r->d->machine, sizeof(r->d->machine), &r->d->nhosts);
	nb_calibrate(&r->cal, r->d->ticks_per_ns_opt);
	agree_or_exit(r, nb_inject_setup(&r->inject, r->cal.ticks_per_ns), NB_EXIT_FAILURE);
	for (int i = 0; i < r->ranks.nlocal; i++)
		r->ranks.local[i].arg = r;
	agree(r, k->configure(r));
	if (r->seconds_opt > 0 || r->stream.on)
		check_memory(r);
	r->d->info = (struct nb_run_info){
		.kernel = k->name, .frontend = nb_ranks_frontend(), .argc = r->d->argc,
		.argv = r->d->argv, .cal = &r->cal, .inject = &r->inject,
		.warmup_ms = r->d->warmup_ms, .machine = &r->d->machine,
	};
	measure(r);
	finish(r, 0);
	fflush(stdout);
	free_run(r);
	return 0;
}

void nb_run_samples_for(struct nb_run *r, double sample_seconds)
{
	if (r->seconds_opt <= 0)
		return;
	/* whole samples covering it, but for 10 ppm: FTQ's quantum is whole
	 * ticks, so 2 s at 10 kHz is 20000 quanta, not 20001 */
	double x = r->seconds_opt / sample_seconds, n = ceil(x - 1e-5 * x);

	r->samples = n < 1 ? 1 : (uint64_t)n;
}

FILE *nb_run_file(struct nb_run *r, int local, int f)
{
	size_t i = (size_t)local * r->k->nfiles + f;

	if (r->to_stdout)
		return stdout;
	return r->d->data ? r->d->data[i] : r->d->files[i]->f;
}

static size_t taken(struct nb_run *r, int local, int signo)
{
	if (!signo)
		return r->samples;
	return nb_samples_taken(r->ranks.local[local].samples, r->samples, r->k->sample_size,
				r->k->done_word);
}

static struct nb_participant *participant_at(const struct nb_run *r, char *mine, int local)
{
	return (struct nb_participant *)(mine + (size_t)local * r->d->results->size);
}

static void participant(struct nb_run *r, int local, uint64_t samples, struct nb_participant *p)
{
	struct nb_thread *t = &r->ranks.local[local];
	int64_t before[2], after[2];

	*p = (struct nb_participant){
		.rank = t->index,
		.cpu = t->cpu,
		.ticks_per_ns = r->cal.ticks_per_ns,
		.timer_read_ticks = r->cal.timer_read_ticks,
		.samples = samples,
		.start_tick = t->start_tick,
		.end_tick = t->end_tick,
		.inject_period_us = r->inject.period_us,
		.inject_duration_us = r->inject.duration_us,
		.inject_poisson = r->inject.poisson,
		.injections = t->injections.served,
		.injections_missed = t->injections.missed,
		.injections_logged = __atomic_load_n(&t->injections.logged, __ATOMIC_ACQUIRE),
		.steal_ms = nb_team_steal_ms(t),
	};
	snprintf(p->host, sizeof(p->host), "%.63s", r->ranks.host);
	p->data_node = r->d->data_by_node ? r->ranks.node : -1;
	p->inject_node = r->d->node_injections.ranges ? r->ranks.node : -1;
	p->causes_node = r->d->node_causes.ranges ? r->ranks.node : -1;
	if (p->data_node >= 0)
		memcpy(p->data_ranges, r->d->node_data.ranges + (size_t)local * r->k->nfiles,
		       r->k->nfiles * sizeof(*p->data_ranges));
	if (p->inject_node >= 0)
		memcpy(p->inject_range, r->d->node_injections.ranges[local], sizeof(p->inject_range));
	nb_cpu_place(t->cpu, &p->place);
	nb_kcounts_after(&r->d->kcounts);
	nb_team_switches(t, before, after);
	nb_kcounts_summary(&r->d->kcounts, t->cpu, before, after, &p->kcounts);
}

/* --trace: joins a local participant's detours (in time order) to what the
 * trace saw on its CPU, writes its causes into f (name: f's, for errors) and
 * fills *tot; 0 when nothing could be attributed. */
static int attribute(struct nb_run *r, int local, size_t n, FILE *f, const char *name,
		     struct nb_cause_totals *tot)
{
	struct nb_cause_detour *d = NULL;
	size_t nd;

	memset(tot, 0, sizeof(*tot));
	if (!r->d->trace.started || !r->d->results->detours)
		return 0;
	if (!r->d->trace.read &&
	    nb_trace_read(&r->d->trace, r->cal.ticks_per_ns, r->d->info.start.ticks,
			  r->d->info.start.raw_ns) != 0) {
		nb_warn("--trace: detours not attributed: %s", r->d->trace.why);
		r->d->trace.started = 0;
		return 0;
	}
	nd = r->d->results->detours(r, local, n, &d);
	nb_causes_attribute(&r->d->trace, r->ranks.local, r->ranks.nlocal, local, d, nd,
			    r->cal.ticks_per_ns, f, name, tot);
	free(d);
	return 1;
}

struct node_causes {
	const size_t *n;
	char *mine;
};

static int write_node_causes(struct nb_run *r, FILE **files, void *arg)
{
	const struct node_causes *a = arg;
	int attributed = 0;

	for (int i = 0; i < r->ranks.nlocal; i++)
		attributed += attribute(r, i, a->n[i], files[i], r->prefix,
					&participant_at(r, a->mine, i)->causes);
	return attributed;
}

/* --trace: every local participant's causes, in its node's file or its own. */
static void attribute_all(struct nb_run *r, const size_t *n, char *mine)
{
	if (r->d->node_causes.ranges) {
		struct node_causes a = { n, mine };

		/* the trace is read, and the detours joined, once to count the
		 * bytes and once to write them */
		nb_node_set_write(r, &r->d->node_causes, write_node_causes, &a);
		for (int i = 0; i < r->ranks.nlocal; i++)
			memcpy(participant_at(r, mine, i)->causes_range, r->d->node_causes.ranges[i],
			       sizeof(r->d->node_causes.ranges[i]));
		return;
	}
	for (int i = 0; i < r->ranks.nlocal; i++) {
		struct nb_outfile *o = r->d->cause_files[i];

		r->d->cause_files[i] = NULL;
		if (attribute(r, i, n[i], o ? o->f : NULL, o ? o->tmp : NULL,
			      &participant_at(r, mine, i)->causes) && o)
			nb_outfile_commit_or_fail(o);
		else if (o)
			nb_outfile_discard(o);
	}
}

/* Writes the injection logs, as many injections as each record says, then
 * renames the local data files into place; fails the run if any could not
 * be written. */
static void commit_files(struct nb_run *r, char *mine)
{
	for (int i = 0; i < r->ranks.nlocal; i++) {
		struct nb_outfile *o = r->d->inject_files[i];

		if (!o)
			continue;
		if (nb_inject_log_write(o->f, &r->ranks.local[i].injections,
					participant_at(r, mine, i)->injections_logged) < 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", o->tmp, strerror(errno));
		nb_outfile_commit_or_fail(o);
		r->d->inject_files[i] = NULL;
	}
	for (int i = 0; i < r->ranks.nlocal * r->k->nfiles; i++)
		if (r->d->files[i])
			nb_outfile_commit_or_fail(r->d->files[i]);
}

void *nb_run_gather(struct nb_run *r, const void *mine, size_t each, int signo, int *n)
{
	struct nb_ranks *rk = &r->ranks;
	void *all;

	*n = signo ? rk->nlocal : rk->size;
	all = rk->root ? calloc(*n, each) : NULL;
	if (rk->root && !all)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the results");
	if (signo && rk->root)
		memcpy(all, mine, each * rk->nlocal);
	else if (!signo)
		nb_ranks_gather(rk, mine, each, all);
	return all;
}

/* A rank's result record, one line, the same grammar for every kernel (the
 * catalogue's rank_line): "rank kernel=K rank=N host=H cpu=C", then the
 * kernel's key=value figures, the injections and the causes. */
static void rank_line(const struct nb_run *r, const void *record, FILE *out)
{
	const struct nb_participant *p = record;

	fprintf(out, "rank kernel=%s rank=%d host=%s cpu=%d", r->k->name, p->rank, p->host,
		p->cpu);
	r->d->results->print(r, record, out);
	if (p->tails.measured)
		nb_tails_print(&p->tails, out);
	fprintf(out, " injections=%llu", (unsigned long long)p->injections);
	if (p->inject_duration_us)
		fprintf(out, " injections_missed=%llu", (unsigned long long)p->injections_missed);
	/* with --trace, whether this rank's detours were attributed: the ranks
	 * line's traced_min says whether every rank's were */
	if (r->trace_opt)
		fprintf(out, " traced=%d", p->causes.attributed ? 1 : 0);
	nb_causes_print(&p->causes, out);
	fputc('\n', out);
}

/* the rank line's prefix, which says which rank, not how it measured */
static const char *const rank_line_prefix[] = { "kernel", "rank", "host", "cpu", NULL };

/* A rank's line as text, to free. */
static char *rank_line_text(const struct nb_run *r, const void *record)
{
	char *line = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&line, &size);

	if (!f)
		nb_fail(NB_EXIT_FAILURE, "out of memory for a result line");
	rank_line(r, record, f);
	if (fclose(f))
		nb_fail(NB_EXIT_FAILURE, "out of memory for a result line");
	return line;
}

/* A rank's line into the figures of the run's "ranks" line; its text, to
 * free, in *text when text is not NULL. */
static void add_rank_line(const struct nb_run *r, const void *record, struct nb_figures *fs,
			  char **text)
{
	char *line = rank_line_text(r, record);

	nb_figures_add_line(fs, line, rank_line_prefix);
	if (text)
		*text = line;
	else
		free(line);
}

static void json_head(struct nb_run *r, struct nb_json *j, int signo)
{
	clock_gettime(CLOCK_REALTIME, &r->d->info.end_utc);
	r->d->info.end = nb_clock_pair_read();
	nb_tuning_after(&r->d->tuning, &r->d->machine, r->ranks.cpus, r->ranks.nlocal);
	r->d->info.signo = signo;
	nb_json_open(j, r->d->json->f);
	nb_json_run_head(j, &r->d->info);
	nb_json_int(j, "ranks_in_run", r->ranks.size);
	if (r->d->nhousekeeping) {
		nb_json_array(j, "housekeeping_cpus");
		for (int i = 0; i < r->d->nhousekeeping; i++)
			nb_json_int(j, NULL, r->d->housekeeping[i]);
		nb_json_end(j, ']');
	}
	if (r->k->has_work) {
		nb_json_string(j, "work", r->work->name);
		if (strcmp(r->work->name, "daxpy") == 0)
			nb_json_uint(j, "daxpy_len", r->daxpy_len);
	}
	if (r->k->default_samples)
		nb_json_uint(j, "samples_requested", r->samples);
	nb_json_uint(j, "start_tick", r->d->team.start_tick);
	nb_trace_json(j, &r->d->trace);
	nb_tuning_json(j, &r->d->tuning);
	/* one description per host: MPI runs span nodes */
	nb_json_array(j, "machines");
	for (int h = 0; h < r->d->nhosts; h++)
		nb_machine_json(&r->d->machines[h], j, NULL);
	nb_json_end(j, ']');
}

/* A participant's file of this suffix as the JSON names it: its node's
 * (node >= 0) or its own. */
static void participant_file(struct nb_run *r, int rank, int node, const char *suffix, char *buf,
			     size_t size)
{
	if (node >= 0)
		nb_node_file_name(r, node, suffix, buf, size, 1);
	else
		file_name(r, rank, suffix, buf, size, 1);
}

static void json_participant(struct nb_run *r, struct nb_json *j, const struct nb_participant *p)
{
	char name[4096];

	nb_json_object(j, NULL);
	nb_json_int(j, "rank", p->rank);
	nb_json_string(j, "host", p->host);
	nb_json_int(j, "cpu", p->cpu);
	nb_cpu_place_json(j, &p->place);
	nb_json_uint(j, "samples", p->samples);
	nb_json_double(j, "ticks_per_ns", p->ticks_per_ns);
	nb_json_double(j, "timer_read_ticks", p->timer_read_ticks);
	nb_json_array(j, "files");
	for (int f = 0; f < r->k->nfiles && !r->to_stdout && !r->stream.on; f++) {
		participant_file(r, p->rank, p->data_node, r->k->suffixes[f], name, sizeof(name));
		nb_json_string(j, NULL, name);
	}
	nb_json_end(j, ']');
	if (p->data_node >= 0) {
		nb_json_array(j, "file_ranges");
		for (int f = 0; f < r->k->nfiles; f++)
			nb_json_range(j, NULL, p->data_ranges[f]);
		nb_json_end(j, ']');
	}
	nb_json_uint(j, "start_tick", p->start_tick);
	nb_json_uint(j, "end_tick", p->end_tick);
	nb_json_uint(j, "injections", p->injections);
	nb_json_uint(j, "injections_missed", p->injections_missed);
	nb_json_uint(j, "injections_logged", p->injections_logged);
	nb_json_double(j, "steal_ms", p->steal_ms);
	nb_kcounts_json(j, &p->kcounts);
	/* ranks of one MPMD job (srun --multi-prog) may be given different ones */
	if (p->inject_duration_us) {
		nb_json_object(j, "inject");
		nb_json_uint(j, "period_us", p->inject_period_us);
		nb_json_uint(j, "duration_us", p->inject_duration_us);
		nb_json_string(j, "pattern", p->inject_poisson ? "poisson" : "periodic");
		nb_json_end(j, '}');
	}
	if (p->inject_duration_us && !r->to_stdout) {
		participant_file(r, p->rank, p->inject_node, injections_suffix[0], name, sizeof(name));
		nb_json_string(j, "injections_file", name);
		if (p->inject_node >= 0)
			nb_json_range(j, "injections_file_range", p->inject_range);
	}
	if (r->trace_opt) {
		participant_file(r, p->rank, p->causes_node, causes_suffix[0], name, sizeof(name));
		nb_causes_json(j, &p->causes, p->ticks_per_ns, r->to_stdout ? NULL : name,
			       p->causes_node >= 0 ? p->causes_range : NULL);
	}
}

static void json_tail(struct nb_run *r, struct nb_json *j, int n, uint64_t samples)
{
	char path[4096];

	nb_json_run_tail(j, &r->d->info);
	snprintf(path, sizeof(path), "%s", r->d->json->path);
	nb_outfile_commit_or_fail(r->d->json);
	printf("run kernel=%s complete=%s ranks=%d samples=%llu json=%s\n", r->k->name,
	       r->d->info.signo ? "false" : "true", n, (unsigned long long)samples, path);
}

uint64_t nb_run_start_tick(const struct nb_run *r)
{
	return r->d->team.start_tick;
}

int nb_run_node_files(const struct nb_run *r)
{
	return r->d->node_files;
}

int nb_run_signal(const struct nb_run *r)
{
	return r->d->info.signo;
}

void nb_run_sum(struct nb_run *r, double *v, size_t n, int signo)
{
	if (!signo)
		nb_ranks_sum_doubles(&r->ranks, v, n);
}

void nb_run_sum_u64(struct nb_run *r, uint64_t *v, size_t n, int signo)
{
	if (!signo)
		nb_ranks_sum_u64(&r->ranks, v, n);
}

void nb_run_max(struct nb_run *r, double *v, size_t n, int signo)
{
	if (!signo)
		nb_ranks_max_doubles(&r->ranks, v, n);
}

double nb_run_ticks_per_work_loop(const struct nb_run *r)
{
	static double ticks;
	struct nb_work_ctx ctx;

	if (ticks == 0) {
		nb_work_ctx_init(&ctx, r->daxpy_len);
		ticks = nb_work_ticks_per_loop(r->work, &ctx, r->cal.ticks_per_ns);
		nb_work_ctx_free(&ctx);
	}
	return ticks;
}

/* Every participant's loss histogram summed where the participants are: the
 * whole run's distribution of the loss, in fixed memory whatever the ranks. */
struct run_loss {
	struct nb_loss_histogram sum;
	double seconds, measured;
};

static void reduce_loss(struct nb_run *r, const char *mine, int signo, struct run_loss *l)
{
	const struct nb_results *h = r->d->results;
	double figures[2];

	memset(l, 0, sizeof(*l));
	for (int i = 0; i < r->ranks.nlocal; i++) {
		const struct nb_participant *p = (const void *)(mine + (size_t)i * h->size);

		if (!p->tails.measured)
			continue;
		nb_loss_histogram_add(&l->sum, &p->tails.histogram);
		l->seconds += p->tails.seconds;
		l->measured++;
	}
	nb_run_sum_u64(r, l->sum.samples, NB_LOSS_BUCKETS, signo);
	nb_run_sum(r, l->sum.lost_ns, NB_LOSS_BUCKETS, signo);
	figures[0] = l->seconds;
	figures[1] = l->measured;
	nb_run_sum(r, figures, 2, signo);
	l->seconds = figures[0];
	l->measured = figures[1];
}

static void json_loss_histogram(struct nb_json *j, const struct run_loss *l)
{
	if (!l->measured)
		return;
	nb_json_object(j, "loss_histogram");
	nb_json_int(j, "participants", (int)l->measured);
	nb_json_double(j, "seconds", l->seconds);
	nb_loss_edges_json(j, "edges_ns");
	nb_loss_histogram_json(j, &l->sum);
	nb_json_end(j, '}');
}

/* The root's report, written as the records arrive (nb_ranks_each). */
struct report {
	struct nb_run *r;
	struct nb_json j;
	uint64_t samples;
	struct nb_figures figures; /* of every rank's line, on the root */
};

/* What a node sends the root with node_files instead of its records. */
struct node_summary {
	uint64_t samples, lines, n;
	struct nb_figure figures[];
};

/* A participant's entry in the run's description: in PREFIX.json's "ranks",
 * or with node_files in its node's file. */
static void json_rank_entry(struct nb_run *r, struct nb_json *j, const struct nb_participant *p)
{
	const struct nb_results *h = r->d->results;

	json_participant(r, j, p);
	if (h->json_rank)
		h->json_rank(r, j, p);
	if (p->tails.measured)
		nb_tails_json(j, &p->tails);
	if (p->stretches.width_s > 0)
		nb_stretches_json(j, &p->stretches);
	nb_json_end(j, '}');
}

static void report_rank(const void *x, void *arg)
{
	struct report *rep = arg;
	struct nb_run *r = rep->r;
	const struct nb_participant *p = x;
	char *line;

	add_rank_line(r, p, &rep->figures, &line);
	fputs(line, stdout);
	free(line);
	rep->samples += p->samples;
	if (!r->d->node_files)
		json_rank_entry(r, &rep->j, p);
}

/* With node_files, on each node's first rank, every node at once: the
 * node's entries in its own file, {"node": K, "host": H, "ranks": [...]},
 * and what the root is sent instead of them: the figures of their lines
 * and their samples. */
static void *report_node(const void *records, int n, void *arg, size_t *bytes)
{
	struct report *rep = arg;
	struct nb_run *r = rep->r;
	struct nb_outfile *o = r->d->node_json;
	struct nb_figures fs = { 0 };
	struct node_summary *sum;
	uint64_t samples = 0;
	struct nb_json j;

	nb_json_open(&j, o->f);
	nb_json_object(&j, NULL);
	nb_json_int(&j, "node", r->ranks.node);
	nb_json_string(&j, "host", r->ranks.host);
	nb_json_array(&j, "ranks");
	nb_json_lines(&j);
	for (int i = 0; i < n; i++)
		json_rank_entry(r, &j, (const void *)((const char *)records +
						      (size_t)i * r->d->results->size));
	nb_json_end(&j, ']');
	nb_json_end(&j, '}');
	r->d->node_json = NULL;
	nb_outfile_commit_or_fail(o);
	for (int i = 0; i < n; i++) {
		const struct nb_participant *p =
			(const void *)((const char *)records + (size_t)i * r->d->results->size);

		add_rank_line(r, p, &fs, NULL);
		samples += p->samples;
	}
	*bytes = sizeof(*sum) + fs.n * sizeof(*fs.f);
	sum = malloc(*bytes);
	if (!sum)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the node's figures");
	*sum = (struct node_summary){ .samples = samples, .lines = fs.lines, .n = fs.n };
	if (fs.n)
		memcpy(sum->figures, fs.f, fs.n * sizeof(*fs.f));
	nb_figures_free(&fs);
	return sum;
}

/* On the root, with node_files: a node's summary, in node order */
static void report_node_summary(const void *x, size_t bytes, void *arg)
{
	struct report *rep = arg;
	const struct node_summary *sum = x;

	if (bytes < sizeof(*sum) || bytes != sizeof(*sum) + sum->n * sizeof(*sum->figures))
		nb_fail(NB_EXIT_FAILURE, "a node's summary of %zu bytes is not whole", bytes);
	rep->samples += sum->samples;
	nb_figures_merge(&rep->figures, sum->figures, sum->n, sum->lines);
}

static void report_head(struct nb_run *r, struct report *rep, const struct run_loss *l, int n,
			int signo)
{
	const struct nb_results *h = r->d->results;
	char name[4096];

	if (h->print_head)
		h->print_head(r, n);
	json_head(r, &rep->j, signo);
	if (r->k->json_options)
		r->k->json_options(r, &rep->j);
	if (h->json_run)
		h->json_run(r, &rep->j, n);
	json_loss_histogram(&rep->j, l);
	if (r->d->node_files) {
		/* by node, as "machines" */
		nb_json_array(&rep->j, "node_files");
		for (int k = 0; k < r->d->nhosts; k++) {
			node_file_name(r, k, name, sizeof(name), 1);
			nb_json_string(&rep->j, NULL, name);
		}
		nb_json_end(&rep->j, ']');
		return;
	}
	nb_json_array(&rep->j, "ranks");
	nb_json_lines(&rep->j);
}

static void report_tail(struct nb_run *r, struct report *rep, int n)
{
	const struct nb_results *h = r->d->results;

	if (!r->d->node_files)
		nb_json_end(&rep->j, ']');
	/* every rank line's figures in one line, with or without the lines */
	printf("ranks kernel=%s ranks=%d", r->k->name, n);
	nb_figures_print(&rep->figures, stdout);
	putchar('\n');
	nb_figures_free(&rep->figures);
	if (h->print_run)
		h->print_run(r, n);
	if (r->d->info.signo && r->ranks.nlocal < r->ranks.size)
		printf("interrupted: this report covers the %d rank(s) of the root process only; every "
		       "rank wrote its own data files\n", r->ranks.nlocal);
	json_tail(r, &rep->j, n, rep->samples);
}

/* How long the longest of the local participants measured; of every
 * participant of the run when signo is 0. */
static double longest_measurement_s(struct nb_run *r, const char *mine, int signo)
{
	const struct nb_results *h = r->d->results;
	uint64_t now = nb_ticks();
	double longest = 0;

	for (int i = 0; i < r->ranks.nlocal; i++) {
		const struct nb_participant *p = (const void *)(mine + i * h->size);
		uint64_t end = p->end_tick ? p->end_tick : now;

		if (end > p->start_tick && p->ticks_per_ns > 0)
			longest = fmax(longest, (double)(end - p->start_tick) / p->ticks_per_ns / 1e9);
	}
	return signo ? longest : nb_ranks_max(&r->ranks, longest);
}

/* nb_node_writer of the samples: the kernel's write hook into the node's files */
static int write_samples(struct nb_run *r, FILE **files, void *arg)
{
	const size_t *n = arg;

	r->d->data = files;
	for (int i = 0; i < r->ranks.nlocal; i++)
		r->d->results->write(r, i, n[i]);
	r->d->data = NULL;
	return r->ranks.nlocal;
}

/* nb_node_writer of the injection logs, of a complete run: every timer is
 * disarmed, every log whole */
static int write_injections(struct nb_run *r, FILE **files, void *arg)
{
	(void)arg;
	for (int i = 0; i < r->ranks.nlocal; i++)
		if (nb_inject_log_write(files[i], &r->ranks.local[i].injections, UINT64_MAX) < 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write the injections of %s: %s", r->prefix,
				strerror(errno));
	return r->ranks.nlocal;
}

/* Each local participant's samples into its data files, and its injection
 * log: its node's when node_files, but after a signal, when no collective is
 * safe, files of its own, created now (commit_files writes the logs then). */
static void write_data(struct nb_run *r, const size_t *n, int signo)
{
	const struct nb_results *h = r->d->results;
	char why[4400] = "";

	if (r->d->data_by_node && signo) {
		int injections = r->d->node_injections.ranges != NULL;

		nb_node_set_discard(&r->d->node_data);
		nb_node_set_discard(&r->d->node_injections);
		nb_node_set_discard(&r->d->node_causes);
		r->d->data_by_node = 0;
		open_rank_files(r, why, sizeof(why));
		if (injections)
			open_inject_files(r, why, sizeof(why));
		if (why[0])
			nb_fail(NB_EXIT_FAILURE, "%s", why);
	}
	if (r->d->data_by_node) {
		nb_node_set_write(r, &r->d->node_data, write_samples, (void *)n);
		if (r->d->node_injections.ranges)
			nb_node_set_write(r, &r->d->node_injections, write_injections, NULL);
		return;
	}
	for (int i = 0; i < r->ranks.nlocal; i++) {
		if (r->to_stdout)
			printf("# rank %d cpu %d\n", r->ranks.local[i].index, r->ranks.local[i].cpu);
		if (h->write)
			h->write(r, i, n[i]);
	}
}

/* With --metrics, on each node's first rank, every node at once: the
 * node's rank lines as a node_exporter textfile. What travels to the root
 * is a byte a node (nb_ranks_nodes wants a summary), no figure. */
static void *write_node_metrics(const void *records, int n, void *arg, size_t *bytes)
{
	struct nb_run *r = arg;
	char **lines = calloc((size_t)n + 1, sizeof(*lines));
	FILE *f = r->d->metrics->f;

	if (!lines)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the node's metrics");
	for (int i = 0; i < n; i++)
		lines[i] = rank_line_text(r, (const char *)records + (size_t)i * r->d->results->size);
	nb_metrics_info(f, &r->d->machine);
	nb_metrics_rank_lines(f, lines, n, NULL);
	for (int i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	nb_outfile_commit_or_fail(r->d->metrics);
	r->d->metrics = NULL;
	*bytes = 1;
	return calloc(1, 1);
}

/* the root's side of it: nothing to do */
static void metrics_written(const void *summary, size_t bytes, void *arg)
{
	(void)summary, (void)bytes, (void)arg;
}

/* The one finish sequence. Complete: every rank writes its files, summarises
 * its participants, takes part in the kernel's collectives and reductions,
 * and the root reports, receiving the records node by node. Interrupted: no
 * collective is safe any more; each process writes what its participants
 * measured and the root reports on its own. */
static void finish(struct nb_run *r, int signo)
{
	const struct nb_results *h = r->d->results;
	struct nb_ranks *rk = &r->ranks;
	char *mine = calloc(rk->nlocal, h->size);
	size_t *n = calloc(rk->nlocal, sizeof(*n));
	int nall = signo ? rk->nlocal : rk->size;
	struct run_loss loss;
	struct report rep = { .r = r };

	if (!mine || !n)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the results");
	r->d->info.signo = signo;
	if (r->stream.on)
		r->d->writer_cpu = nb_stream_writer_finish(r->d->writer, signo == 0,
							   &r->d->writer_cpu_ms);
	for (int i = 0; i < rk->nlocal; i++)
		n[i] = h->taken ? h->taken(r, i, signo) : taken(r, i, signo);
	write_data(r, n, signo);
	for (int i = 0; i < rk->nlocal; i++)
		participant(r, i, n[i], (struct nb_participant *)(mine + i * h->size));
	commit_files(r, mine);
	if (h->exchange)
		h->exchange(r, n, signo);
	r->measured_s = longest_measurement_s(r, mine, signo);
	/* The samples are on disk: summarise may now reorder them, once their
	 * order has been read for the causes. */
	if (r->trace_opt)
		attribute_all(r, n, mine);
	for (int i = 0; i < rk->nlocal; i++)
		h->summarise(r, i, n[i], participant_at(r, mine, i));
	if (h->reduce)
		h->reduce(r, mine, rk->nlocal, signo);
	reduce_loss(r, mine, signo, &loss);
	/* interrupted, the root describes its own participants alone */
	if (signo && r->d->node_json) {
		nb_outfile_discard(r->d->node_json);
		r->d->node_json = NULL;
	}
	r->d->node_files = r->d->node_files && !signo;
	if (rk->root)
		report_head(r, &rep, &loss, nall, signo);
	if (!signo && r->d->node_files)
		nb_ranks_nodes(rk, mine, h->size, report_node, report_node_summary, &rep);
	else if (!signo)
		nb_ranks_each(rk, mine, h->size, report_rank, &rep);
	else if (rk->root)
		for (int i = 0; i < rk->nlocal; i++)
			report_rank(mine + i * h->size, &rep);
	if (rk->root)
		report_tail(r, &rep, nall);
	/* an interrupted run's figures are not the node's: no file then */
	if (!signo && r->d->metrics_opt)
		nb_ranks_nodes(rk, mine, h->size, write_node_metrics, metrics_written, r);
	else if (r->d->metrics) {
		nb_outfile_discard(r->d->metrics);
		r->d->metrics = NULL;
	}
	fflush(stdout);
	free(n);
	free(mine);
}
