/* noise-check's limits derived from what the kernels wrote in an
 * acceptance survey (--limits-from): a requirements file's two rules. */
#ifndef NB_CHECK_LIMITS_H
#define NB_CHECK_LIMITS_H

#include <stdio.h>

/* Writes to out a requirements file for nodes of this node's kind (CPU model and
 * CPU count), from the runs under dir: each node's worst CPU in each run
 * (the system's share and longest detour), their 99th percentile over the nodes
 * of this kind, times margin. Prefers the selfish detour's runs, the
 * check's own kernel; leaves out incomplete runs and ranks with injected
 * noise. Where dir has no such node, ends the process saying why (exit 2). */
void limits_from_survey(const char *dir, double margin, FILE *out);

#endif
