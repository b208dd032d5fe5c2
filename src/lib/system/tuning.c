#define _GNU_SOURCE
#include "tuning.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuset.h"
#include "errors.h"

#ifndef NOISEBENCH_COMMIT
#define NOISEBENCH_COMMIT "unknown"
#endif

const char *const nb_tuning_knobs[NB_TUNING_KNOBS][2] = {
	{"workqueue.cpumask", "/sys/devices/virtual/workqueue/cpumask"},
	{"irq.default_smp_affinity", "/proc/irq/default_smp_affinity"},
	{"vm.stat_interval", "/proc/sys/vm/stat_interval"},
	{"kernel.watchdog", "/proc/sys/kernel/watchdog"},
	{"kernel.nmi_watchdog", "/proc/sys/kernel/nmi_watchdog"},
	{"kernel.watchdog_cpumask", "/proc/sys/kernel/watchdog_cpumask"},
	{"kernel.timer_migration", "/proc/sys/kernel/timer_migration"},
	{"kernel.sched_rt_runtime_us", "/proc/sys/kernel/sched_rt_runtime_us"},
};

static void warn(struct nb_tuning *t, const char *fmt, ...)
{
	va_list ap;

	if (t->nwarnings == NB_TUNING_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(t->warnings[t->nwarnings++], sizeof(t->warnings[0]), fmt, ap);
	va_end(ap);
}

/* A CPU list as the command line gives it ("domain,managed_irq,2-5" for
 * isolcpus: the flags before the list are skipped). */
static int in_list(const char *value, int cpu)
{
	int cpus[NB_MAX_CPUS], n;
	const char *bad, *p = value;

	while (*p && !isdigit((unsigned char)*p)) {
		const char *comma = strchr(p, ',');

		if (!comma)
			return 0;
		p = comma + 1;
	}
	n = *p ? nb_cpu_list_parse(p, cpus, NB_MAX_CPUS, &bad) : 0;
	for (int i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return 1;
	return 0;
}

/* The action's name: the directory /proc/irq/N/ holds for it. */
static void irq_name(const char *dir, char *name, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	snprintf(name, size, "?");
	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			snprintf(name, size, "%.47s", e->d_name);
			break;
		}
	closedir(d);
}

static void irqs_on(struct nb_tuning *t, const int *cpus, int ncpus)
{
	DIR *d = opendir("/proc/irq");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) && t->nirqs < NB_TUNING_IRQS) {
		char path[300], list[4096];

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/irq/%s/effective_affinity_list", e->d_name);
		nb_read_line(path, list, sizeof(list));
		if (!list[0]) {
			snprintf(path, sizeof(path), "/proc/irq/%s/smp_affinity_list", e->d_name);
			nb_read_line(path, list, sizeof(list));
		}
		for (int i = 0; i < ncpus && t->nirqs < NB_TUNING_IRQS; i++) {
			if (cpus[i] < 0 || !in_list(list, cpus[i]))
				continue;
			t->irqs[t->nirqs].irq = atoi(e->d_name);
			t->irqs[t->nirqs].cpu = cpus[i];
			snprintf(path, sizeof(path), "/proc/irq/%s", e->d_name);
			irq_name(path, t->irqs[t->nirqs].name, sizeof(t->irqs[0].name));
			t->nirqs++;
		}
	}
	closedir(d);
}

static int running(const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char path[300], name[64];

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		nb_read_line(path, name, sizeof(name));
		found = strcmp(name, comm) == 0;
	}
	closedir(d);
	return found;
}

/* The running kernel's configuration: /boot/config-<release>, else
 * /proc/config.gz (through gzip). */
static void kernel_config(struct nb_tuning *t, const struct nb_machine *m)
{
	char path[400], line[256];
	FILE *f;
	int piped = 0;

	snprintf(path, sizeof(path), "/boot/config-%s", m->kernel_release);
	f = fopen(path, "r");
	if (f) {
		snprintf(t->config_source, sizeof(t->config_source), "/boot/config-<release>");
	} else if (access("/proc/config.gz", R_OK) == 0 &&
		   (f = popen("gzip -dc /proc/config.gz 2>/dev/null", "r"))) {
		piped = 1;
		snprintf(t->config_source, sizeof(t->config_source), "/proc/config.gz");
	} else {
		return;
	}
	snprintf(t->no_hz_full, sizeof(t->no_hz_full), "n");
	snprintf(t->preempt, sizeof(t->preempt), "unknown");
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "CONFIG_HZ=", 10) == 0)
			snprintf(t->hz, sizeof(t->hz), "%.15s", line + 10);
		else if (strcmp(line, "CONFIG_NO_HZ_FULL=y") == 0)
			snprintf(t->no_hz_full, sizeof(t->no_hz_full), "y");
		else if (strcmp(line, "CONFIG_PREEMPT_RT=y") == 0)
			snprintf(t->preempt, sizeof(t->preempt), "rt");
		else if (strcmp(line, "CONFIG_PREEMPT=y") == 0 && strcmp(t->preempt, "rt"))
			snprintf(t->preempt, sizeof(t->preempt), "full");
		else if (strcmp(line, "CONFIG_PREEMPT_VOLUNTARY=y") == 0 &&
			 strcmp(t->preempt, "unknown") == 0)
			snprintf(t->preempt, sizeof(t->preempt), "voluntary");
		else if (strcmp(line, "CONFIG_PREEMPT_NONE=y") == 0 &&
			 strcmp(t->preempt, "unknown") == 0)
			snprintf(t->preempt, sizeof(t->preempt), "none");
		else if (strcmp(line, "CONFIG_PREEMPT_DYNAMIC=y") == 0)
			strncat(t->preempt, "+dynamic", sizeof(t->preempt) - strlen(t->preempt) - 1);
	}
	if (piped)
		pclose(f);
	else
		fclose(f);
}

/* MSR_SMI_COUNT (0x34, Intel) of a CPU through the msr driver; -1 where it
 * cannot be read (no driver, no permission, another vendor). */
static int64_t smi_count(int cpu)
{
	char path[64];
	uint64_t v;
	int fd;

	if (cpu < 0)
		return -1;
	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t got = pread(fd, &v, sizeof(v), 0x34);

	close(fd);
	return got == (ssize_t)sizeof(v) ? (int64_t)(v & 0xffffffffu) : -1;
}

void nb_tuning_before(struct nb_tuning *t, const struct nb_machine *m, const int *cpus,
		      int ncpus, const char *mpi_library)
{
	const char *job = getenv("SLURM_JOB_ID");

	memset(t, 0, sizeof(*t));
	irqs_on(t, cpus, ncpus);
	t->irqbalance = running("irqbalance");
	kernel_config(t, m);
	for (int i = 0; i < NB_TUNING_KNOBS; i++)
		nb_read_line(nb_tuning_knobs[i][1], t->knobs[i], sizeof(t->knobs[i]));
	const char *p = strstr(m->kernel_cmdline, "rcu_nocbs=");

	if (p)
		snprintf(t->rcu_nocbs, sizeof(t->rcu_nocbs), "%.*s", (int)strcspn(p + 10, " "),
			 p + 10);
	char thp[128];

	nb_read_line("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof(thp));
	/* "always [madvise] never": the bracketed one is in force */
	char *open = strchr(thp, '['), *close = open ? strchr(open, ']') : NULL;

	if (open && close)
		snprintf(t->thp, sizeof(t->thp), "%.*s", (int)(close - open - 1), open + 1);
	t->smi_before = smi_count(ncpus ? cpus[0] : -1);
	t->smi_after = -1;
	snprintf(t->commit, sizeof(t->commit), "%s", NOISEBENCH_COMMIT);
#ifdef __VERSION__
	snprintf(t->compiler, sizeof(t->compiler), "%s", __VERSION__);
#endif
	snprintf(t->mpi_library, sizeof(t->mpi_library), "%s", mpi_library ? mpi_library : "");
	t->mpi_library[strcspn(t->mpi_library, "\n")] = '\0';
	snprintf(t->slurm_job_id, sizeof(t->slurm_job_id), "%s", job ? job : "");
}

void nb_tuning_after(struct nb_tuning *t, const struct nb_machine *m, const int *cpus,
		     int ncpus)
{
	t->smi_after = t->smi_before >= 0 ? smi_count(cpus[0]) : -1;
	t->nwarnings = 0;
	for (int i = 0; i < t->nirqs; i++) {
		int c = t->irqs[i].cpu;
		const char *why = in_list(m->isolcpus, c) ? "isolated (isolcpus)"
				  : in_list(m->nohz_full, c) ? "nohz_full" : NULL;

		if (why)
			warn(t, "irq %d (%s) is delivered to CPU %d, which is %s: set its "
				"/proc/irq/%d/smp_affinity_list to the housekeeping CPUs",
			     t->irqs[i].irq, t->irqs[i].name, c, why, t->irqs[i].irq);
	}
	if (t->irqbalance)
		warn(t, "irqbalance is running: it can move interrupts onto the measured CPUs "
			"(give it IRQBALANCE_BANNED_CPULIST, or stop it)");
	if (m->nohz_full[0] && strcmp(t->no_hz_full, "n") == 0)
		warn(t, "nohz_full=%s is on the command line, but the kernel is built without "
			"CONFIG_NO_HZ_FULL: the tick still runs on those CPUs", m->nohz_full);
	if (strcmp(t->thp, "always") == 0)
		warn(t, "transparent huge pages are 'always': khugepaged and compaction can take "
			"the measured CPUs ('madvise' or 'never' avoids it)");
	if (t->smi_before >= 0 && t->smi_after > t->smi_before)
		warn(t, "%lld SMIs (system management interrupts) while the run measured: time "
			"the OS cannot see, in the 'hardware' share", (long long)(t->smi_after -
			t->smi_before));
	for (int i = 0; i < ncpus; i++) {
		char key[16];
		const char *g;

		snprintf(key, sizeof(key), "%d:", cpus[i]);
		for (g = m->governors; (g = strstr(g, key)) && g != m->governors && g[-1] != ' ';
		     g++)
			;
		if (g && strncmp(g + strlen(key), "performance", 11) != 0) {
			warn(t, "CPU %d's cpufreq governor is not 'performance' (%.*s): its clock "
				"can change under the measurement", cpus[i],
			     (int)strcspn(g + strlen(key), " "), g + strlen(key));
		}
	}
	for (int i = 0; i < t->nwarnings; i++)
		nb_warn("%s", t->warnings[i]);
}

void nb_tuning_json(struct nb_json *j, const struct nb_tuning *t)
{
	nb_json_object(j, "tuning");
	nb_json_array(j, "irqs_on_measured_cpus");
	for (int i = 0; i < t->nirqs; i++) {
		nb_json_object(j, NULL);
		nb_json_int(j, "irq", t->irqs[i].irq);
		nb_json_string(j, "name", t->irqs[i].name);
		nb_json_int(j, "cpu", t->irqs[i].cpu);
		nb_json_end(j, '}');
	}
	nb_json_end(j, ']');
	nb_json_bool(j, "irqbalance_running", t->irqbalance);
	nb_json_string(j, "kernel_config", t->config_source);
	nb_json_string(j, "hz", t->hz);
	nb_json_string(j, "no_hz_full", t->no_hz_full);
	nb_json_string(j, "preempt", t->preempt);
	nb_json_string(j, "rcu_nocbs", t->rcu_nocbs);
	nb_json_string(j, "transparent_hugepages", t->thp);
	nb_json_object(j, "knobs");
	for (int i = 0; i < NB_TUNING_KNOBS; i++)
		nb_json_string(j, nb_tuning_knobs[i][0], t->knobs[i]);
	nb_json_end(j, '}');
	if (t->smi_before >= 0 && t->smi_after >= 0)
		nb_json_int(j, "smis", t->smi_after - t->smi_before);
	else
		nb_json_null(j, "smis");
	nb_json_string(j, "noisebench_commit", t->commit);
	nb_json_string(j, "compiler", t->compiler);
	nb_json_string(j, "mpi_library", t->mpi_library);
	nb_json_string(j, "slurm_job_id", t->slurm_job_id);
	nb_json_array(j, "warnings");
	for (int i = 0; i < t->nwarnings; i++)
		nb_json_string(j, NULL, t->warnings[i]);
	nb_json_end(j, ']');
	nb_json_end(j, '}');
}
