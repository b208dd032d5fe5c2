/* --inject PERIOD:DURATION[:poisson|:periodic]: accepted with a period and
 * duration in range, or refused with one line and exit 2. */
#include <stdlib.h>

#include "inject.h"
#include "trap.h"

static const char *arg;
static struct nb_inject in;

static void parse(void *unused)
{
	(void)unused;
	nb_inject_parse("--inject", arg, &in);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, unsigned long size)
{
	char *text = nb_fuzz_string(data, size);

	arg = text;
	nb_fuzz_call(parse, NULL);
	free(text);
	return 0;
}
