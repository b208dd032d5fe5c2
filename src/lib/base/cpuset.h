/* Which CPUs a run may use and pinning to them. */
#ifndef NB_CPUSET_H
#define NB_CPUSET_H

/* The CPUs this process may run on, ascending; returns how many (<= max). */
int nb_cpus_allowed(int *cpus, int max);

/* Parses "0-3,6,8-9" into cpus; returns the count, or -1 with *bad pointing
 * at the first character it could not read. */
int nb_cpu_list_parse(const char *list, int *cpus, int max, const char **bad);

/* Formats cpus as a list "0-3,6" into buf. */
void nb_cpu_list_format(const int *cpus, int n, char *buf, int size);

/* Pins the calling thread to one CPU; returns 0 or an errno value. */
int nb_pin_self(int cpu);

/* The calling thread's id, as the kernel (and its trace) knows it. */
int nb_thread_id(void);

#endif
