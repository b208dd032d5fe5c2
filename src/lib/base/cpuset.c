#define _GNU_SOURCE
#include "cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int nb_cpus_allowed(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

static int read_cpu(const char **p, int *cpu)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)**p))
		return -1;
	v = strtol(*p, &end, 10);
	if (v >= CPU_SETSIZE)
		return -1;
	*cpu = (int)v;
	*p = end;
	return 0;
}

int nb_cpu_list_parse(const char *list, int *cpus, int max, const char **bad)
{
	const char *p = list;
	int n = 0;

	for (;;) {
		int lo, hi;

		*bad = p;
		if (read_cpu(&p, &lo) != 0)
			return -1;
		hi = lo;
		if (*p == '-') {
			p++;
			*bad = p;
			if (read_cpu(&p, &hi) != 0 || hi < lo)
				return -1;
		}
		for (int c = lo; c <= hi; c++) {
			if (n == max)
				return -1;
			cpus[n++] = c;
		}
		if (*p == '\0')
			return n;
		*bad = p;
		if (*p++ != ',')
			return -1;
	}
}

void nb_cpu_list_format(const int *cpus, int n, char *buf, int size)
{
	int len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && len < size; i++) {
		int j = i;

		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j > i + 1)
			len += snprintf(buf + len, size - len, "%s%d-%d", i ? "," : "", cpus[i], cpus[j]);
		else
			len += snprintf(buf + len, size - len, "%s%d", i ? "," : "", cpus[i]);
		if (j == i + 1) /* two neighbours read better as "4,5" than "4-5" */
			continue;
		i = j;
	}
}

int nb_thread_id(void)
{
	return (int)syscall(SYS_gettid);
}

int nb_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
