/* noise-check: every CPU of a node against the site's limits, in seconds,
 * for a node health check (LBNL NHC, Slurm's HealthCheckProgram, a prolog).
 *
 * Runs the selfish detour (the selfish binary beside this one) on every CPU
 * this process may use, all at once, for --seconds; reads each rank's result
 * line (the catalogue's rank_line: cpu, stolen_percent, max_loss_us, and
 * with --trace top_cause); prints one line a CPU outside the limits and one
 * summary line, as NHC prints a failed check:
 *
 *   noise: cpu17 took 3.2% > 1% (detours; longest 312 us; irq:41:nvme0q3)
 *
 * "took" is the system's share of the CPU's time (stolen_percent: each
 * detour past the one threshold), the figure the report's verdict and the
 * metrics' noisebench_node_system_ratio give, not the work's own slowdown.
 *
 * The limits are a requirements file's rules (requirements.h), the same the
 * kernels judge by: selfish is given them, and its rank lines carry the
 * verdict. Without a file, noise-check's own two: the system takes at most
 * 1% of a CPU, and no detour is longer than 1000 us.
 *
 * Exit 0 within the limits, 1 outside, 2 when it cannot measure (and why).
 * --metrics writes the figures as a Prometheus node_exporter textfile,
 * atomically: the node's, and those of each CPU outside the limits (of
 * every CPU with --metrics-every-cpu). */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_limits.h"
#include "errors.h"
#include "figures.h"
#include "machine.h"
#include "metrics.h"
#include "outfile.h"
#include "requirements.h"

/* What the kernel's result line of one CPU gave. */
struct cpu_result {
	int cpu;
	double stolen_percent;  /* what the system took */
	double longest_us;      /* max_loss_us: the longest detour beyond an iteration */
	char cause[96];         /* top_cause (with --trace), else "" */
	char *line;             /* the whole line, for the metrics */
	int outside;            /* it broke a limit: the metrics give it series of its own */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: noise-check [options]\n"
		"Measures every CPU of this node at once (the selfish detour) and compares\n"
		"each with the site's limits; one line a CPU outside them, one summary line.\n"
		"Exit 0 within the limits, 1 outside, 2 when it cannot measure.\n"
		"  --seconds S             measure for S seconds (default 5)\n"
		"  --max-stolen-percent P  the system may take at most P%% of a CPU's time\n"
		"                          (stolen_percent <= P; default 1; its old name\n"
		"                          --max-lost-percent still works)\n"
		"  --max-detour-us U       and no detour longer than U us (max_loss_us <= U;\n"
		"                          default 1000)\n"
		"  --requirements FILE     the limits are FILE's rules, the file the kernels'\n"
		"                          --requirements reads; options given win\n"
		"  --limits FILE           the same as --requirements\n"
		"  --limits-from DIR       measure nothing: print a limits file for nodes like\n"
		"                          this one from the runs under DIR (a survey)\n"
		"  --margin X              --limits-from: the survey's 99th percentile times X\n"
		"                          (default 2)\n"
		"  --trace                 name the cause class of each CPU outside (root)\n"
		"  --metrics FILE          write the figures as a node_exporter textfile: the\n"
		"                          node's worst and median CPU, and each CPU outside\n"
		"  --metrics-every-cpu     --metrics: the series of every CPU\n"
		"  -o DIR                  keep the kernel's files in DIR (default: removed)\n"
		"  -h, --help              this text\n");
}

/* The value of key=... in a result line, copied into buf; 0 if absent. */
static int field(const char *line, const char *key, char *buf, size_t size)
{
	size_t len;
	const char *v = nb_line_value(line, key, &len);

	if (v)
		snprintf(buf, size, "%.*s", (int)len, v);
	return v != NULL;
}

static int parse_rank_line(const char *line, struct cpu_result *r)
{
	char cpu[16], lost[32], longest[32];

	if (strncmp(line, "rank kernel=selfish ", 20) != 0)
		return 0;
	if (!field(line, "cpu", cpu, sizeof(cpu)) ||
	    !field(line, "stolen_percent", lost, sizeof(lost)) ||
	    !field(line, "max_loss_us", longest, sizeof(longest)))
		return 0;
	r->cpu = atoi(cpu);
	r->stolen_percent = strtod(lost, NULL);
	r->longest_us = strtod(longest, NULL);
	if (!field(line, "top_cause", r->cause, sizeof(r->cause)))
		r->cause[0] = '\0';
	r->line = strdup(line);
	if (!r->line)
		nb_fail(NB_EXIT_USAGE, "cannot measure: out of memory");
	return 1;
}

/* The selfish binary beside this one. */
static void sibling(const char *name, char *path, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (size < sizeof(self) + 32)
		nb_fail(NB_EXIT_USAGE, "cannot measure: a path buffer too small");

	if (n <= 0)
		nb_fail(NB_EXIT_USAGE, "cannot measure: /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(path, size, "%s/%s", self, name);
	if (access(path, X_OK) != 0)
		nb_fail(NB_EXIT_USAGE, "cannot measure: %s: %s", path, strerror(errno));
}

/* Runs selfish in dir, reads its rank lines into res (at most max); the
 * number read. Fails (exit 2) where it cannot measure. */
static int measure(const char *dir, double seconds, int trace, const struct nb_requirements *q,
		   struct cpu_result *res, int max)
{
	char selfish[PATH_MAX + 32], secs[32], err_path[PATH_MAX + 32];
	char rules_path[PATH_MAX + 32];
	FILE *rules;
	int fds[2], n = 0;

	sibling("selfish", selfish, sizeof(selfish));
	snprintf(secs, sizeof(secs), "%g", seconds);
	snprintf(err_path, sizeof(err_path), "%s/selfish.stderr", dir);
	/* selfish judges its lines by the check's own rules */
	snprintf(rules_path, sizeof(rules_path), "%s/requirements", dir);
	rules = fopen(rules_path, "w");
	if (!rules)
		nb_fail(NB_EXIT_USAGE, "cannot measure: %s: %s", rules_path, strerror(errno));
	nb_requirements_print(q, rules);
	if (fclose(rules) != 0)
		nb_fail(NB_EXIT_USAGE, "cannot measure: %s: %s", rules_path, strerror(errno));
	if (pipe(fds) != 0)
		nb_fail(NB_EXIT_USAGE, "cannot measure: pipe: %s", strerror(errno));
	pid_t pid = fork();

	if (pid < 0)
		nb_fail(NB_EXIT_USAGE, "cannot measure: fork: %s", strerror(errno));
	if (pid == 0) {
		char *argv[] = { selfish, "-t", "0", "--seconds", secs, "--warmup-ms", "0",
				 "--requirements", "requirements", "-o", "selfish",
				 trace ? "--trace" : NULL, NULL };
		FILE *e = fopen(err_path, "w");

		if (chdir(dir) != 0 || !e)
			_exit(127);
		dup2(fds[1], STDOUT_FILENO);
		dup2(fileno(e), STDERR_FILENO);
		close(fds[0]);
		execv(selfish, argv);
		_exit(127);
	}
	close(fds[1]);
	FILE *out = fdopen(fds[0], "r");
	char line[4096];
	/* the kernel's own start and finish take well under a second; a node
	 * that holds it up several times its length cannot be measured */
	time_t deadline = time(NULL) + (time_t)(3 * seconds) + 30;
	struct pollfd p = { .fd = fds[0], .events = POLLIN };

	for (;;) {
		int left = (int)(deadline - time(NULL));

		if (left <= 0 || poll(&p, 1, left * 1000) == 0) {
			kill(pid, SIGTERM);
			waitpid(pid, NULL, 0);
			nb_fail(NB_EXIT_USAGE, "cannot measure: selfish did not finish within %d s",
				(int)(3 * seconds) + 30);
		}
		if (!fgets(line, sizeof(line), out))
			break;
		if (n < max && parse_rank_line(line, &res[n]))
			n++;
	}
	fclose(out);
	int status;

	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char why[512] = "";
		FILE *e = fopen(err_path, "r");

		if (e) {
			if (!fgets(why, sizeof(why), e))
				why[0] = '\0';
			fclose(e);
		}
		why[strcspn(why, "\n")] = '\0';
		nb_fail(NB_EXIT_USAGE, "cannot measure: selfish %s %d%s%s",
			WIFEXITED(status) ? "exited with" : "ended by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), *why ? ": " : "",
			why);
	}
	if (n == 0)
		nb_fail(NB_EXIT_USAGE, "cannot measure: selfish printed no result line");
	return n;
}

/* The catalogue's metrics of each CPU (metrics.h), and the check's own. */
static void write_metrics(const char *path, const struct cpu_result *res, int n,
			  const struct nb_requirements *q, int outside, double wall_s, int every_cpu)
{
	struct nb_outfile *o = nb_outfile_open(path);
	struct nb_machine m;
	char *lines[NB_MAX_CPUS];
	int broken[NB_MAX_CPUS];

	if (!o)
		nb_fail(NB_EXIT_USAGE, "--metrics %s: %s", path, strerror(errno));
	nb_machine_describe(&m);
	for (int i = 0; i < n; i++) {
		lines[i] = res[i].line;
		broken[i] = res[i].outside;
	}
	nb_metrics_info(o->f, &m);
	nb_metrics_rank_lines(o->f, lines, broken, n, "noise-check", every_cpu);
	const struct nb_rule *lost = nb_requirements_find(q, "stolen_percent");
	const struct nb_rule *longest = nb_requirements_find(q, "max_loss_us");

	if (lost)
		nb_metrics_gauge(o->f, "noisebench_check_limit_detour_ratio",
				 "The most of a CPU's time the check lets the system take.",
				 lost->bound / 100);
	if (longest)
		nb_metrics_gauge(o->f, "noisebench_check_limit_detour_seconds",
				 "The longest detour the check lets pass.", longest->bound / 1e6);
	nb_metrics_gauge(o->f, "noisebench_check_cpus_outside", "CPUs outside the limits.",
			 outside);
	nb_metrics_gauge(o->f, "noisebench_check_duration_seconds", "The check's wall time.",
			 wall_s);
	nb_metrics_gauge(o->f, "noisebench_check_timestamp_seconds", "When the check ended.",
			 (double)time(NULL));
	nb_outfile_commit_or_fail(o);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* The kernel's files when -o does not keep them. */
static const char *scratch;

static void remove_scratch(int code)
{
	(void)code;
	if (scratch && nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		nb_warn("could not remove %s: %s", scratch, strerror(errno));
	scratch = NULL;
}

/* The CPU that lost most first. */
static int by_loss(const void *a, const void *b)
{
	const struct cpu_result *x = a, *y = b;

	return (x->stolen_percent < y->stolen_percent) - (x->stolen_percent > y->stolen_percent);
}

/* The reason's tail: the cause where traced. */
static const char *cause_of(const struct cpu_result *r, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", *r->cause ? "; " : "", r->cause);
	return buf;
}

/* The rules: the file's, else the check's own two; the options replace
 * theirs. */
static void read_rules(struct nb_requirements *q, const char *file, double max_stolen,
		       double max_detour)
{
	struct nb_rule rule;
	char text[64];
	const char *bad;

	if (file) {
		bad = nb_requirements_read(file, q);
		if (bad)
			nb_fail(NB_EXIT_USAGE, "--requirements %s", bad);
	} else {
		memset(q, 0, sizeof(*q));
		snprintf(q->source, sizeof(q->source), "noise-check's defaults");
		max_stolen = max_stolen > 0 ? max_stolen : 1;
		max_detour = max_detour > 0 ? max_detour : 1000;
	}
	if (max_stolen > 0) {
		snprintf(text, sizeof(text), "stolen_percent <= %.17g", max_stolen);
		nb_rule_parse(text, &rule);
		nb_requirements_set(q, &rule);
	}
	if (max_detour > 0) {
		snprintf(text, sizeof(text), "max_loss_us <= %.17g", max_detour);
		nb_rule_parse(text, &rule);
		nb_requirements_set(q, &rule);
	}
}

/* What failing a rule reads as: "> 1" for "<= 1", ">= 1" for "< 1". */
static const char *broken(const struct nb_rule *rule)
{
	return rule->or_equal ? ">" : ">=";
}

/* One line for each CPU outside the limits, the worst first (a health
 * check's drain reason is the first line), naming the first rule it broke;
 * how many there are. Ends the process (exit 2) when no rule speaks of the
 * selfish detour's figures. */
static int judge(const struct nb_requirements *q, struct cpu_result *res, int n)
{
	int outside = 0, judged = 0;

	qsort(res, (size_t)n, sizeof(res[0]), by_loss);
	for (int i = 0; i < n; i++) {
		struct cpu_result *r = &res[i];
		unsigned char unmet[NB_RULES_MAX];
		int nunmet, k = 0;
		char cause[128];
		double v = 0;

		judged += nb_requirements_judge(q, r->line, unmet, &nunmet) > 0;
		if (!nunmet)
			continue;
		r->outside = 1;
		outside++;
		while (!unmet[k])
			k++;
		const struct nb_rule *rule = &q->rule[k];

		nb_rule_value(rule, r->line, &v);
		if (!strcmp(rule->figure, "stolen_percent"))
			printf("noise: cpu%d took %.3g%% %s %.3g%% (detours; longest %.0f us%s)\n", r->cpu,
			       r->stolen_percent, broken(rule), rule->bound, r->longest_us,
			       cause_of(r, cause, sizeof(cause)));
		else if (!strcmp(rule->figure, "max_loss_us"))
			printf("noise: cpu%d detour of %.0f us %s %.0f us (took %.3g%%%s)\n", r->cpu,
			       r->longest_us, broken(rule), rule->bound, r->stolen_percent,
			       cause_of(r, cause, sizeof(cause)));
		else
			printf("noise: cpu%d %s %.4g %s %.4g (took %.3g%%; longest %.0f us%s)\n", r->cpu,
			       rule->figure, v, broken(rule), rule->bound, r->stolen_percent,
			       r->longest_us, cause_of(r, cause, sizeof(cause)));
	}
	if (!judged)
		nb_fail(NB_EXIT_USAGE, "cannot judge: no rule of %s speaks of the selfish detour's "
			"figures (e.g. stolen_percent, max_loss_us)", q->source);
	return outside;
}

/* A rule in the summary line's words: "took <= 1%", or with the largest
 * value of its figure over the CPUs, "took at most 0.31% <= 1%". */
static void rule_words(const struct nb_rule *rule, const double *worst, char *buf, size_t size)
{
	const char *op = rule->or_equal ? "<=" : "<";
	int lost = !strcmp(rule->figure, "stolen_percent");
	int longest = !strcmp(rule->figure, "max_loss_us");
	char at[64] = "";

	if (worst && lost)
		snprintf(at, sizeof(at), " at most %.3g%%", *worst);
	else if (worst && longest)
		snprintf(at, sizeof(at), " %.0f us", *worst);
	else if (worst)
		snprintf(at, sizeof(at), " at most %.4g", *worst);
	if (lost)
		snprintf(buf, size, "took%s %s %.3g%%", at, op, rule->bound);
	else if (longest)
		snprintf(buf, size, "%s%s %s %.0f us", worst ? "longest detour" : "detours", at, op,
			 rule->bound);
	else
		snprintf(buf, size, "%s%s %s %.4g", rule->figure, at, op, rule->bound);
}

/* The summary line: how many CPUs, against which rules, the worst. */
static void summary_line(const struct nb_requirements *q, const struct cpu_result *res, int n,
			 int outside, double wall)
{
	char words[NB_RULES_MAX * 64] = "";
	int longest = 0;

	for (int i = 0; i < n; i++)
		if (res[i].longest_us > res[longest].longest_us)
			longest = i;
	for (int k = 0; k < q->n; k++) {
		const struct nb_rule *rule = &q->rule[k];
		double worst = -INFINITY, v;
		int seen = 0;
		size_t used = strlen(words);

		for (int i = 0; i < n; i++)
			if (nb_rule_value(rule, res[i].line, &v) && (seen = 1) && v > worst)
				worst = v;
		if (!seen)
			continue; /* a rule of other kernels' figures */
		if (used)
			used += (size_t)snprintf(words + used, sizeof(words) - used, ", ");
		rule_words(rule, outside ? NULL : &worst, words + used, sizeof(words) - used);
	}
	if (outside)
		printf("noise: %d of %d CPUs outside the limits (%s); worst cpu%d took %.3g%%, "
		       "longest detour %.0f us on cpu%d; %.1f s\n", outside, n, words, res[0].cpu,
		       res[0].stolen_percent, res[longest].longest_us, res[longest].cpu, wall);
	else
		printf("noise: %d CPUs within the limits (%s); %.1f s\n", n, words, wall);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "max-stolen-percent", required_argument, NULL, 'p' },
		/* The old name: "lost" is the time beyond the best sample, not the system's share. */
		{ "max-lost-percent", required_argument, NULL, 'P' },
		{ "max-detour-us", required_argument, NULL, 'u' },
		{ "limits", required_argument, NULL, 'l' },
		{ "requirements", required_argument, NULL, 'l' },
		{ "limits-from", required_argument, NULL, 'f' },
		{ "margin", required_argument, NULL, 'g' },
		{ "trace", no_argument, NULL, 't' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "metrics-every-cpu", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct nb_requirements rules;
	double max_stolen = 0, max_detour = 0;
	int trace = 0, every_cpu = 0, c;
	double seconds = 5, margin = 2;
	const char *survey = NULL, *limits_file = NULL, *metrics = NULL, *keep = NULL;
	double start = now_s();

	nb_set_program(argv[0]);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = nb_parse_double("--seconds", optarg, 0.1, 3600);
			break;
		case 'p':
			max_stolen = nb_parse_double("--max-stolen-percent", optarg, 1e-6, 100);
			break;
		case 'P':
			max_stolen = nb_parse_double("--max-lost-percent", optarg, 1e-6, 100);
			break;
		case 'u':
			max_detour = nb_parse_double("--max-detour-us", optarg, 0.001, 1e9);
			break;
		case 'l':
			limits_file = optarg;
			break;
		case 'f':
			survey = optarg;
			break;
		case 'g':
			margin = nb_parse_double("--margin", optarg, 1, 1000);
			break;
		case 't':
			trace = 1;
			break;
		case 'm':
			metrics = optarg;
			break;
		case 'e':
			every_cpu = 1;
			break;
		case 'o':
			keep = optarg;
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
	if (survey) {
		limits_from_survey(survey, margin, stdout);
		return 0;
	}
	read_rules(&rules, limits_file, max_stolen, max_detour);

	char dir[PATH_MAX];

	if (keep) {
		if (mkdir(keep, 0755) != 0 && errno != EEXIST)
			nb_fail(NB_EXIT_USAGE, "-o %s: %s", keep, strerror(errno));
		snprintf(dir, sizeof(dir), "%s", keep);
	} else {
		const char *tmp = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/noise-check.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir))
			nb_fail(NB_EXIT_USAGE, "cannot measure: mkdtemp %s: %s", dir, strerror(errno));
		scratch = dir;
		/* a check that cannot measure leaves nothing behind either */
		nb_set_exit_hook(remove_scratch, 0);
	}
	static struct cpu_result res[NB_MAX_CPUS];
	int n = measure(dir, seconds, trace, &rules, res, NB_MAX_CPUS);

	remove_scratch(0);
	int outside = judge(&rules, res, n);
	double wall = now_s() - start;

	summary_line(&rules, res, n, outside, wall);
	if (metrics)
		write_metrics(metrics, res, n, &rules, outside, wall, every_cpu);
	return outside ? 1 : 0;
}
