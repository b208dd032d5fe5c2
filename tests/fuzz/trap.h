/* The fuzz targets' one shared piece: a parser's error exits (nb_fail, and
 * the exit(0) of -h) return to the target instead, so that libFuzzer goes
 * on to the next input. The targets link with -Wl,--wrap=exit. */
#ifndef NB_FUZZ_TRAP_H
#define NB_FUZZ_TRAP_H

/* Calls fn(arg); returns 1 if it called exit(), 0 if it returned. */
int nb_fuzz_call(void (*fn)(void *), void *arg);

/* The input as a C string (one allocation, freed by the caller). */
char *nb_fuzz_string(const unsigned char *data, unsigned long size);

#endif
