/* A rank line judged by the Sequoia criteria and by a site's rules: no rule
 * counted unmet that did not apply. */
#include <stdlib.h>

#include "requirements.h"
#include "trap.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, unsigned long size)
{
	static struct nb_requirements sequoia, site;
	static int ready;
	unsigned char unmet[NB_RULES_MAX];
	char *line = nb_fuzz_string(data, size);
	int nunmet;

	if (!ready) {
		struct nb_rule rule;

		nb_requirements_default(&sequoia);
		if (nb_rule_parse("max_loss_us <= 100 kernel=fwq cpus=0-3,8", &rule) ||
		    nb_requirements_set(&site, &rule) ||
		    nb_rule_parse("stolen_percent < 1 nan=pass", &rule) ||
		    nb_requirements_set(&site, &rule))
			abort();
		ready = 1;
	}
	if (nb_requirements_judge(&sequoia, line, unmet, &nunmet) < nunmet ||
	    nb_requirements_judge(&site, line, unmet, &nunmet) < nunmet)
		abort();
	free(line);
	return 0;
}
