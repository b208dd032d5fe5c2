/* A kernel's command line, every option the driver and the kernel take: the
 * input's NUL-separated words are its arguments. Built once a kernel of the
 * catalogue (NB_FUZZ_SOURCE, NB_FUZZ_KERNEL: tests/fuzz/CMakeLists.txt). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "trap.h"

/* the kernel's own file, its main out of the way of libFuzzer's */
#define main nb_fuzz_kernel_main
#include NB_FUZZ_SOURCE
#undef main
#include "driver.h"

enum { MAX_ARGS = 32 };

static struct nb_driver fuzz_driver;
static struct nb_run fuzz_run;

static void parse(void *unused)
{
	(void)unused;
	nb_driver_parse(&fuzz_run);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, unsigned long size)
{
	char *text = nb_fuzz_string(data, size), *argv[MAX_ARGS + 2] = { "fuzz" };
	int argc = 1;

	for (char *p = text; p < text + size && argc <= MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	memset(&fuzz_driver, 0, sizeof(fuzz_driver));
	memset(&fuzz_run, 0, sizeof(fuzz_run));
	/* as nb_driver_main sets them before it parses */
	fuzz_run.d = &fuzz_driver;
	fuzz_run.k = &NB_FUZZ_KERNEL;
	fuzz_run.prefix = NB_FUZZ_KERNEL.name;
	fuzz_run.samples = NB_FUZZ_KERNEL.default_samples;
	fuzz_driver.threads_opt = -1;
	fuzz_driver.pin = 1;
	fuzz_driver.warmup_ms = 300;
	fuzz_run.daxpy_len = 1024;
	fuzz_driver.argc = argc;
	fuzz_driver.argv = argv;
	optind = 0; /* getopt starts afresh */
	nb_fuzz_call(parse, NULL);
	free(text);
	return 0;
}
