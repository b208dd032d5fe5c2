#define _GNU_SOURCE
#include "samples.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "errors.h"

void *nb_samples_alloc(size_t count, size_t size)
{
	static atomic_int warned;
	size_t bytes = count * size;
	void *buf;

	if (bytes == 0)
		bytes = size;
	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		   -1, 0);
	if (buf == MAP_FAILED)
		nb_fail(NB_EXIT_FAILURE, "cannot map %zu bytes of samples: %s", bytes,
			strerror(errno));
	/* Writing every page also faults it in on this thread's NUMA node. */
	memset(buf, 0xff, bytes);
	if (mlock(buf, bytes) != 0 && atomic_exchange(&warned, 1) == 0)
		nb_warn("cannot lock %zu bytes of samples in memory (%s): page faults may show "
			"as noise; raise 'ulimit -l' or run with CAP_IPC_LOCK",
			bytes, strerror(errno));
	return buf;
}

void *nb_samples_reserve(size_t count, size_t size)
{
	size_t bytes = count * size;
	void *buf = mmap(NULL, bytes ? bytes : size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (buf == MAP_FAILED)
		nb_fail(NB_EXIT_FAILURE, "cannot reserve %zu bytes for samples: %s", bytes,
			strerror(errno));
	return buf;
}

void nb_samples_fault(void *buf, size_t first, size_t count, size_t size)
{
	static atomic_int warned;
	char *at = (char *)buf + first * size;

	memset(at, 0xff, count * size);
	if (mlock(at, count * size) != 0 && atomic_exchange(&warned, 1) == 0)
		nb_warn("cannot lock %zu bytes of samples in memory (%s): page faults may show "
			"as noise; raise 'ulimit -l' or run with CAP_IPC_LOCK",
			count * size, strerror(errno));
}

void nb_samples_free(void *buf, size_t count, size_t size)
{
	size_t bytes = count * size;

	if (buf)
		munmap(buf, bytes ? bytes : size);
}

static uint64_t word_at(const void *buf, size_t i, size_t size, size_t word_offset)
{
	const uint64_t *w = (const uint64_t *)((const char *)buf + i * size + word_offset);

	return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

size_t nb_samples_taken(const void *buf, size_t count, size_t size, size_t word_offset)
{
	size_t lo = 0, hi = count; /* samples [0, lo) are set, [hi, count) are not */

	if (!buf)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (word_at(buf, mid, size, word_offset) != NB_SAMPLE_UNSET)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t nb_memory_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	if (kb)
		return kb * 1024;
	return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}
