/* A site's requirements: the rules a run's figures must meet, each CPU's
 * rank line judged once, here, so that the report, ReFrame, JUBE and
 * noise-check read one verdict. By default, the Sequoia criteria of
 * "diminutive noise" (the catalogue's requirements). One rule a line:
 *
 *   FIGURE OP BOUND [kernel=NAME] [cpus=LIST] [nan=pass|fail]
 *
 * FIGURE is a rank line's key, OP is < or <=. A rule applies to every rank
 * line that has FIGURE (and is of kernel NAME, on a CPU of LIST). A figure
 * that is NaN (a constant sample's kurtosis) fails it unless nan=pass. */
#ifndef NB_REQUIREMENTS_H
#define NB_REQUIREMENTS_H

#include <stddef.h>
#include <stdio.h>

enum { NB_RULES_MAX = 64, NB_RULE_FIGURE = 48, NB_RULE_KERNEL = 32, NB_RULE_CPUS = 256,
       NB_RULE_TEXT = 400, NB_RULES_SOURCE = 256 };

struct nb_rule {
	char figure[NB_RULE_FIGURE];
	int or_equal;   /* <= rather than < */
	double bound;
	int nan_passes;
	char kernel[NB_RULE_KERNEL]; /* "": every kernel */
	char cpus[NB_RULE_CPUS];     /* "": every CPU */
};

/* Plain data, so that the root's can be sent to every rank as bytes. */
struct nb_requirements {
	char source[NB_RULES_SOURCE]; /* the file, or "default" */
	int n;
	struct nb_rule rule[NB_RULES_MAX];
};

/* The catalogue's default rules: the Sequoia criteria. */
void nb_requirements_default(struct nb_requirements *q);

/* One rule from text; NULL, or why not (a static string). Also takes the
 * older limits file's "max_lost_percent P" (stolen_percent <= P) and
 * "max_detour_us U" (max_loss_us <= U). */
const char *nb_rule_parse(const char *text, struct nb_rule *rule);

/* The rules of a file (# starts a comment); NULL, or why not, as
 * "FILE:LINE: ..." (a static string). */
const char *nb_requirements_read(const char *path, struct nb_requirements *q);

/* Adds or replaces the rule on rule->figure; NULL, or why not. */
const char *nb_requirements_set(struct nb_requirements *q, const struct nb_rule *rule);

/* The rule as a line of the file: "kurtosis < 100 kernel=fwq nan=pass". */
void nb_rule_format(const struct nb_rule *rule, char *buf, size_t size);

/* The rule's bound on figure, or NULL when no rule bounds it. */
const struct nb_rule *nb_requirements_find(const struct nb_requirements *q, const char *figure);

/* Judges one rank line: unmet[i] set for each rule i that applied and was
 * not met (unmet may be NULL). Returns the number of rules that applied;
 * *nunmet the number unmet. */
int nb_requirements_judge(const struct nb_requirements *q, const char *line, unsigned char *unmet,
			  int *nunmet);

/* The value of rule's figure in a rank line, NaN for "nan"; 0 if absent. */
int nb_rule_value(const struct nb_rule *rule, const char *line, double *v);

/* Every rule as the file's lines, with a header naming the source. */
void nb_requirements_print(const struct nb_requirements *q, FILE *out);

#endif
