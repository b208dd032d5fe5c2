#define _GNU_SOURCE
#include "machine.h"

#include "cpuset.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

void nb_read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Value of "key : value" from /proc/cpuinfo, first occurrence. */
static void cpuinfo_field(const char *key, char *buf, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	size_t klen = strlen(key);

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) != 0 || !strchr(line, ':'))
			continue;
		if (line[klen] != ' ' && line[klen] != '\t' && line[klen] != ':')
			continue;
		char *v = strchr(line, ':') + 1;

		while (*v == ' ')
			v++;
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, size, "%s", v);
		break;
	}
	fclose(f);
}

static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

static void cmdline_param(const char *cmdline, const char *name, char *buf, size_t size)
{
	size_t n = strlen(name);

	buf[0] = '\0';
	for (const char *p = cmdline; (p = strstr(p, name)); p += n) {
		if ((p == cmdline || p[-1] == ' ') && p[n] == '=') {
			snprintf(buf, size, "%.*s", (int)strcspn(p + n + 1, " "), p + n + 1);
			return;
		}
	}
}

static void describe_topology(struct nb_machine *m)
{
	char path[256], pkg[32], core[32];
	/* a core is a (package, core id) pair; count the distinct ones */
	long *seen = calloc(NB_MAX_CPUS, sizeof(*seen));
	int nseen = 0;

	for (int c = 0; c < NB_MAX_CPUS && seen; c++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
		nb_read_line(path, core, sizeof(core));
		if (!core[0])
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		nb_read_line(path, pkg, sizeof(pkg));
		long key = atol(pkg) * 1000003L + atol(core);
		int i = 0;

		while (i < nseen && seen[i] != key)
			i++;
		if (i == nseen)
			seen[nseen++] = key;
	}
	free(seen);
	m->cores = nseen ? nseen : m->cpus_online;
	m->smt = m->cores ? (m->cpus_online + m->cores - 1) / m->cores : 1;

	DIR *d = opendir("/sys/devices/system/node");
	struct dirent *e;

	m->numa_nodes = 0;
	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9')
			m->numa_nodes++;
	if (d)
		closedir(d);
	if (m->numa_nodes == 0)
		m->numa_nodes = 1;
}

static int32_t read_int(const char *path)
{
	char buf[32];

	nb_read_line(path, buf, sizeof(buf));
	return buf[0] ? (int32_t)atol(buf) : -1;
}

void nb_cpu_place(int cpu, struct nb_cpu_place *p)
{
	char path[128], siblings[1024];
	int list[NB_MAX_CPUS];
	const char *bad;

	*p = (struct nb_cpu_place){ -1, -1, -1, -1 };
	if (cpu < 0)
		return;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
	p->core = read_int(path);
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
		 cpu);
	p->package = read_int(path);
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
		 cpu);
	nb_read_line(path, siblings, sizeof(siblings));
	int n = siblings[0] ? nb_cpu_list_parse(siblings, list, NB_MAX_CPUS, &bad) : 0;

	for (int i = 0; i < n; i++)
		if (list[i] == cpu)
			p->smt_thread = i; /* the list is in ascending order */
	/* the cpu's directory links to its NUMA node's: nodeN */
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	DIR *d = opendir(path);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9')
			p->numa_node = (int32_t)atol(e->d_name + 4);
	if (d)
		closedir(d);
}

static void json_place(struct nb_json *j, const char *key, int32_t v)
{
	if (v < 0)
		nb_json_null(j, key);
	else
		nb_json_int(j, key, v);
}

void nb_cpu_place_json(struct nb_json *j, const struct nb_cpu_place *p)
{
	json_place(j, "numa_node", p->numa_node);
	json_place(j, "package", p->package);
	json_place(j, "core", p->core);
	json_place(j, "smt_thread", p->smt_thread);
}

static void describe_tsc(struct nb_machine *m)
{
	static const char *const wanted[] = {
		"tsc", "rdtscp", "constant_tsc", "nonstop_tsc", "tsc_known_freq",
		"tsc_reliable", "tsc_adjust", "tsc_deadline_timer",
	};
	char *flags = malloc(16384);
	size_t len = 0;

	m->tsc_flags[0] = '\0';
	if (!flags)
		return;
	cpuinfo_field("flags", flags, 16384);
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (has_word(flags, wanted[i]) && len < sizeof(m->tsc_flags))
			len += snprintf(m->tsc_flags + len, sizeof(m->tsc_flags) - len, "%s%s",
					len ? " " : "", wanted[i]);
	if (has_word(flags, "hypervisor") && !m->hypervisor[0])
		snprintf(m->hypervisor, sizeof(m->hypervisor), "unknown");
	free(flags);
}

static void describe_hypervisor(struct nb_machine *m)
{
	static const char *const vendors[] = { "KVM", "QEMU", "VMware", "Xen", "Microsoft",
					       "innotek", "Amazon EC2", "Google", "Firecracker" };
	char v[128];

	nb_read_line("/sys/hypervisor/type", m->hypervisor, sizeof(m->hypervisor));
	if (m->hypervisor[0])
		return;
	nb_read_line("/sys/class/dmi/id/sys_vendor", v, sizeof(v));
	for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
		if (strstr(v, vendors[i])) {
			snprintf(m->hypervisor, sizeof(m->hypervisor), "%s", vendors[i]);
			return;
		}
	nb_read_line("/sys/class/dmi/id/product_name", v, sizeof(v));
	for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
		if (strstr(v, vendors[i]))
			snprintf(m->hypervisor, sizeof(m->hypervisor), "%s", vendors[i]);
}

static void describe_governors(struct nb_machine *m)
{
	char path[128], gov[64];
	size_t len = 0;

	m->governors[0] = '\0';
	for (int c = 0; c < m->cpus_online && len < sizeof(m->governors); c++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", c);
		nb_read_line(path, gov, sizeof(gov));
		if (gov[0])
			len += snprintf(m->governors + len, sizeof(m->governors) - len, "%s%d:%s",
					len ? " " : "", c, gov);
	}
	if (!len)
		snprintf(m->governors, sizeof(m->governors), "none");
}

/* Turbo or boost, from the first of: intel_pstate's no_turbo, the global
 * cpufreq boost (acpi-cpufreq), CPU 0's policy's boost (amd-pstate). */
static void describe_turbo(struct nb_machine *m)
{
	static const struct { const char *path; const char *on; } sources[] = {
		{ "/sys/devices/system/cpu/intel_pstate/no_turbo", "0" },
		{ "/sys/devices/system/cpu/cpufreq/boost", "1" },
		{ "/sys/devices/system/cpu/cpufreq/policy0/boost", "1" },
	};
	char v[32];

	for (size_t i = 0; i < sizeof(sources) / sizeof(*sources); i++) {
		nb_read_line(sources[i].path, v, sizeof(v));
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			continue;
		snprintf(m->turbo, sizeof(m->turbo), "%s", strcmp(v, sources[i].on) ? "off" : "on");
		snprintf(m->turbo_source, sizeof(m->turbo_source), "%s", sources[i].path);
		break;
	}
	static const char *const limits[] = { "scaling_min_freq", "scaling_max_freq",
					      "cpuinfo_max_freq" };
	long *into[] = { &m->freq_min_khz, &m->freq_max_khz, &m->freq_hardware_max_khz };

	for (int i = 0; i < 3; i++) {
		char path[96];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cpufreq/%s", limits[i]);
		nb_read_line(path, v, sizeof(v));
		*into[i] = strtol(v, NULL, 10);
	}
}

void nb_machine_describe(struct nb_machine *m)
{
	struct utsname u;

	memset(m, 0, sizeof(*m));
	gethostname(m->hostname, sizeof(m->hostname) - 1);
	if (uname(&u) == 0) {
		snprintf(m->kernel_release, sizeof(m->kernel_release), "%s", u.release);
		snprintf(m->arch, sizeof(m->arch), "%s", u.machine);
	}
	cpuinfo_field("model name", m->cpu_model, sizeof(m->cpu_model));
	if (!m->cpu_model[0])
		cpuinfo_field("CPU part", m->cpu_model, sizeof(m->cpu_model));
	if (!m->cpu_model[0])
		snprintf(m->cpu_model, sizeof(m->cpu_model), "%s", m->arch);
	m->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	describe_topology(m);
	nb_read_line("/proc/cmdline", m->kernel_cmdline, sizeof(m->kernel_cmdline));
	cmdline_param(m->kernel_cmdline, "isolcpus", m->isolcpus, sizeof(m->isolcpus));
	cmdline_param(m->kernel_cmdline, "nohz_full", m->nohz_full, sizeof(m->nohz_full));
	nb_read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  m->clocksource, sizeof(m->clocksource));
	describe_hypervisor(m);
	describe_tsc(m);
	describe_governors(m);
	describe_turbo(m);
	/* the cabinet, chassis, slot, board and node, where host names are
	 * nid numbers (Frontier, LUMI, Aurora) */
	nb_read_line("/etc/cray/xname", m->xname, sizeof(m->xname));
}

void nb_machine_json(const struct nb_machine *m, struct nb_json *j, const char *key)
{
	nb_json_object(j, key);
	nb_json_string(j, "hostname", m->hostname);
	nb_json_string(j, "arch", m->arch);
	nb_json_string(j, "cpu_model", m->cpu_model);
	nb_json_int(j, "cpus_online", m->cpus_online);
	nb_json_int(j, "cores", m->cores);
	nb_json_int(j, "smt", m->smt);
	nb_json_int(j, "numa_nodes", m->numa_nodes);
	nb_json_string(j, "kernel_release", m->kernel_release);
	nb_json_string(j, "kernel_cmdline", m->kernel_cmdline);
	nb_json_string(j, "isolcpus", m->isolcpus);
	nb_json_string(j, "nohz_full", m->nohz_full);
	nb_json_string(j, "clocksource", m->clocksource);
	nb_json_string(j, "tsc_flags", m->tsc_flags);
	nb_json_object(j, "cpufreq_governor");
	if (strcmp(m->governors, "none") != 0) {
		char copy[sizeof(m->governors)], *save, *tok;

		snprintf(copy, sizeof(copy), "%s", m->governors);
		for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			char *colon = strchr(tok, ':');

			*colon = '\0';
			nb_json_string(j, tok, colon + 1);
		}
	}
	nb_json_end(j, '}');
	nb_json_string(j, "turbo", m->turbo[0] ? m->turbo : NULL);
	nb_json_string(j, "turbo_source", m->turbo_source[0] ? m->turbo_source : NULL);
	nb_json_object(j, "cpufreq_limits_khz");
	if (m->freq_max_khz > 0) {
		nb_json_int(j, "min", m->freq_min_khz);
		nb_json_int(j, "max", m->freq_max_khz);
		nb_json_int(j, "hardware_max", m->freq_hardware_max_khz);
	}
	nb_json_end(j, '}');
	nb_json_bool(j, "virtual_machine", m->hypervisor[0] != '\0');
	nb_json_string(j, "hypervisor", m->hypervisor[0] ? m->hypervisor : NULL);
	nb_json_string(j, "xname", m->xname[0] ? m->xname : NULL);
	nb_json_end(j, '}');
}

void nb_machine_print(const struct nb_machine *m, FILE *f)
{
	fprintf(f, "host:             %s\n", m->hostname);
	fprintf(f, "cpu:              %s (%s)\n", m->cpu_model, m->arch);
	fprintf(f, "cpus online:      %d (%d cores x %d SMT, %d NUMA node%s)\n", m->cpus_online,
		m->cores, m->smt, m->numa_nodes, m->numa_nodes == 1 ? "" : "s");
	fprintf(f, "kernel:           %s\n", m->kernel_release);
	fprintf(f, "isolcpus:         %s\n", m->isolcpus[0] ? m->isolcpus : "(not set)");
	fprintf(f, "nohz_full:        %s\n", m->nohz_full[0] ? m->nohz_full : "(not set)");
	fprintf(f, "clock source:     %s\n", m->clocksource);
	fprintf(f, "tsc flags:        %s\n", m->tsc_flags[0] ? m->tsc_flags : "(none)");
	fprintf(f, "cpufreq governor: %s\n", m->governors);
	fprintf(f, "turbo/boost:      %s\n", m->turbo[0] ? m->turbo : "not said by the kernel");
	fprintf(f, "virtual machine:  %s\n", m->hypervisor[0] ? m->hypervisor : "no");
}
