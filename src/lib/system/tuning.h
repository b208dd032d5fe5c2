/* What a kernel tuner checks first when a core is noisy, recorded with every
 * run: where the interrupts may go, whether irqbalance moves them, how the
 * kernel was built (HZ, NO_HZ_FULL, PREEMPT), RCU callbacks offloaded,
 * transparent huge pages, the SMIs counted while the run measured, and what
 * built and launched the run. Each finding that can explain noise on the
 * measured CPUs becomes a warning line and an entry of "warnings". */
#ifndef NB_TUNING_H
#define NB_TUNING_H

#include <stdint.h>

#include "json.h"
#include "machine.h"

enum { NB_TUNING_WARNINGS = 32, NB_TUNING_IRQS = 64, NB_TUNING_KNOBS = 8 };

struct nb_tuning {
	/* interrupts whose effective affinity includes a measured CPU */
	int nirqs;
	struct {
		int irq, cpu;
		char name[48];
	} irqs[NB_TUNING_IRQS];
	int irqbalance;          /* 1 running, 0 not */
	char config_source[64];  /* where the kernel's configuration was read, "" none */
	char hz[16];             /* CONFIG_HZ */
	char no_hz_full[8];      /* "y", "n" */
	char preempt[32];        /* none, voluntary, full, rt; "+dynamic" */
	char rcu_nocbs[256];     /* rcu_nocbs= on the command line */
	char thp[16];            /* transparent huge pages: always, madvise, never */
	/* the run-time knobs that move noise off CPUs (nb_tuning_knobs), as read;
	 * "" where the machine has no such file */
	char knobs[NB_TUNING_KNOBS][64];
	int64_t smi_before, smi_after; /* MSR_SMI_COUNT of the first measured CPU; -1 unknown */
	char commit[48], compiler[128], mpi_library[256], slurm_job_id[32];
	int nwarnings;
	char warnings[NB_TUNING_WARNINGS][256];
};

/* The knobs' names (sysctl's where it has one) and their files. */
extern const char *const nb_tuning_knobs[NB_TUNING_KNOBS][2];

/* Before the run: everything but the SMIs counted after it. mpi_library:
 * the MPI library's version string, or NULL. */
void nb_tuning_before(struct nb_tuning *t, const struct nb_machine *m, const int *cpus,
		      int ncpus, const char *mpi_library);
/* After the run: the SMIs, the warnings; prints each warning once (stderr). */
void nb_tuning_after(struct nb_tuning *t, const struct nb_machine *m, const int *cpus,
		     int ncpus);
/* The "tuning" object. */
void nb_tuning_json(struct nb_json *j, const struct nb_tuning *t);

#endif
