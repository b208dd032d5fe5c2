#define _GNU_SOURCE /* sigabbrev_np */
#include "errors.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *program = "noisebench";
static void (*exit_hook)(int);
static int quiet_usage;

void nb_set_exit_hook(void (*hook)(int code), int quiet)
{
	exit_hook = hook;
	quiet_usage = quiet;
}

void nb_set_program(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');

	program = slash ? slash + 1 : argv0;
}

const char *nb_program(void)
{
	return program;
}

static void vreport(const char *what, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s", program, what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void nb_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void nb_fail(int code, const char *fmt, ...)
{
	va_list ap;

	if (!(quiet_usage && code == NB_EXIT_USAGE)) {
		va_start(ap, fmt);
		vreport("error: ", fmt, ap);
		va_end(ap);
	}
	if (exit_hook)
		exit_hook(code);
	exit(code);
}

uint64_t nb_parse_u64(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	const char *p = arg;
	char *end;
	unsigned long long v;

	while (isspace((unsigned char)*p))
		p++;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (!isdigit((unsigned char)*p) || *end != '\0' || errno == ERANGE || v < min || v > max)
		nb_fail(NB_EXIT_USAGE, "%s %s: expected a whole number from %llu to %llu", opt, arg,
			(unsigned long long)min, (unsigned long long)max);
	return v;
}

double nb_parse_double(const char *opt, const char *arg, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end != '\0' || errno == ERANGE || !(v >= min && v <= max))
		nb_fail(NB_EXIT_USAGE, "%s %s: expected a number from %g to %g", opt, arg, min, max);
	return v;
}

const char *nb_signal_name(int signo, char *buf, int size)
{
	const char *abbrev = sigabbrev_np(signo);

	snprintf(buf, size, "SIG%s", abbrev ? abbrev : "?");
	return buf;
}

_Noreturn void nb_fail_option(int c, char *const argv[])
{
	if (c == ':')
		nb_fail(NB_EXIT_USAGE, "%s needs a value (see -h)", argv[optind - 1]);
	/* a short option among others ("-xh") by its letter, a long one as given */
	if (optopt > 0 && optopt < 256)
		nb_fail(NB_EXIT_USAGE, "unknown option -%c (see -h)", optopt);
	nb_fail(NB_EXIT_USAGE, "unknown option %s (see -h)", argv[optind - 1]);
}
