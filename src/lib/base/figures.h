/* The figures of many result lines, reduced to one line: what JUBE's
 * patterns would make of every rank's line (the smallest, mean and largest
 * of each number, the first of each word), made in the job, node by node,
 * so that no harness reads a line a rank of a whole machine.
 *
 * A line is "word key=value key=value ..."; the keys `skip` names (the
 * line's prefix: kernel, rank, host, cpu) are left out. A value is a number
 * (strtod's, a trailing % allowed), a list of numbers by name
 * ("irq:3.1%,timer:0.4%": key_irq, key_timer), or else a word. */
#ifndef NB_FIGURES_H
#define NB_FIGURES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { NB_FIGURE_KEY = 64, NB_FIGURE_TEXT = 64 };

struct nb_figure {
	char key[NB_FIGURE_KEY];
	int is_word;
	uint64_t count;              /* lines with a finite number (or the word) */
	double min, max, sum;
	char min_text[NB_FIGURE_TEXT], max_text[NB_FIGURE_TEXT]; /* as the line had them */
	char first[NB_FIGURE_TEXT];  /* a word: the first line's */
};

/* Keys in the order they first came; f[0..n) is plain data, so that a
 * node's can be sent as bytes and merged on the root (nb_figures_merge). */
struct nb_figures {
	uint64_t lines;
	size_t n, cap;
	struct nb_figure *f;
};

/* Adds one line's figures; fails (nb_fail) only when out of memory. */
void nb_figures_add_line(struct nb_figures *fs, const char *line, const char *const *skip);
/* Adds the figures of other lines: a node's, merged on the root in node
 * order, so that "first" stays the first line's. */
void nb_figures_merge(struct nb_figures *fs, const struct nb_figure *f, size_t n, uint64_t lines);
/* " key_min=.. key_avg=.. key_max=.." of each number (min and max as their
 * line printed them; nan when no line had a finite one), " key_first=.." of
 * each word. */
void nb_figures_print(const struct nb_figures *fs, FILE *out);
void nb_figures_free(struct nb_figures *fs);

/* The value of key=... in one such line: its start, and its length in
 * *len; NULL when the line has no such key. */
const char *nb_line_value(const char *line, const char *key, size_t *len);

#endif
