/* noise-simulate's trace files (LogGOPSim's --noise-trace format): read,
 * or refused with a reason and nothing left allocated or open. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* the tool's own file, its main out of the way of libFuzzer's */
#define main nb_fuzz_simulate_main
#include "../../src/tools/noise_simulate.c"
#undef main

int LLVMFuzzerTestOneInput(const unsigned char *data, unsigned long size)
{
	char path[64];
	int fd = memfd_create("trace", 0);
	struct trace tr;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (read_trace(path, &tr) == NULL) {
		/* in order, every start below the traced duration */
		for (size_t k = 0; k < tr.n; k++)
			if (tr.start[k] >= tr.duration || (k && tr.start[k] < tr.start[k - 1]))
				abort();
		free_trace(&tr);
	}
	close(fd);
	return 0;
}
