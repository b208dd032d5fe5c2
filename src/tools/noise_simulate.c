/*
 * noise-simulate: a discrete-event simulation of a bulk-synchronous program
 * under replayed noise traces. analysis/R/scale.R reports its figure where
 * the analytic model does not hold (scale.csv's `source`), and
 * tests/test_scale_model.py holds the model to it where it does; the two
 * share no code. The traces are replayed as LogGOPSim does (spcl/LogGOPSim,
 * Noise.hpp): an operation of length L that starts at t on a process meets
 * the rest of the detour under way at t and every detour that begins in
 * (t, t + L]; it ends at t + L + that noise. A message costs nothing to
 * send, carry or receive (o = L = g = 0), but a process in a detour handles
 * it only when the detour ends: each send and receive is an operation of
 * length 0.
 *
 *   noise-simulate --phase-us T[,T...] --processes P[,P...] [--allreduce]
 *                  [--seed S] [--budget OPS] TRACE...
 *
 * Each TRACE is in LogGOPSim's --noise-trace format as the report writes it
 * (report/loggopsim/): a header "# ...: D ns traced", then one detour a
 * line, "start<TAB>length" in ns. Uncoordinated, process i replays TRACE
 * i mod n from a random offset; co-scheduled, from one offset for all. The
 * trace repeats with period D. A phase is T of compute, then a
 * dissemination barrier (or, with --allreduce, a recursive-doubling
 * allreduce). Prints CSV: mode, phase_us, processes, slowdown (the wall
 * time of the phases over their T), se (its standard error, from 8
 * replays with offsets of their own), phases (over all replays). The
 * cells (a mode, phase and process count each) are simulated in parallel
 * on OMP_NUM_THREADS threads where OpenMP is built in; each has a seed of
 * its own, so the output is the same on any number of them.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trace {
	double duration;
	size_t n;
	double *start, *length;
	double *sum; /* sum[k]: the lengths of detours 0 to k */
};

/* Where a process is in its trace: `k` the last detour that began at or
 * before its time, in repetition `cycle`; times only move forward. `next`
 * (when the detour after k begins) and `end` (when k ends), in trace time,
 * are kept here: most operations (a collective's sends and receives, of
 * length 0) meet no new detour, and then need nothing from the trace, whose
 * arrays are a cache miss away when thousands of processes replay it. */
struct process {
	const struct trace *tr;
	double offset;
	long cycle;
	long k;
	double next, end;
};

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "noise-simulate: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(2);
}

#define USAGE "usage: noise-simulate --phase-us T[,T...] --processes P[,P...] [--allreduce] " \
	      "[--seed S] [--budget OPS] TRACE..."
#define HELP \
	"The slowdown of a bulk-synchronous program, phases of T us of compute and a\n" \
	"barrier (or --allreduce) among P processes, under the noise of each TRACE\n" \
	"(LogGOPSim's --noise-trace format, the report's loggopsim/*.txt), replayed\n" \
	"event by event. Prints CSV: mode, phase_us, processes, slowdown, se, phases.\n" \
	"  --seed S       the replays' random offsets (default 1)\n" \
	"  --budget OPS   operations simulated a cell at most (default 2e8)\n" \
	"  -h, --help     this text\n"

static void free_trace(struct trace *tr)
{
	free(tr->start);
	free(tr->length);
	free(tr->sum);
	memset(tr, 0, sizeof *tr);
}

/* Reads a trace file into tr: NULL, or why not ("FILE:LINE: ..."), with
 * nothing left allocated or open. */
static const char *read_trace(const char *path, struct trace *tr)
{
	static char why[512];
	FILE *f = fopen(path, "r");
	char line[256];
	size_t cap = 0;
	int lineno = 0;

	memset(tr, 0, sizeof *tr);
	if (!f) {
		snprintf(why, sizeof why, "%s: %s", path, strerror(errno));
		return why;
	}
	why[0] = '\0';
	while (fgets(line, sizeof line, f)) {
		double s, l;

		lineno++;
		if (line[0] == '#') {
			const char *colon = strrchr(line, ':');
			if (colon)
				sscanf(colon, ": %lf ns traced", &tr->duration);
			continue;
		}
		if (sscanf(line, "%lf %lf", &s, &l) != 2 || s < 0 || l < 0 ||
		    (tr->n && s < tr->start[tr->n - 1])) {
			snprintf(why, sizeof why, "%s:%d: want start<TAB>length, ns, in order", path,
				 lineno);
			break;
		}
		if (tr->n == cap) {
			size_t grown = cap ? 2 * cap : 1024;
			double *start = realloc(tr->start, grown * sizeof *start);
			double *length;

			if (start)
				tr->start = start;
			length = start ? realloc(tr->length, grown * sizeof *length) : NULL;
			if (!length) {
				snprintf(why, sizeof why, "%s: out of memory", path);
				break;
			}
			tr->length = length;
			cap = grown;
		}
		tr->start[tr->n] = s;
		tr->length[tr->n] = l;
		tr->n++;
	}
	fclose(f);
	if (!why[0] && tr->n) {
		tr->sum = malloc(tr->n * sizeof *tr->sum);
		if (!tr->sum)
			snprintf(why, sizeof why, "%s: out of memory", path);
		for (size_t k = 0; tr->sum && k < tr->n; k++)
			tr->sum[k] = (k ? tr->sum[k - 1] : 0) + tr->length[k];
	}
	if (!why[0] && (!(tr->duration > 0) || (tr->n && tr->start[tr->n - 1] >= tr->duration)))
		snprintf(why, sizeof why,
			 "%s: needs a header '# ...: D ns traced' with every start below D", path);
	if (!why[0])
		return NULL;
	free_trace(tr);
	return why;
}

static double detour_start(const struct process *p, long cycle, long k)
{
	return (double)cycle * p->tr->duration + p->tr->start[k];
}

/* The lengths of the detours up to the k-th of a cycle, from the trace's
 * start. */
static double lengths_to(const struct trace *tr, long cycle, long k)
{
	return (double)cycle * tr->sum[tr->n - 1] + tr->sum[k];
}

/* Puts p after the k-th detour of repetition `cycle`. */
static void place(struct process *p, long cycle, long k)
{
	long next = k + 1 == (long)p->tr->n ? 0 : k + 1;
	p->cycle = cycle;
	p->k = k;
	p->next = detour_start(p, next ? cycle : cycle + 1, next);
	p->end = detour_start(p, cycle, k) + p->tr->length[k];
}

/* Moves p to trace time u; returns the lengths of the detours that began in
 * (old time, u] when `sum`, else 0. A few steps are walked; a longer way
 * (a long operation on a dense trace, every FWQ sample a detour) is
 * searched. */
static double advance(struct process *p, double u, int sum)
{
	if (u < p->next)
		return 0;
	const struct trace *tr = p->tr;
	long cycle = p->cycle, k = p->k;
	for (int step = 0; step < 8; step++) {
		long c = cycle, next = k + 1;
		if ((size_t)next == tr->n) {
			c++;
			next = 0;
		}
		if (detour_start(p, c, next) > u)
			goto found;
		cycle = c;
		k = next;
	}
	{
		/* the last detour that began at or before u */
		long c = (long)floor(u / tr->duration);
		size_t lo = 0, hi = tr->n;
		double in = u - (double)c * tr->duration;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (tr->start[mid] <= in)
				lo = mid + 1;
			else
				hi = mid;
		}
		cycle = lo ? c : c - 1;
		k = lo ? (long)lo - 1 : (long)tr->n - 1;
	}
found:;
	double total = sum ? lengths_to(tr, cycle, k) - lengths_to(tr, p->cycle, p->k) : 0;
	place(p, cycle, k);
	return total;
}

/* An operation of `len` ns starting at wall time t: when it ends. */
static double operation(struct process *p, double t, double len)
{
	if (p->tr->n == 0)
		return t + len;
	double u = t + p->offset;
	advance(p, u, 0);
	double noise = p->end > u ? p->end - u : 0;
	noise += advance(p, u + len, 1);
	return t + len + noise;
}

static double uniform(uint64_t *state)
{
	/* splitmix64: the offsets need no more than independence */
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

/* Round `dist` of a dissemination barrier: i sends to i + dist, receives
 * from i - dist. */
static void exchange(struct process *p, double *t, double *sent, long n, long dist, int xor)
{
	for (long i = 0; i < n; i++)
		sent[i] = operation(&p[i], t[i], 0);
	for (long i = 0; i < n; i++) {
		long from = xor ? (i ^ dist) : ((i - dist) % n + n) % n;
		double arrives = sent[from] > sent[i] ? sent[from] : sent[i];
		t[i] = operation(&p[i], arrives, 0);
	}
}

/* A recursive-doubling allreduce; beyond the largest power of two, the
 * extra processes hand their value to a partner first and get the result
 * back last. */
static void allreduce(struct process *p, double *t, double *sent, long n)
{
	long pow2 = 1;
	while (2 * pow2 <= n)
		pow2 *= 2;
	for (long i = pow2; i < n; i++) {
		double s = operation(&p[i], t[i], 0);
		double a = s > t[i - pow2] ? s : t[i - pow2];
		t[i - pow2] = operation(&p[i - pow2], a, 0);
	}
	for (long dist = 1; dist < pow2; dist *= 2)
		exchange(p, t, sent, pow2, dist, 1);
	for (long i = pow2; i < n; i++) {
		double s = operation(&p[i - pow2], t[i - pow2], 0);
		double a = s > t[i] ? s : t[i];
		t[i] = operation(&p[i], a, 0);
	}
}

/* The numbers of a comma-separated list, each above 0. */
static size_t numbers(const char *flag, const char *list, double *out, size_t max)
{
	size_t n = 0;
	char *end;
	for (const char *p = list; *p; p = end + (*end == ',')) {
		if (n == max)
			die(flag, "too many values");
		out[n] = strtod(p, &end);
		if (end == p || !(out[n] > 0) || (*end && *end != ','))
			die(flag, "want positive numbers, comma-separated");
		n++;
	}
	return n;
}

/* Independent replays of a cell, each from offsets of its own: the
 * slowdown's error is the spread between them, which holds both the
 * phases' variation and how much the offsets drawn matter (a few processes
 * at unlucky offsets weigh on every phase of a replay). */
#define REPLAYS 8

/* One replay of `phases` phases from fresh offsets: their wall time over
 * their T, after a few more not counted. The first phase starts at a random
 * point of every trace; the phases after it start where the slowest
 * process's detour ended, so the first would weigh too much in a short
 * replay. */
static double replay(struct trace *traces, int ntraces, double phase, long procs, int cosched,
		     int all_reduce, uint64_t *seed, long phases, struct process *p, double *t,
		     double *sent)
{
	double common = uniform(seed);
	for (long i = 0; i < procs; i++) {
		p[i].tr = &traces[i % ntraces];
		p[i].offset = (cosched ? common : uniform(seed)) * p[i].tr->duration;
		if (p[i].tr->n)
			place(&p[i], -1, (long)p[i].tr->n - 1);
		t[i] = 0;
	}
	long warm = 2 + phases / 10;
	double begin = 0;
	for (long k = 0; k < warm + phases; k++) {
		for (long i = 0; i < procs; i++)
			t[i] = operation(&p[i], t[i], phase);
		if (all_reduce)
			allreduce(p, t, sent, procs);
		else
			for (long dist = 1; dist < procs; dist *= 2)
				exchange(p, t, sent, procs, dist, 0);
		if (k + 1 == warm)
			for (long i = 0; i < procs; i++)
				begin = fmax(begin, t[i]);
	}
	double end = 0;
	for (long i = 0; i < procs; i++)
		end = fmax(end, t[i]);
	return (end - begin) / (phase * (double)phases);
}

/* One cell: P processes, phases of T ns; the slowdown and its error. */
static void simulate(struct trace *traces, int ntraces, double phase, long procs, int cosched,
		     int all_reduce, uint64_t seed, double budget, double *slowdown, double *se,
		     long *phases_done)
{
	/* co-scheduled, process i and i + n replay one trace from one offset:
	 * with costless messages they finish every operation together, and the
	 * copies change nothing */
	if (cosched && procs > ntraces)
		procs = ntraces;
	struct process *p = calloc((size_t)procs, sizeof *p);
	double *t = calloc((size_t)procs, sizeof *t), *sent = calloc((size_t)procs, sizeof *sent);
	if (!p || !t || !sent)
		die("out of memory", NULL);
	double longest = 0;
	for (int i = 0; i < ntraces; i++)
		longest = fmax(longest, traces[i].duration);
	/* enough phases to pass through the trace twenty times over all
	 * processes' offsets, within the budget of operations (a compute and
	 * two per round of the collective), and at least 2 a replay */
	double cover = 20 * longest / phase / (cosched ? 1 : (double)procs);
	double per_phase = (double)procs * (1 + 2 * ceil(log2((double)procs)));
	long phases = (long)fmax(fmin(fmax(cover, 2000), budget / per_phase) / REPLAYS, 2);
	double x[REPLAYS], mean = 0, var = 0;
	for (int r = 0; r < REPLAYS; r++) {
		x[r] = replay(traces, ntraces, phase, procs, cosched, all_reduce, &seed, phases, p, t,
			      sent);
		mean += x[r] / REPLAYS;
	}
	for (int r = 0; r < REPLAYS; r++)
		var += (x[r] - mean) * (x[r] - mean) / (REPLAYS - 1);
	*slowdown = mean;
	*se = sqrt(var / REPLAYS);
	*phases_done = phases * REPLAYS;
	free(p);
	free(t);
	free(sent);
}

int main(int argc, char **argv)
{
	double phases_us[64], processes[64];
	size_t nphase = 0, nproc = 0;
	int all_reduce = 0;
	uint64_t seed = 1;
	double budget = 2e8;
	int first_trace = argc;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int has = i + 1 < argc;
		if (!strcmp(a, "--phase-us") && has)
			nphase = numbers(a, argv[++i], phases_us, 64);
		else if (!strcmp(a, "--processes") && has)
			nproc = numbers(a, argv[++i], processes, 64);
		else if (!strcmp(a, "--seed") && has)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(a, "--budget") && has)
			numbers(a, argv[++i], &budget, 1);
		else if (!strcmp(a, "--allreduce"))
			all_reduce = 1;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("%s\n%s", USAGE, HELP);
			return 0;
		}
		else if (a[0] == '-')
			die("unknown option", a);
		else {
			first_trace = i;
			break;
		}
	}
	int ntraces = argc - first_trace;
	if (!nphase || !nproc || ntraces < 1)
		die(USAGE, NULL);
	struct trace *traces = calloc((size_t)ntraces, sizeof *traces);
	if (!traces)
		die("out of memory", NULL);
	for (int i = 0; i < ntraces; i++) {
		const char *why = read_trace(argv[first_trace + i], &traces[i]);

		if (why) {
			fprintf(stderr, "noise-simulate: %s\n", why);
			exit(2);
		}
	}
	/* cell c: phase c / (2 nproc), co-scheduled or not, process count c % nproc */
	long ncells = (long)(nphase * 2 * nproc);
	struct cell {
		double slowdown, se;
		long phases;
	} *cells = calloc((size_t)ncells, sizeof *cells);
	if (!cells)
		die("out of memory", NULL);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
	for (long c = 0; c < ncells; c++) {
		size_t a = (size_t)c / (2 * nproc), b = (size_t)c % nproc;
		int cosched = (int)((size_t)c / nproc % 2);

		simulate(traces, ntraces, phases_us[a] * 1e3, (long)processes[b], cosched, all_reduce,
			 seed + 7919 * (a * nproc + b), budget, &cells[c].slowdown, &cells[c].se,
			 &cells[c].phases);
	}
	printf("mode,phase_us,processes,slowdown,se,phases\n");
	for (long c = 0; c < ncells; c++) {
		size_t a = (size_t)c / (2 * nproc), b = (size_t)c % nproc;

		printf("%s,%.17g,%.17g,%.9g,%.3g,%ld\n",
		       (size_t)c / nproc % 2 ? "co-scheduled" : "uncoordinated", phases_us[a],
		       processes[b], cells[c].slowdown, cells[c].se, cells[c].phases);
	}
	free(cells);
	for (int i = 0; i < ntraces; i++) {
		free_trace(&traces[i]);
	}
	free(traces);
	return 0;
}
