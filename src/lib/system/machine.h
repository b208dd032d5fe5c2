/* What the machine is: the facts a reader needs to judge a noise figure. */
#ifndef NB_MACHINE_H
#define NB_MACHINE_H

#include <stdint.h>
#include <stdio.h>

#include "json.h"

enum { NB_MAX_CPUS = 4096 };

struct nb_machine {
	char hostname[256];
	char cpu_model[256];
	char arch[65]; /* utsname.machine holds 65 */
	int cpus_online;
	int cores;          /* physical cores (distinct package/core pairs) */
	int smt;            /* hardware threads per core */
	int numa_nodes;
	char kernel_release[256];
	char kernel_cmdline[4096];
	char isolcpus[256];  /* value of isolcpus= on the command line, "" if absent */
	char nohz_full[256];
	char clocksource[64];
	char tsc_flags[256]; /* the TSC-related CPU flags, space separated */
	char hypervisor[64]; /* "" on bare metal */
	char governors[4096]; /* "cpu:governor" pairs, or "none" without cpufreq */
	/* turbo or boost, which brho's FTQ notes warn changes a loop's speed:
	 * "on", "off", or "" where the kernel does not say; the file that said */
	char turbo[8], turbo_source[64];
	/* CPU 0's cpufreq policy: its governor's limits and the hardware's
	 * largest frequency, in kHz; 0 where unknown */
	long freq_min_khz, freq_max_khz, freq_hardware_max_khz;
	char xname[64];       /* where an HPE Cray node sits (/etc/cray/xname), "" elsewhere */
};

/* Where a CPU sits: its NUMA domain, package, core, and which of its core's
 * hardware threads it is (0 the first SMT sibling); -1 where unknown. */
struct nb_cpu_place {
	int32_t numa_node, package, core, smt_thread;
};

void nb_machine_describe(struct nb_machine *m);
void nb_cpu_place(int cpu, struct nb_cpu_place *p);
/* "numa_node", "package", "core", "smt_thread" (null where unknown) */
void nb_cpu_place_json(struct nb_json *j, const struct nb_cpu_place *p);
/* First line of a small file, without its newline; "" when unreadable. */
void nb_read_line(const char *path, char *buf, size_t size);
void nb_machine_json(const struct nb_machine *m, struct nb_json *j, const char *key);
void nb_machine_print(const struct nb_machine *m, FILE *f);

#endif
