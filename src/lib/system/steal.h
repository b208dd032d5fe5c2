/* Steal time: how long the hypervisor ran something else while a CPU of this
 * guest wanted to run (the `steal` column of /proc/stat). Read before and
 * after a run on each measured CPU, it says how much of the noise the host
 * took, which no loop inside the guest can tell from its own slowness. */
#ifndef NB_STEAL_H
#define NB_STEAL_H

#include <stdint.h>

#define NB_STEAL_UNKNOWN UINT64_MAX

/* The steal time of cpu so far, in ns; NB_STEAL_UNKNOWN where /proc/stat
 * has no such line (not Linux, an old kernel). */
uint64_t nb_steal_ns(int cpu);

#endif
