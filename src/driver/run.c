/* The run's life: the driver's main (options, placement, files, calibration,
 * the kernel's configuration, the measurement, the finish) and the signals
 * that end it early. */
#define _GNU_SOURCE
#include "driver.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "interrupt.h"
#include "node_data.h"
#include "samples.h"
#include "timer.h"

/* The run the signal thread finishes when SIGINT/SIGTERM arrives. */
static struct nb_run *current;

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
	nb_driver_agree(r, why[0] ? why : NULL);
}

/* The rules each rank line is judged by: the root reads them, before any
 * file is opened, and sends them to every rank. */
static void read_requirements(struct nb_run *r)
{
	static char why[NB_RULES_SOURCE + 256];
	const char *bad = NULL;

	nb_requirements_default(&r->d->requirements);
	if (!r->d->requirements_opt)
		return;
	if (r->ranks.root)
		bad = nb_requirements_read(r->d->requirements_opt, &r->d->requirements);
	if (bad)
		snprintf(why, sizeof(why), "--requirements %s", bad);
	nb_driver_agree(r, bad ? why : NULL);
	nb_ranks_bcast(&r->ranks, &r->d->requirements, sizeof(r->d->requirements));
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
		nb_driver_file_name(r, s->rank, "", s->path, sizeof(s->path), 0);
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
	nb_driver_finish(r, signo);
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
	nb_driver_parse(r);
	r->d->results = r->stream.on ? &nb_stream_results : &k->results;
	if (k->check)
		k->check(r);
	nb_ranks_place(&r->ranks, r->d->threads_opt, r->d->cpus_opt, r->d->pin);
	r->d->single_files = r->d->threads_opt < 0 && !r->d->cpus_opt && r->ranks.size == 1 &&
			     strcmp(nb_ranks_frontend(), "mpi") != 0;
	if (r->to_stdout && r->ranks.nlocal < r->ranks.size)
		nb_fail(NB_EXIT_USAGE, "-s: %d MPI ranks cannot share stdout; leave -s out to get "
			"one data file per rank", r->ranks.size);
	check_memory(r);
	read_requirements(r);
	nb_driver_open_files(r);

	nb_machine_describe(&r->d->machine);
	r->d->machines = nb_ranks_hosts(&r->ranks, &r->d->machine, sizeof(r->d->machine), &r->d->nhosts);
	nb_calibrate(&r->cal, r->d->ticks_per_ns_opt);
	nb_driver_agree_or_exit(r, nb_inject_setup(&r->inject, r->cal.ticks_per_ns), NB_EXIT_FAILURE);
	for (int i = 0; i < r->ranks.nlocal; i++)
		r->ranks.local[i].arg = r;
	nb_driver_agree(r, k->configure(r));
	if (r->seconds_opt > 0 || r->stream.on)
		check_memory(r);
	r->d->info = (struct nb_run_info){
		.kernel = k->name, .frontend = nb_ranks_frontend(), .argc = r->d->argc,
		.argv = r->d->argv, .cal = &r->cal, .inject = &r->inject,
		.warmup_ms = r->d->warmup_ms, .pinned = r->d->pin, .machine = &r->d->machine,
	};
	measure(r);
	nb_driver_finish(r, 0);
	fflush(stdout);
	free_run(r);
	return 0;
}
