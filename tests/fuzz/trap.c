/* exit() inside nb_fuzz_call jumps back to it; elsewhere (libFuzzer's own
 * exits) it is the real exit. */
#include "trap.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

void __real_exit(int code);
void __wrap_exit(int code);

static jmp_buf back;
static int armed;

void __wrap_exit(int code)
{
	if (armed) {
		armed = 0;
		longjmp(back, 1);
	}
	__real_exit(code);
}

int nb_fuzz_call(void (*fn)(void *), void *arg)
{
	if (setjmp(back))
		return 1;
	armed = 1;
	fn(arg);
	armed = 0;
	return 0;
}

char *nb_fuzz_string(const unsigned char *data, unsigned long size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}
