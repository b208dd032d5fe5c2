/* noise-check's limits: read from a site's file, or derived from what the
 * kernels wrote in an acceptance survey (--limits-from). */
#ifndef NB_CHECK_LIMITS_H
#define NB_CHECK_LIMITS_H

#include <stdio.h>

struct limits {
	double max_lost_percent, max_detour_us;
};

/* "max_lost_percent P" and "max_detour_us U" lines (# starts a comment)
 * into l, except those whose have_ flag is set (given as options). A bad
 * file ends the process with its name and line (exit 2). */
void read_limits(const char *path, struct limits *l, int have_lost, int have_detour);

/* Writes to out a limits file for nodes of this node's kind (CPU model and
 * CPU count), from the runs under dir: each node's worst CPU in each run
 * (the system's share and longest detour), their 99th percentile over the nodes
 * of this kind, times margin. Prefers the selfish detour's runs, the
 * check's own kernel; leaves out incomplete runs and ranks with injected
 * noise. Where dir has no such node, ends the process saying why (exit 2). */
void limits_from_survey(const char *dir, double margin, FILE *out);

#endif
