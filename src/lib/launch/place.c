/* Where a team's threads go: the CPUs of -t or --cpus among those this
 * process may use. Apart from team.c because it asks the front end linked
 * in (team_pthread.c or team_omp.c) what it may use, and the front ends
 * call team.c. */
#include "team.h"

#include <string.h>

#include "cpuset.h"
#include "errors.h"

int nb_team_place(int threads_opt, const char *cpus_opt, int *cpus, int pin)
{
	static int allowed[NB_MAX_CPUS];
	int nallowed = nb_team_cpus_available(allowed, NB_MAX_CPUS), n;
	char allowed_list[256];

	nb_cpu_list_format(allowed, nallowed, allowed_list, sizeof(allowed_list));
	if (cpus_opt) {
		const char *bad;

		n = nb_cpu_list_parse(cpus_opt, cpus, NB_MAX_CPUS, &bad);
		if (n < 0)
			nb_fail(NB_EXIT_USAGE, "--cpus %s: cannot read a CPU list at '%s' (e.g. 0-3,8)",
				cpus_opt, bad);
		for (int i = 0; i < n; i++) {
			int ok = 0;

			for (int a = 0; a < nallowed; a++)
				ok |= allowed[a] == cpus[i];
			if (!ok)
				nb_fail(NB_EXIT_USAGE,
					"--cpus %s: CPU %d is not available to this process (allowed: %s)",
					cpus_opt, cpus[i], allowed_list);
			for (int j = 0; j < i; j++)
				if (cpus[j] == cpus[i])
					nb_fail(NB_EXIT_USAGE, "--cpus %s: CPU %d is listed twice", cpus_opt,
						cpus[i]);
		}
		if (threads_opt > 0 && threads_opt != n)
			nb_fail(NB_EXIT_USAGE, "-t %d with --cpus %s: the list names %d CPUs", threads_opt,
				cpus_opt, n);
		return n;
	}
	n = threads_opt < 0 ? nb_team_default_threads() : threads_opt == 0 ? nallowed : threads_opt;
	if (n > nallowed && !pin && n <= NB_MAX_CPUS) {
		nb_warn("-t %d --no-pin: %d threads share the %d CPUs available (%s): what they "
			"measure is mostly their time sharing", n, n, nallowed, allowed_list);
		for (int i = 0; i < n; i++)
			cpus[i] = allowed[i % nallowed];
		return n;
	}
	if (n > nallowed)
		nb_fail(NB_EXIT_USAGE,
			"-t %d: only %d CPUs are available to this process (%s), and each pinned "
			"measuring thread needs its own (fewer threads, or --no-pin to share them)",
			n, nallowed, allowed_list);
	memcpy(cpus, allowed, sizeof(int) * n);
	return n;
}
