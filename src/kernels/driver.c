#define _GNU_SOURCE
#include "driver.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interrupt.h"
#include "report.h"
#include "runinfo.h"
#include "samples.h"

/* The run the signal thread finishes when SIGINT/SIGTERM arrives. */
static struct nb_run *current;

enum {
	OPT_WORK = 256, OPT_CPUS, OPT_WARMUP, OPT_TPN, OPT_INJECT, OPT_DAXPY, OPT_FREQ,
	OPT_VERSION, OPT_TRACE,
};

static const struct option long_options[] = {
	{ "work", required_argument, NULL, OPT_WORK },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "warmup-ms", required_argument, NULL, OPT_WARMUP },
	{ "ticks-per-ns", required_argument, NULL, OPT_TPN },
	{ "inject", required_argument, NULL, OPT_INJECT },
	{ "daxpy-len", required_argument, NULL, OPT_DAXPY },
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ "trace", no_argument, NULL, OPT_TRACE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void usage(const struct nb_kernel *k, FILE *f)
{
	fprintf(f, "usage: %s [options]\n%s", nb_program(), k->usage);
	fputs("  -n SAMPLES           samples per thread (default 10000)\n"
	      "  -t THREADS           measuring threads, one per CPU (default 1 for pthreads,\n"
	      "                       OMP_NUM_THREADS for OpenMP; 0 = every CPU allowed)\n"
	      "  --cpus LIST          pin thread i to the i-th CPU of LIST, e.g. 0-3,8\n"
	      "  -o PREFIX            output prefix (default: the kernel's name)\n"
	      "  -s                   write the samples to stdout instead of data files\n"
	      "  --work KIND          work loop:",
	      f);
	for (int i = 0; i < nb_work_kind_count; i++)
		fprintf(f, " %s", nb_work_kinds[i].name);
	fputs(" (default multiiter)\n"
	      "  --daxpy-len N        doubles in each DAXPY vector (default 1024)\n"
	      "  --warmup-ms MS       spin this long before the start (default 300)\n"
	      "  --ticks-per-ns X     use this tick rate instead of measuring it\n"
	      "  --inject P:D         every P us, busy-wait D us on each measuring thread\n"
	      "  --trace              attribute each detour to its cause (tracefs, as root)\n"
	      "  -h, --help           this text;  --version  the version\n",
	      f);
}

static void parse(struct nb_run *r, int argc, char **argv)
{
	const struct nb_kernel *k = r->k;
	/* leading '+': stop at the first non-option; ':': report a missing value */
	const char *shortopts = k->id == NB_KERNEL_FWQ ? "+:n:t:o:shw:" : "+:n:t:o:shi:";
	const char *work = "multiiter";
	int c;

	r->samples = 10000;
	r->threads_opt = -1;
	r->prefix = k->name;
	r->warmup_ms = 300;
	r->daxpy_len = 1024;
	r->work_bits = 12;
	r->interval_bits = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, long_options, NULL)) != -1) {
		switch (c) {
		case 'n':
			r->samples = nb_parse_u64("-n", optarg, 1, (uint64_t)1 << 40);
			break;
		case 't':
			r->threads_opt = (int)nb_parse_u64("-t", optarg, 0, NB_MAX_CPUS);
			break;
		case 'o':
			if (!*optarg)
				nb_fail(NB_EXIT_USAGE, "-o: the output prefix is empty");
			r->prefix = optarg;
			break;
		case 's':
			r->to_stdout = 1;
			break;
		case 'w':
			r->work_bits = (unsigned)nb_parse_u64("-w", optarg, 0, 40);
			break;
		case 'i':
			r->interval_bits = (int)nb_parse_u64("-i", optarg, 8, 40);
			break;
		case OPT_FREQ:
			if (k->id != NB_KERNEL_FTQ)
				nb_fail(NB_EXIT_USAGE, "--freq: only ftq has a sampling frequency");
			r->freq_hz = nb_parse_double("--freq", optarg, 0.001, 1e6);
			break;
		case OPT_WORK:
			work = optarg;
			break;
		case OPT_CPUS:
			r->cpus_opt = optarg;
			break;
		case OPT_WARMUP:
			r->warmup_ms = (unsigned)nb_parse_u64("--warmup-ms", optarg, 0, 600000);
			break;
		case OPT_TPN:
			r->ticks_per_ns_opt = nb_parse_double("--ticks-per-ns", optarg, 1e-6, 1e6);
			break;
		case OPT_INJECT:
			nb_inject_parse("--inject", optarg, &r->inject);
			break;
		case OPT_TRACE:
			r->trace_opt = 1;
			break;
		case OPT_DAXPY:
			r->daxpy_len = nb_parse_u64("--daxpy-len", optarg, 1, (uint64_t)1 << 26);
			break;
		case 'h':
			usage(k, stdout);
			exit(0);
		case OPT_VERSION:
			printf("%s (noisebench) %s\n", nb_program(), NOISEBENCH_VERSION);
			exit(0);
		case ':':
			nb_fail(NB_EXIT_USAGE, "%s needs a value (see -h)", argv[optind - 1]);
		default:
			if (optopt && optopt < OPT_WORK)
				nb_fail(NB_EXIT_USAGE, "unknown option -%c (see -h)", optopt);
			nb_fail(NB_EXIT_USAGE, "unknown option %s (see -h)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		nb_fail(NB_EXIT_USAGE, "unexpected argument '%s' (see -h)", argv[optind]);
	if (r->interval_bits >= 0 && r->freq_hz > 0)
		nb_fail(NB_EXIT_USAGE, "-i and --freq both set the quantum: give one of them");
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

static void check_memory(struct nb_run *r)
{
	uint64_t avail = nb_memory_available();
	long double need = (long double)r->samples * r->k->sample_size * r->nthreads;

	if (need > 0.8L * avail)
		nb_fail(NB_EXIT_USAGE,
			"-n %llu: %d threads x %llu samples x %zu bytes need %.1Lf GiB, more than "
			"the %.1f GiB this machine has available",
			(unsigned long long)r->samples, r->nthreads, (unsigned long long)r->samples,
			r->k->sample_size, need / (1u << 30), (double)avail / (1u << 30));
}

/* Creates every output file under its temporary name before anything is
 * measured: an unwritable prefix fails now, not after the run. */
static void open_files(struct nb_run *r)
{
	int per = r->k->files_per_thread;
	char path[4096];

	r->files = calloc((size_t)r->nthreads * per + 1, sizeof(*r->files));
	if (!r->files)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (int t = 0; t < r->nthreads && !r->to_stdout; t++)
		for (int f = 0; f < per; f++) {
			snprintf(path, sizeof(path), "%s_%d_%s", r->prefix, t, r->k->file_suffixes[f]);
			r->files[t * per + f] = nb_outfile_open(path);
			if (!r->files[t * per + f])
				nb_fail(NB_EXIT_USAGE, "-o %s: cannot create %s: %s", r->prefix, path,
					strerror(errno));
		}
	r->inject_files = calloc(r->nthreads, sizeof(*r->inject_files));
	if (!r->inject_files)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (int t = 0; t < r->nthreads && r->inject.duration_us && !r->to_stdout; t++) {
		snprintf(path, sizeof(path), "%s_%d_injections.dat", r->prefix, t);
		r->inject_files[t] = nb_outfile_open(path);
		if (!r->inject_files[t])
			nb_fail(NB_EXIT_USAGE, "-o %s: cannot create %s: %s", r->prefix, path,
				strerror(errno));
	}
	snprintf(path, sizeof(path), "%s.json", r->prefix);
	r->files[(size_t)r->nthreads * per] = nb_outfile_open(path);
	if (!r->files[(size_t)r->nthreads * per])
		nb_fail(NB_EXIT_USAGE, "-o %s: cannot create %s: %s", r->prefix, path,
			strerror(errno));
}

/* Each thread's detours joined to what the trace saw on its CPU (before the
 * stats, which reorder the samples). */
static void attribute(struct nb_run *r, const size_t *taken, struct nb_cause_totals *causes,
		      int signo)
{
	if (signo) {
		nb_trace_skip(&r->trace, signo);
		nb_causes_discard(r->cause_files, r->nthreads);
	}
	if (!r->trace.started)
		return;
	if (nb_trace_read(&r->trace, r->cal.ticks_per_ns, r->start.ticks, r->start.raw_ns) != 0) {
		nb_warn("--trace: detours not attributed: %s", r->trace.why);
		return;
	}
	for (int t = 0; t < r->nthreads; t++) {
		struct nb_cause_detour *d = NULL;
		size_t nd = r->k->detours(r, &r->threads[t], taken[t], &d);

		nb_causes_attribute(&r->trace, r->threads, r->nthreads, t, d, nd,
				    r->cal.ticks_per_ns, r->cause_files[t], &causes[t]);
		r->cause_files[t] = NULL;
		free(d);
	}
	nb_trace_free(&r->trace);
}

static void prepare_thread(struct nb_thread *t)
{
	struct nb_run *r = t->arg;

	nb_work_ctx_init(&t->work, r->daxpy_len);
	t->samples = nb_samples_alloc(r->samples, r->k->sample_size);
}

static void kernel_counts(struct nb_run *r, struct nb_json *j, struct nb_thread *t)
{
	struct nb_kcount_summary s;
	int64_t before[2], after[2];

	nb_kcounts_after(&r->kcounts);
	nb_team_switches(t, before, after);
	nb_kcounts_summary(&r->kcounts, t->cpu, before, after, &s);
	nb_kcounts_json(j, &s);
}

static void write_json(struct nb_run *r, FILE *f, const size_t *taken,
		       const struct nb_stats *stats, const struct nb_speed *speed,
		       const struct nb_cause_totals *causes, int signo)
{
	struct nb_json j;
	struct nb_run_info ri = {
		.kernel = r->k->name, .frontend = nb_team_frontend, .argc = r->argc,
		.argv = r->argv, .signo = signo, .cal = &r->cal, .inject = &r->inject,
		.warmup_ms = r->warmup_ms, .machine = &r->machine, .start_utc = r->start_utc,
		.end_utc = r->end_utc, .start = r->start, .end = r->end,
	};

	nb_json_open(&j, f);
	nb_json_run_head(&j, &ri);
	nb_json_string(&j, "work", r->work->name);
	if (strcmp(r->work->name, "daxpy") == 0)
		nb_json_uint(&j, "daxpy_len", r->daxpy_len);
	nb_json_double(&j, "ticks_per_work_loop", r->ticks_per_work_loop);
	r->k->json(r, &j);
	nb_json_uint(&j, "samples_requested", r->samples);
	nb_json_uint(&j, "start_tick", r->team.start_tick);
	nb_trace_json(&j, &r->trace);
	nb_tuning_json(&j, &r->tuning);
	const char *slash = strrchr(r->prefix, '/'), *base = slash ? slash + 1 : r->prefix;

	nb_json_array(&j, "threads");
	for (int t = 0; t < r->nthreads; t++) {
		nb_json_object(&j, NULL);
		nb_json_int(&j, "thread", t);
		nb_json_int(&j, "cpu", r->threads[t].cpu);
		nb_json_uint(&j, "samples", taken[t]);
		nb_json_uint(&j, "start_tick", r->threads[t].start_tick);
		nb_json_uint(&j, "end_tick", r->threads[t].end_tick);
		nb_json_uint(&j, "injections", r->threads[t].injections.served);
		nb_json_uint(&j, "injections_missed", r->threads[t].injections.missed);
		nb_json_uint(&j, "injections_logged", r->threads[t].injections.logged);
		nb_json_double(&j, "steal_ms", nb_team_steal_ms(&r->threads[t]));
		kernel_counts(r, &j, &r->threads[t]);
		if (r->k->speed)
			nb_speed_json(&j, &speed[t]);
		if (r->trace_opt) {
			char name[4096];

			snprintf(name, sizeof(name), "%s_%d_causes.dat", base, t);
			nb_causes_json(&j, &causes[t], r->cal.ticks_per_ns,
				       r->to_stdout ? NULL : name);
		}
		if (r->inject.duration_us && !r->to_stdout) {
			char name[4096];

			snprintf(name, sizeof(name), "%s_%d_injections.dat", base, t);
			nb_json_string(&j, "injections_file", name);
		}
		nb_json_array(&j, "files");
		for (int f = 0; f < r->k->files_per_thread && !r->to_stdout; f++) {
			char name[4096];

			snprintf(name, sizeof(name), "%s_%d_%s", base, t, r->k->file_suffixes[f]);
			nb_json_string(&j, NULL, name);
		}
		nb_json_end(&j, ']');
		nb_json_stats(&j, &stats[t], r->k->value_unit, r->k->scaled_noise_mean(&stats[t]));
		nb_json_end(&j, '}');
	}
	nb_json_end(&j, ']');
	nb_json_run_tail(&j, &ri);
}

static void print_summary(struct nb_run *r, int t, const struct nb_stats *s,
			  const struct nb_speed *speed, const struct nb_cause_totals *causes)
{
	const char *u = r->k->value_unit;

	printf("summary kernel=%s work=%s thread=%d cpu=%d samples=%zu min_%s=%.0f mean_%s=%.2f "
	       "max_%s=%.0f std_%s=%.2f median_%s=%.1f ci95_%s=%.2f:%.2f scaled_noise_mean=%.6f",
	       r->k->name, r->work->name, t, r->threads[t].cpu, s->n, u, s->min, u, s->mean, u,
	       s->max, u, s->std, u, s->median, u, s->ci95_low, s->ci95_high,
	       r->k->scaled_noise_mean(s));
	/* Sequoia's other two figures: the sd of the scaled noise (the values'
	 * sd over the best one: min for FWQ, max for FTQ) and its kurtosis,
	 * which no shift or scale changes */
	printf(" scaled_noise_sd=%.6g kurtosis=%.6g skewness=%.6g",
	       s->std / (r->k->id == NB_KERNEL_FWQ ? s->min : s->max), s->kurtosis, s->skewness);
	if (r->k->id == NB_KERNEL_FWQ)
		printf(" mean_ns=%.1f", nb_ticks_to_ns(&r->cal, s->mean));
	else
		printf(" quantum_ns=%.1f", nb_ticks_to_ns(&r->cal, (double)r->interval_ticks));
	if (r->k->speed)
		nb_speed_print(speed);
	if (r->inject.duration_us)
		printf(" injections=%llu injections_missed=%llu",
		       (unsigned long long)r->threads[t].injections.served,
		       (unsigned long long)r->threads[t].injections.missed);
	nb_causes_print(causes);
	putchar('\n');
}

/* Writes everything measured so far; signo 0 means the run is complete. */
static void finish(struct nb_run *r, int signo)
{
	int per = r->k->files_per_thread;
	size_t *taken = calloc(r->nthreads, sizeof(*taken));
	struct nb_stats *stats = calloc(r->nthreads, sizeof(*stats));
	struct nb_speed *speed = calloc(r->nthreads, sizeof(*speed));
	struct nb_cause_totals *causes = calloc(r->nthreads, sizeof(*causes));
	FILE **out = calloc(per, sizeof(*out));

	if (!taken || !stats || !speed || !causes || !out)
		nb_fail(NB_EXIT_FAILURE, "out of memory while writing the results");
	clock_gettime(CLOCK_REALTIME, &r->end_utc);
	r->end = nb_clock_pair_read();
	nb_tuning_after(&r->tuning, &r->machine, r->cpus, r->nthreads);
	for (int t = 0; t < r->nthreads; t++)
		taken[t] = signo ? nb_samples_taken(r->threads[t].samples, r->samples,
						     r->k->sample_size, r->k->done_word)
				 : r->samples;

	for (int t = 0; t < r->nthreads; t++) {
		for (int f = 0; f < per; f++)
			out[f] = r->to_stdout ? stdout : r->files[t * per + f]->f;
		if (r->to_stdout)
			printf("# thread %d cpu %d\n", t, r->threads[t].cpu);
		r->k->write(r, &r->threads[t], taken[t], out);
	}
	for (int i = 0; i < r->nthreads * per && !r->to_stdout; i++) {
		const char *tmp = r->files[i]->tmp;

		if (fflush(r->files[i]->f) != 0 || ferror(r->files[i]->f))
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", tmp, strerror(errno));
	}
	for (int t = 0; t < r->nthreads; t++) {
		struct nb_outfile *o = r->inject_files[t];

		if (o && (nb_inject_log_write(o->f, &r->threads[t].injections) < 0 ||
			  fflush(o->f) != 0 || ferror(o->f)))
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", o->tmp, strerror(errno));
	}
	for (int i = 0; i < r->nthreads * per && !r->to_stdout; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s", r->files[i]->path);
		if (nb_outfile_commit(r->files[i]) != 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", path, strerror(errno));
	}

	for (int t = 0; t < r->nthreads; t++) {
		char path[4096];

		if (!r->inject_files[t])
			continue;
		snprintf(path, sizeof(path), "%s", r->inject_files[t]->path);
		if (nb_outfile_commit(r->inject_files[t]) != 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", path, strerror(errno));
		r->inject_files[t] = NULL;
	}

	attribute(r, taken, causes, signo);
	/* The samples are on disk: the buffers may now be reordered for the
	 * stats, once their order has been read for the speed. */
	for (int t = 0; t < r->nthreads; t++) {
		if (r->k->speed)
			r->k->speed(&r->threads[t], taken[t], &speed[t]);
		nb_stats_compute(r->k->values(&r->threads[t], taken[t]), taken[t], &stats[t]);
		print_summary(r, t, &stats[t], &speed[t], &causes[t]);
	}

	struct nb_outfile *json = r->files[(size_t)r->nthreads * per];
	char json_path[4096];

	snprintf(json_path, sizeof(json_path), "%s", json->path);
	write_json(r, json->f, taken, stats, speed, causes, signo);
	if (nb_outfile_commit(json) != 0)
		nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", json_path, strerror(errno));

	size_t total = 0;

	for (int t = 0; t < r->nthreads; t++)
		total += taken[t];
	printf("run kernel=%s complete=%s threads=%d samples=%zu json=%s\n", r->k->name,
	       signo ? "false" : "true", r->nthreads, total, json_path);
	if (signo) {
		char name[16];

		printf("interrupted by %s: the files hold the samples taken until then\n",
		       nb_signal_name(signo, name, sizeof(name)));
	}
	fflush(stdout);
	free(taken);
	free(stats);
	free(speed);
	free(causes);
	free(out);
}

static void on_signal(int signo)
{
	struct nb_run *r = current;

	if (!__atomic_load_n(&r->measuring, __ATOMIC_ACQUIRE)) {
		char name[16];

		nb_outfile_discard_all();
		nb_trace_remove(&r->trace);
		fprintf(stderr, "%s: interrupted by %s before measuring; nothing written\n",
			nb_program(), nb_signal_name(signo, name, sizeof(name)));
		_exit(128 + signo);
	}
	/* Blocks for good when the complete results are being written: the main
	 * thread then exits with them. */
	pthread_mutex_lock(&r->out_lock);
	finish(r, signo);
	nb_trace_remove(&r->trace);
	_exit(128 + signo);
}

int nb_driver_main(const struct nb_kernel *k, int argc, char **argv)
{
	static struct nb_run run;
	struct nb_run *r = &run;
	struct nb_work_ctx ctx;

	nb_set_program(argv[0]);
	r->k = k;
	r->argc = argc;
	r->argv = argv;
	pthread_mutex_init(&r->out_lock, NULL);
	parse(r, argc, argv);
	r->nthreads = nb_team_place(r->threads_opt, r->cpus_opt, r->cpus);
	check_memory(r);
	current = r;
	nb_interrupt_start(on_signal);
	open_files(r);

	nb_machine_describe(&r->machine);
	nb_calibrate(&r->cal, r->ticks_per_ns_opt);
	nb_work_ctx_init(&ctx, r->daxpy_len);
	r->ticks_per_work_loop = nb_work_ticks_per_loop(r->work, &ctx, r->cal.ticks_per_ns);
	nb_work_ctx_free(&ctx);
	k->configure(r);

	r->threads = calloc(r->nthreads, sizeof(*r->threads));
	if (!r->threads)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	for (int t = 0; t < r->nthreads; t++) {
		r->threads[t].index = t;
		r->threads[t].cpu = r->cpus[t];
		r->threads[t].arg = r;
	}
	r->team = (struct nb_team){
		.nthreads = r->nthreads,
		.cpus = r->cpus,
		.warmup_ms = r->warmup_ms,
		.lead_ticks = (uint64_t)(1e6 * r->cal.ticks_per_ns), /* 1 ms */
		.inject = &r->inject,
		.seconds = r->seconds,
		.prepare = prepare_thread,
		.measure = k->measure,
	};
	nb_inject_setup(&r->inject, r->cal.ticks_per_ns);
	r->cause_files = nb_causes_start(&r->trace, r->trace_opt, r->threads, r->cpus, r->nthreads,
					 r->seconds + r->warmup_ms / 1000.0 + 1, r->prefix,
					 r->to_stdout);
	nb_kcounts_before(&r->kcounts);
	nb_tuning_before(&r->tuning, &r->machine, r->cpus, r->nthreads, NULL);
	clock_gettime(CLOCK_REALTIME, &r->start_utc);
	r->start = nb_clock_pair_read();
	__atomic_store_n(&r->measuring, 1, __ATOMIC_RELEASE);
	nb_team_run(&r->team, r->threads);

	pthread_mutex_lock(&r->out_lock);
	finish(r, 0);
	for (int t = 0; t < r->nthreads; t++) {
		nb_work_ctx_free(&r->threads[t].work);
		nb_samples_free(r->threads[t].samples, r->samples, k->sample_size);
		nb_inject_log_free(&r->threads[t].injections);
	}
	free(r->inject_files);
	free(r->cause_files);
	nb_kcounts_free(&r->kcounts);
	free(r->threads);
	free(r->files);
	return 0;
}
