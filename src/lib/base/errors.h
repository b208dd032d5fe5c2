/* One-line errors and warnings, prefixed with the program name. */
#ifndef NB_ERRORS_H
#define NB_ERRORS_H

#include <stdint.h>

/* Exit codes: usage and input errors, run-time failures. An interrupted run
 * exits with 128 + the signal number, as a shell reports it. */
enum { NB_EXIT_FAILURE = 1, NB_EXIT_USAGE = 2 };

void nb_set_program(const char *argv0);
const char *nb_program(void);
void nb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void nb_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Called by nb_fail before it exits (MPI leaves or aborts the job there);
 * quiet_usage keeps usage errors, which every rank sees alike, off stderr. */
void nb_set_exit_hook(void (*hook)(int code), int quiet_usage);

/* After getopt returned c, ':' (an option without its value) or '?' (one
 * it does not know): one line naming the option, exit 2. */
_Noreturn void nb_fail_option(int c, char *const argv[]);

/* Strict number parsing for an option: the whole argument must be a number in
 * [min, max], otherwise one line naming the option and the value, exit 2. */
uint64_t nb_parse_u64(const char *opt, const char *arg, uint64_t min, uint64_t max);
double nb_parse_double(const char *opt, const char *arg, double min, double max);

/* "SIGTERM" for SIGTERM, into buf */
const char *nb_signal_name(int signo, char *buf, int size);

#endif
