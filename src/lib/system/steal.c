#define _GNU_SOURCE
#include "steal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint64_t nb_steal_ns(int cpu)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512], want[32];
	uint64_t result = NB_STEAL_UNKNOWN;
	long hz = sysconf(_SC_CLK_TCK);

	if (!f || hz <= 0) {
		if (f)
			fclose(f);
		return result;
	}
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8];

		if (strncmp(line, want, strlen(want)) != 0)
			continue;
		/* user nice system idle iowait irq softirq steal */
		if (sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
			result = (uint64_t)v[7] * (1000000000u / (uint64_t)hz);
		break;
	}
	fclose(f);
	return result;
}
