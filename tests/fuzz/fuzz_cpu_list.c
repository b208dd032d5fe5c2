/* --cpus and --housekeeping lists: parsed, written back as a list, and
 * parsed again to the same CPUs. */
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "trap.h"

enum { MAX = 1024 };

int LLVMFuzzerTestOneInput(const unsigned char *data, unsigned long size)
{
	static int cpus[MAX], again[MAX];
	static char text[MAX * 16];
	char *list = nb_fuzz_string(data, size);
	const char *bad = NULL;
	int n = nb_cpu_list_parse(list, cpus, MAX, &bad);

	if (n < 0) {
		/* the place it names is inside the list */
		if (bad < list || bad > list + strlen(list))
			abort();
	} else {
		nb_cpu_list_format(cpus, n, text, sizeof(text));
		if (nb_cpu_list_parse(text, again, MAX, &bad) != n ||
		    memcmp(cpus, again, (size_t)n * sizeof(*cpus)) != 0)
			abort();
	}
	free(list);
	return 0;
}
