#define _GNU_SOURCE
#include "requirements.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "figures.h"
#include "requirements_default.h"

enum { CPUS_MAX = 8192 };

static const char *const default_rules[] = NB_REQUIREMENTS_DEFAULT;

void nb_requirements_default(struct nb_requirements *q)
{
	memset(q, 0, sizeof(*q));
	snprintf(q->source, sizeof(q->source), "default");
	for (size_t i = 0; i < sizeof(default_rules) / sizeof(*default_rules); i++) {
		/* the catalogue's rules are this file's own: tests/unit holds them valid */
		if (!nb_rule_parse(default_rules[i], &q->rule[q->n]))
			q->n++;
	}
}

/* A figure's name: a rank line's key, letters, digits and '_'. */
static int is_key(const char *s, size_t len)
{
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

/* The older limits file's two keys, each one rule. */
static const char *legacy_rule(const char *key, const char *rest, struct nb_rule *rule)
{
	static const struct { const char *key, *figure; } legacy[] = {
		{ "max_lost_percent", "stolen_percent" },
		{ "max_detour_us", "max_loss_us" },
	};
	char *end;

	for (size_t i = 0; i < sizeof(legacy) / sizeof(*legacy); i++) {
		if (strcmp(key, legacy[i].key) != 0)
			continue;
		errno = 0;
		double v = strtod(rest, &end);

		if (end == rest || errno || *(end + strspn(end, " \t")) || !(v > 0) || isinf(v))
			return "wants one positive number";
		memset(rule, 0, sizeof(*rule));
		snprintf(rule->figure, sizeof(rule->figure), "%s", legacy[i].figure);
		rule->or_equal = 1;
		rule->bound = v;
		return NULL;
	}
	return "";
}

const char *nb_rule_parse(const char *text, struct nb_rule *rule)
{
	char key[NB_RULE_FIGURE + 1], op[4], *end;
	const char *p = text + strspn(text, " \t");
	size_t len = strcspn(p, " \t");
	int n;

	if (!is_key(p, len))
		return "a rule starts with a figure, a rank line's key (e.g. stolen_percent)";
	if (len >= NB_RULE_FIGURE)
		return "the figure's name is too long";
	memcpy(key, p, len);
	key[len] = '\0';
	p += len;
	const char *legacy = legacy_rule(key, p, rule);

	if (!legacy || *legacy)
		return legacy;
	if (sscanf(p, " %3s%n", op, &n) != 1 || (strcmp(op, "<") && strcmp(op, "<=")))
		return "after the figure comes < or <= (e.g. kurtosis < 100)";
	p += n;
	errno = 0;
	double bound = strtod(p, &end);

	if (end == p || errno || isnan(bound))
		return "after the operator comes the bound, a number (e.g. 1e-6)";
	memset(rule, 0, sizeof(*rule));
	memcpy(rule->figure, key, len + 1);
	rule->or_equal = op[1] == '=';
	rule->bound = bound;
	for (p = end;;) {
		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (!len)
			return NULL;
		if (len > 4 && strncmp(p, "nan=", 4) == 0) {
			if (len == 8 && strncmp(p + 4, "pass", 4) == 0)
				rule->nan_passes = 1;
			else if (!(len == 8 && strncmp(p + 4, "fail", 4) == 0))
				return "nan= takes pass or fail";
		} else if (len > 7 && strncmp(p, "kernel=", 7) == 0) {
			if (!is_key(p + 7, len - 7) || len - 7 >= NB_RULE_KERNEL)
				return "kernel= takes a kernel's name, as its rank lines give it";
			memcpy(rule->kernel, p + 7, len - 7);
		} else if (len > 5 && strncmp(p, "cpus=", 5) == 0) {
			static int cpus[CPUS_MAX];
			const char *bad;

			if (len - 5 >= NB_RULE_CPUS)
				return "cpus= takes a list of at most 255 characters";
			memcpy(rule->cpus, p + 5, len - 5);
			if (nb_cpu_list_parse(rule->cpus, cpus, CPUS_MAX, &bad) <= 0)
				return "cpus= takes a CPU list (e.g. 2-47,50-95)";
		} else {
			return "a rule ends with kernel=NAME, cpus=LIST or nan=pass|fail";
		}
		p += len;
	}
}

const char *nb_requirements_set(struct nb_requirements *q, const struct nb_rule *rule)
{
	for (int i = 0; i < q->n; i++) {
		struct nb_rule *r = &q->rule[i];

		if (!strcmp(r->figure, rule->figure) && !strcmp(r->kernel, rule->kernel) &&
		    !strcmp(r->cpus, rule->cpus)) {
			*r = *rule;
			return NULL;
		}
	}
	if (q->n == NB_RULES_MAX)
		return "more than 64 rules";
	q->rule[q->n++] = *rule;
	return NULL;
}

const char *nb_requirements_read(const char *path, struct nb_requirements *q)
{
	static char why[NB_RULES_SOURCE + 200];
	FILE *f = fopen(path, "r");
	char line[1024];
	int n = 0;

	if (!f) {
		snprintf(why, sizeof(why), "%s: %s", path, strerror(errno));
		return why;
	}
	memset(q, 0, sizeof(*q));
	snprintf(q->source, sizeof(q->source), "%s", path);
	while (fgets(line, sizeof(line), f)) {
		struct nb_rule rule;
		const char *bad;

		n++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(why, sizeof(why), "%s:%d: a line of over 1,000 characters", path, n);
			fclose(f);
			return why;
		}
		line[strcspn(line, "#\r\n")] = '\0';
		if (!line[strspn(line, " \t")])
			continue;
		bad = nb_rule_parse(line, &rule);
		if (!bad)
			bad = nb_requirements_set(q, &rule);
		if (bad) {
			snprintf(why, sizeof(why), "%s:%d: %s", path, n, bad);
			fclose(f);
			return why;
		}
	}
	fclose(f);
	if (q->n == 0) {
		snprintf(why, sizeof(why), "%s: no rule in it (one a line: FIGURE < BOUND)", path);
		return why;
	}
	return NULL;
}

void nb_rule_format(const struct nb_rule *rule, char *buf, size_t size)
{
	snprintf(buf, size, "%s %s %.6g%s%s%s%s%s", rule->figure, rule->or_equal ? "<=" : "<",
		 rule->bound, *rule->kernel ? " kernel=" : "", rule->kernel,
		 *rule->cpus ? " cpus=" : "", rule->cpus, rule->nan_passes ? " nan=pass" : "");
}

const struct nb_rule *nb_requirements_find(const struct nb_requirements *q, const char *figure)
{
	for (int i = 0; i < q->n; i++)
		if (!strcmp(q->rule[i].figure, figure))
			return &q->rule[i];
	return NULL;
}

int nb_rule_value(const struct nb_rule *rule, const char *line, double *v)
{
	size_t len;
	const char *s = nb_line_value(line, rule->figure, &len);
	char buf[64], *end;

	if (!s || !len || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*v = strtod(buf, &end);
	/* a trailing %, as the rank line's shares may have */
	return end != buf && (!*end || !strcmp(end, "%"));
}

/* Whether the rule speaks of this line: its kernel and its CPU. */
static int applies(const struct nb_rule *rule, const char *line)
{
	size_t len;
	const char *s;

	if (*rule->kernel) {
		s = nb_line_value(line, "kernel", &len);
		if (!s || len != strlen(rule->kernel) || strncmp(s, rule->kernel, len))
			return 0;
	}
	if (*rule->cpus) {
		static int cpus[CPUS_MAX];
		const char *bad;
		int n = nb_cpu_list_parse(rule->cpus, cpus, CPUS_MAX, &bad);

		s = nb_line_value(line, "cpu", &len);
		if (!s)
			return 0;
		int cpu = atoi(s), found = 0;

		for (int i = 0; i < n && !found; i++)
			found = cpus[i] == cpu;
		return found;
	}
	return 1;
}

int nb_requirements_judge(const struct nb_requirements *q, const char *line, unsigned char *unmet,
			  int *nunmet)
{
	int judged = 0;

	*nunmet = 0;
	for (int i = 0; i < q->n; i++) {
		const struct nb_rule *rule = &q->rule[i];
		double v;
		int met;

		if (unmet)
			unmet[i] = 0;
		if (!applies(rule, line) || !nb_rule_value(rule, line, &v))
			continue;
		judged++;
		if (isnan(v))
			met = rule->nan_passes;
		else
			met = rule->or_equal ? v <= rule->bound : v < rule->bound;
		if (!met) {
			++*nunmet;
			if (unmet)
				unmet[i] = 1;
		}
	}
	return judged;
}

void nb_requirements_print(const struct nb_requirements *q, FILE *out)
{
	char text[NB_RULE_TEXT];

	fprintf(out, "# noisebench requirements: %s\n"
		"# one rule a line: FIGURE < BOUND or FIGURE <= BOUND (a rank line's figure),\n"
		"# then kernel=NAME, cpus=LIST, nan=pass|fail (docs/analysis.md, Requirements)\n",
		strcmp(q->source, "default") ? q->source : "the default: Sequoia's diminutive noise");
	for (int i = 0; i < q->n; i++) {
		nb_rule_format(&q->rule[i], text, sizeof(text));
		fprintf(out, "%s\n", text);
	}
}
