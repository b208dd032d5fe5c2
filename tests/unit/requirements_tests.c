/* The requirements' rules (src/lib/base/requirements.h): parsed as a site
 * writes them, refused with a reason, and judged on rank lines exactly at
 * their bounds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "requirements.h"

static const char *const fwq_line =
	"rank kernel=fwq rank=0 host=n1 cpu=5 work=multiiter scaled_noise_mean=1e-06 "
	"scaled_noise_sd=0.0005 kurtosis=nan stolen_percent=2.5 p99_9_loss_us=50";

static void test_default_is_sequoia(void)
{
	struct nb_requirements q;
	char text[NB_RULE_TEXT];
	int unmet, judged;

	nb_requirements_default(&q);
	CHECK(q.n == 3 && strcmp(q.source, "default") == 0);
	nb_rule_format(&q.rule[2], text, sizeof(text));
	CHECK(strcmp(text, "kurtosis < 100 kernel=fwq nan=pass") == 0);
	/* xb = 1e-6 is not below 1e-6: the criterion is strict; kurtosis NaN
	 * (a constant sample) meets its rule */
	judged = nb_requirements_judge(&q, fwq_line, NULL, &unmet);
	CHECK(judged == 3 && unmet == 1);
	/* the rules are FWQ's: an FTQ line with the same figures is not judged */
	judged = nb_requirements_judge(&q, "rank kernel=ftq rank=0 host=n cpu=0 kurtosis=500",
				       NULL, &unmet);
	CHECK(judged == 0 && unmet == 0);
}

static void test_bounds_and_scopes(void)
{
	struct nb_rule r;
	struct nb_requirements q = { .n = 0 };
	unsigned char which[NB_RULES_MAX];
	int unmet;

	CHECK(!nb_rule_parse("stolen_percent <= 2.5", &r) && r.or_equal && r.bound == 2.5);
	q.rule[q.n++] = r;
	CHECK(!nb_rule_parse("p99_9_loss_us < 50 cpus=4-7", &r) && !r.or_equal);
	q.rule[q.n++] = r;
	CHECK(!nb_rule_parse("p99_9_loss_us < 10 cpus=0-3", &r));
	q.rule[q.n++] = r;
	CHECK(!nb_rule_parse("kurtosis < 100", &r) && !r.nan_passes);
	q.rule[q.n++] = r;
	/* 2.5 <= 2.5 holds; 50 < 50 does not; cpu 5 is not in 0-3; NaN fails
	 * a rule without nan=pass */
	CHECK(nb_requirements_judge(&q, fwq_line, which, &unmet) == 3);
	CHECK(unmet == 2 && !which[0] && which[1] && !which[2] && which[3]);
}

static void test_bad_rules_say_why(void)
{
	struct nb_rule r;

	CHECK(nb_rule_parse("", &r) != NULL);
	CHECK(nb_rule_parse("kurtosis = 100", &r) != NULL);
	CHECK(nb_rule_parse("kurtosis < lots", &r) != NULL);
	CHECK(nb_rule_parse("kurtosis < nan", &r) != NULL);
	CHECK(nb_rule_parse("kurtosis < 100 nan=maybe", &r) != NULL);
	CHECK(nb_rule_parse("kurtosis < 100 cpus=x", &r) != NULL);
	CHECK(nb_rule_parse("kurtosis < 100 colour=red", &r) != NULL);
	CHECK(nb_rule_parse("max_lost_percent -1", &r) != NULL);
	/* the older limits file's lines are rules */
	CHECK(!nb_rule_parse("max_lost_percent 3", &r) && !strcmp(r.figure, "stolen_percent") &&
	      r.or_equal && r.bound == 3);
	CHECK(!nb_rule_parse("max_detour_us 800", &r) && !strcmp(r.figure, "max_loss_us"));
}

static void test_file_names_its_line(void)
{
	char path[] = "/tmp/nb-unit-rules-XXXXXX";
	struct nb_requirements q;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	const char *why;

	fprintf(f, "# a site's\nstolen_percent <= 1  # application CPUs\n\nkurtosis << 3\n");
	fclose(f);
	why = nb_requirements_read(path, &q);
	CHECK(why && strstr(why, ":4: after the figure comes < or <="));
	f = fopen(path, "w");
	fprintf(f, "stolen_percent <= 1\nstolen_percent <= 2\n");
	fclose(f);
	/* a second rule on the same figure and scope replaces the first */
	CHECK(nb_requirements_read(path, &q) == NULL && q.n == 1 && q.rule[0].bound == 2);
	f = fopen(path, "w");
	fprintf(f, "# nothing\n");
	fclose(f);
	CHECK(nb_requirements_read(path, &q) != NULL);
	remove(path);
}

int main(void)
{
	test_default_is_sequoia();
	test_bounds_and_scopes();
	test_bad_rules_say_why();
	test_file_names_its_line();
	printf("requirements: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
