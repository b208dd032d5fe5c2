#define _GNU_SOURCE
#include "rankmain.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interrupt.h"
#include "report.h"
#include "samples.h"

static struct nb_rank_run *current;

static void on_signal(int signo)
{
	struct nb_rank_run *rr = current;

	if (!rr || !__atomic_load_n(&rr->measuring, __ATOMIC_ACQUIRE)) {
		char name[16];

		/* Silent when nothing was created: a launcher stopping the other
		 * ranks of a job that failed its checks needs no second word. */
		if (rr)
			nb_trace_remove(&rr->trace);
		if (nb_outfile_discard_all())
			fprintf(stderr, "%s: interrupted by %s before measuring; nothing written\n",
				nb_program(), nb_signal_name(signo, name, sizeof(name)));
		_exit(128 + signo);
	}
	pthread_mutex_lock(&rr->out_lock); /* held for good once the complete run is written */
	nb_trace_skip(&rr->trace, signo);
	nb_causes_discard(rr->cause_files, rr->ranks.nlocal);
	rr->finish(rr, signo);
	nb_trace_remove(&rr->trace);
	fflush(stdout);
	/* mpirun kills the whole job when one rank exits non-zero: every rank
	 * waits a moment after writing, so all have written before any exits. */
	if (rr->ranks.nlocal < rr->ranks.size) {
		struct timespec grace = { 2, 0 };

		nanosleep(&grace, NULL);
	}
	_exit(128 + signo);
}

void nb_rank_begin(struct nb_rank_run *rr, const char *name, int *argc, char ***argv)
{
	nb_set_program((*argv)[0]);
	rr->name = name;
	rr->prefix = name;
	rr->threads_opt = -1;
	rr->pin = 1;
	pthread_mutex_init(&rr->out_lock, NULL);
	current = rr;
	nb_interrupt_start(on_signal);
	nb_ranks_init(&rr->ranks, argc, argv);
	rr->argc = *argc;
	rr->argv = *argv;
}

int nb_rank_option(struct nb_rank_run *rr, int c, const char *arg, const char *usage)
{
	switch (c) {
	case 't':
		rr->threads_opt = (int)nb_parse_u64("-t", arg, 0, NB_MAX_CPUS);
		return 1;
	case 'o':
		if (!*arg)
			nb_fail(NB_EXIT_USAGE, "-o: the output prefix is empty");
		rr->prefix = arg;
		return 1;
	case NB_OPT_CPUS:
		rr->cpus_opt = arg;
		return 1;
	case NB_OPT_NO_PIN:
		rr->pin = 0;
		return 1;
	case NB_OPT_WARMUP:
		rr->warmup_ms = (unsigned)nb_parse_u64("--warmup-ms", arg, 0, 600000);
		return 1;
	case NB_OPT_TPN:
		rr->ticks_per_ns_opt = nb_parse_double("--ticks-per-ns", arg, 1e-6, 1e6);
		return 1;
	case NB_OPT_INJECT:
		nb_inject_parse("--inject", arg, &rr->inject);
		return 1;
	case NB_OPT_TRACE:
		rr->trace_opt = 1;
		return 1;
	case 'h':
		if (rr->ranks.root)
			printf("usage: %s [options]\n%s%s", nb_program(), usage, NB_RANK_USAGE);
		nb_ranks_finalize(&rr->ranks);
		exit(0);
	case NB_OPT_VERSION:
		if (rr->ranks.root)
			printf("%s (noisebench) %s\n", nb_program(), NOISEBENCH_VERSION);
		nb_ranks_finalize(&rr->ranks);
		exit(0);
	case ':':
		nb_fail(NB_EXIT_USAGE, "%s needs a value (see -h)", rr->argv[optind - 1]);
	case '?':
		if (optopt && optopt < NB_OPT_CPUS)
			nb_fail(NB_EXIT_USAGE, "unknown option -%c (see -h)", optopt);
		nb_fail(NB_EXIT_USAGE, "unknown option %s (see -h)", rr->argv[optind - 1]);
	}
	return 0;
}

void nb_rank_file_name(struct nb_rank_run *rr, int rank, const char *suffix, char *buf,
		       size_t size)
{
	snprintf(buf, size, "%s_%d_%s", rr->prefix, rank, suffix);
}

void nb_rank_prepare(struct nb_rank_run *rr, const char *suffix)
{
	struct nb_ranks *r = &rr->ranks;
	char path[4096], why[4400] = "";

	nb_ranks_place(r, rr->threads_opt, rr->cpus_opt, rr->pin);
	uint64_t need = (uint64_t)rr->capacity * rr->sample_size * r->nlocal;

	if ((double)need > 0.8 * (double)nb_memory_available())
		nb_fail(NB_EXIT_USAGE, "%zu samples x %zu bytes x %d participants need more than "
			"the memory available", rr->capacity, rr->sample_size, r->nlocal);

	/* Every file is created before anything is measured, on every rank; if any
	 * rank cannot, all stop. */
	rr->files = calloc(r->nlocal, sizeof(*rr->files));
	for (int i = 0; i < r->nlocal && rr->files && !why[0]; i++) {
		nb_rank_file_name(rr, r->local[i].index, suffix, path, sizeof(path));
		rr->files[i] = nb_outfile_open(path);
		if (!rr->files[i])
			snprintf(why, sizeof(why), "-o %s: cannot create %s: %s", rr->prefix, path,
				 strerror(errno));
	}
	rr->inject_files = calloc(r->nlocal, sizeof(*rr->inject_files));
	for (int i = 0; i < r->nlocal && rr->inject.duration_us && rr->inject_files && !why[0];
	     i++) {
		nb_rank_file_name(rr, r->local[i].index, "injections.dat", path, sizeof(path));
		rr->inject_files[i] = nb_outfile_open(path);
		if (!rr->inject_files[i])
			snprintf(why, sizeof(why), "-o %s: cannot create %s: %s", rr->prefix, path,
				 strerror(errno));
	}
	if (!rr->files || !rr->inject_files)
		nb_fail(NB_EXIT_FAILURE, "out of memory");
	if (r->root && !why[0]) {
		snprintf(path, sizeof(path), "%s.json", rr->prefix);
		rr->json = nb_outfile_open(path);
		if (!rr->json)
			snprintf(why, sizeof(why), "-o %s: cannot create %s: %s", rr->prefix, path,
				 strerror(errno));
	}
	int first = nb_ranks_first_failing(r, why[0] != 0);

	if (first >= 0) {
		nb_outfile_discard_all();
		nb_set_exit_hook(NULL, 0);
		if (first == r->rank)
			fprintf(stderr, "%s: error: %s\n", nb_program(), why);
		nb_ranks_finalize(r);
		exit(NB_EXIT_USAGE);
	}

	nb_machine_describe(&rr->machine);
	nb_calibrate(&rr->cal, rr->ticks_per_ns_opt);
	nb_inject_setup(&rr->inject, rr->cal.ticks_per_ns);
	for (int i = 0; i < r->nlocal; i++)
		r->local[i].arg = rr;
	rr->info = (struct nb_run_info){
		.kernel = rr->name, .frontend = nb_ranks_frontend, .argc = rr->argc,
		.argv = rr->argv, .cal = &rr->cal, .inject = &rr->inject,
		.warmup_ms = rr->warmup_ms, .machine = &rr->machine,
	};
}

void nb_rank_attribute(struct nb_rank_run *rr, int local, const struct nb_cause_detour *d,
		       size_t nd, struct nb_cause_totals *tot)
{
	memset(tot, 0, sizeof(*tot));
	if (!rr->trace.started)
		return;
	if (!rr->trace.read &&
	    nb_trace_read(&rr->trace, rr->cal.ticks_per_ns, rr->info.start.ticks,
			  rr->info.start.raw_ns) != 0) {
		nb_warn("--trace: detours not attributed: %s", rr->trace.why);
		rr->trace.started = 0;
		return;
	}
	nb_causes_attribute(&rr->trace, rr->ranks.local, rr->ranks.nlocal, local, d, nd,
			    rr->cal.ticks_per_ns, rr->cause_files[local], tot);
	rr->cause_files[local] = NULL;
}

void nb_rank_measure(struct nb_rank_run *rr, void (*prepare)(struct nb_thread *),
		     void (*measure)(struct nb_thread *))
{
	rr->team = (struct nb_team){
		.nthreads = rr->ranks.nlocal,
		.cpus = rr->ranks.cpus,
		.warmup_ms = rr->warmup_ms,
		.lead_ticks = (uint64_t)(1e6 * rr->cal.ticks_per_ns),
		.inject = &rr->inject,
		.seconds = rr->seconds,
		.prepare = prepare,
		.measure = measure,
	};
	rr->cause_files = nb_causes_start(&rr->trace, rr->trace_opt, rr->ranks.local, rr->ranks.cpus,
					  rr->ranks.nlocal, rr->seconds + rr->warmup_ms / 1000.0 + 1,
					  rr->prefix, 0);
	nb_kcounts_before(&rr->kcounts);
	nb_tuning_before(&rr->tuning, &rr->machine, rr->ranks.cpus, rr->ranks.nlocal,
			 nb_ranks_library());
	clock_gettime(CLOCK_REALTIME, &rr->info.start_utc);
	rr->info.start = nb_clock_pair_read();
	__atomic_store_n(&rr->measuring, 1, __ATOMIC_RELEASE);
	nb_ranks_run(&rr->ranks, &rr->team);
	pthread_mutex_lock(&rr->out_lock);
}

size_t nb_rank_taken(struct nb_rank_run *rr, int local)
{
	return nb_samples_taken(rr->ranks.local[local].samples, rr->capacity, rr->sample_size,
				rr->done_word);
}

void nb_rank_clock_get(struct nb_rank_run *rr, int local, struct nb_rank_clock *c)
{
	struct nb_thread *t = &rr->ranks.local[local];
	int64_t before[2], after[2];

	*c = (struct nb_rank_clock){
		.start_tick = t->start_tick,
		.end_tick = t->end_tick,
		.injections = t->injections.served,
		.injections_missed = t->injections.missed,
		.injections_logged = __atomic_load_n(&t->injections.logged, __ATOMIC_ACQUIRE),
		.steal_ms = nb_team_steal_ms(t),
	};
	nb_kcounts_after(&rr->kcounts);
	nb_team_switches(t, before, after);
	nb_kcounts_summary(&rr->kcounts, t->cpu, before, after, &c->kcounts);
}

void nb_rank_commit_files(struct nb_rank_run *rr)
{
	for (int i = 0; i < rr->ranks.nlocal; i++) {
		struct nb_outfile *o = rr->inject_files[i];
		char path[4096];

		if (!o)
			continue;
		snprintf(path, sizeof(path), "%s", o->path);
		if (nb_inject_log_write(o->f, &rr->ranks.local[i].injections) < 0 ||
		    fflush(o->f) != 0 || nb_outfile_commit(o) != 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", path, strerror(errno));
		rr->inject_files[i] = NULL;
	}
	for (int i = 0; i < rr->ranks.nlocal; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s", rr->files[i]->path);
		if (fflush(rr->files[i]->f) != 0 || nb_outfile_commit(rr->files[i]) != 0)
			nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", path, strerror(errno));
	}
}

void *nb_rank_collect(struct nb_rank_run *rr, const void *mine, size_t each, int signo,
		      int *nranks)
{
	struct nb_ranks *r = &rr->ranks;
	void *all;

	*nranks = signo ? r->nlocal : r->size;
	all = r->root ? calloc(*nranks, each) : NULL;
	if (r->root && !all)
		nb_fail(NB_EXIT_FAILURE, "out of memory for the results");
	if (signo && r->root)
		memcpy(all, mine, each * r->nlocal);
	else if (!signo)
		nb_ranks_gather(r, mine, each, all);
	return all;
}

void nb_rank_json_head(struct nb_rank_run *rr, struct nb_json *j, int signo)
{
	clock_gettime(CLOCK_REALTIME, &rr->info.end_utc);
	rr->info.end = nb_clock_pair_read();
	nb_tuning_after(&rr->tuning, &rr->machine, rr->ranks.cpus, rr->ranks.nlocal);
	rr->info.signo = signo;
	nb_json_open(j, rr->json->f);
	nb_json_run_head(j, &rr->info);
	nb_json_int(j, "ranks_in_run", rr->ranks.size);
	nb_trace_json(j, &rr->trace);
	nb_tuning_json(j, &rr->tuning);
	if (signo && rr->ranks.nlocal < rr->ranks.size)
		printf("interrupted: this report covers the %d rank(s) of the root process only; every "
		       "rank wrote its own data file\n", rr->ranks.nlocal);
}

void nb_rank_json_tail(struct nb_rank_run *rr, struct nb_json *j, int nranks)
{
	char path[4096];

	nb_json_run_tail(j, &rr->info);
	snprintf(path, sizeof(path), "%s", rr->json->path);
	if (nb_outfile_commit(rr->json) != 0)
		nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", path, strerror(errno));
	printf("run kernel=%s complete=%s ranks=%d json=%s\n", rr->name,
	       rr->info.signo ? "false" : "true", nranks, path);
}

void nb_rank_json_rank(struct nb_rank_run *rr, struct nb_json *j, int rank, const char *host,
		       int cpu, const char *suffix)
{
	char name[4096];
	const char *base = strrchr(rr->prefix, '/');

	nb_json_object(j, NULL);
	nb_json_int(j, "rank", rank);
	nb_json_string(j, "host", host);
	nb_json_int(j, "cpu", cpu);
	snprintf(name, sizeof(name), "%s_%d_%s", base ? base + 1 : rr->prefix, rank, suffix);
	nb_json_string(j, "file", name);
}

void nb_rank_json_clock(struct nb_rank_run *rr, struct nb_json *j, int rank,
			const struct nb_rank_clock *c)
{
	nb_json_uint(j, "start_tick", c->start_tick);
	nb_json_uint(j, "end_tick", c->end_tick);
	nb_json_uint(j, "injections", c->injections);
	nb_json_uint(j, "injections_missed", c->injections_missed);
	nb_json_uint(j, "injections_logged", c->injections_logged);
	nb_json_double(j, "steal_ms", c->steal_ms);
	nb_kcounts_json(j, &c->kcounts);
	if (rr->inject.duration_us) {
		char name[4096];
		const char *base = strrchr(rr->prefix, '/');

		snprintf(name, sizeof(name), "%s_%d_injections.dat", base ? base + 1 : rr->prefix,
			 rank);
		nb_json_string(j, "injections_file", name);
	}
	if (rr->trace_opt) {
		char name[4096];
		const char *base = strrchr(rr->prefix, '/');

		snprintf(name, sizeof(name), "%s_%d_causes.dat", base ? base + 1 : rr->prefix, rank);
		nb_causes_json(j, &c->causes, rr->cal.ticks_per_ns, name);
	}
}

void nb_rank_end(struct nb_rank_run *rr)
{
	for (int i = 0; i < rr->ranks.nlocal; i++) {
		struct nb_thread *t = &rr->ranks.local[i];

		nb_samples_free(t->samples, rr->capacity, rr->sample_size);
		nb_work_ctx_free(&t->work);
		nb_inject_log_free(&t->injections);
	}
	free(rr->files);
	free(rr->inject_files);
	free(rr->cause_files);
	nb_trace_free(&rr->trace);
	nb_kcounts_free(&rr->kcounts);
	nb_ranks_finalize(&rr->ranks);
}
