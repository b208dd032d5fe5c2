/* Sample buffers: mapped, faulted in and locked before the start gate, and
 * filled with a sentinel so that anyone can tell how far a thread has got
 * without the measured loop keeping a counter. */
#ifndef NB_SAMPLES_H
#define NB_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#define NB_SAMPLE_UNSET UINT64_MAX

/* count samples of size bytes, every 64-bit word set to NB_SAMPLE_UNSET.
 * Fails the run (one line, exit 1) when memory cannot be had; warns once
 * when it cannot be locked. */
void *nb_samples_alloc(size_t count, size_t size);
void nb_samples_free(void *buf, size_t count, size_t size);

/* Room for count samples as address space only, for a store that grows:
 * nothing is faulted in until nb_samples_fault (pages never faulted in read
 * as 0, not as unset: count taken samples over the faulted part only). */
void *nb_samples_reserve(size_t count, size_t size);
/* Faults in, locks and marks unset samples [first, first + count). */
void nb_samples_fault(void *buf, size_t first, size_t count, size_t size);

/* How many leading samples have their completion word (the 64-bit word at
 * word_offset in each sample, stored last by the loop) set. */
size_t nb_samples_taken(const void *buf, size_t count, size_t size, size_t word_offset);

/* Bytes of memory a run may ask for: what /proc/meminfo calls available. */
uint64_t nb_memory_available(void);

#endif
