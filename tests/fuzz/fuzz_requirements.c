/* A requirements (limits) file: read, each rule written back as a line and
 * read again to the same rule, and a rank line judged by them. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "requirements.h"

static const char line[] = "rank kernel=fwq cpu=3 samples=1000 stolen_percent=1.5 "
			   "max_loss_us=120 kurtosis=nan";

int LLVMFuzzerTestOneInput(const unsigned char *data, unsigned long size)
{
	static struct nb_requirements q;
	char path[64], text[NB_RULE_TEXT];
	int fd = memfd_create("requirements", 0), nunmet;
	unsigned char unmet[NB_RULES_MAX];

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (nb_requirements_read(path, &q) == NULL) {
		for (int i = 0; i < q.n; i++) {
			struct nb_rule again;

			nb_rule_format(&q.rule[i], text, sizeof(text));
			if (nb_rule_parse(text, &again) != NULL ||
			    strcmp(again.figure, q.rule[i].figure) != 0 ||
			    again.or_equal != q.rule[i].or_equal)
				abort();
		}
		nb_requirements_judge(&q, line, unmet, &nunmet);
		if (nunmet > q.n)
			abort();
	}
	close(fd);
	return 0;
}
