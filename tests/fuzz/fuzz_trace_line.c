/* A line of tracefs's trace file: understood, not used, or refused, and an
 * event's names always whole strings. */
#include <stdlib.h>
#include <string.h>

#include "tracefs.h"
#include "trap.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, unsigned long size)
{
	char *line = nb_fuzz_string(data, size);
	struct nb_trace_event e;
	int got = nb_trace_parse_line(line, &e, 2.5, 1000, 2000);

	if (got < -1 || got > 1)
		abort();
	if (got == 0 && (!memchr(e.comm, '\0', sizeof(e.comm)) ||
			 !memchr(e.name, '\0', sizeof(e.name))))
		abort();
	free(line);
	return 0;
}
