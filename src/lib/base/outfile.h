/* Output files that appear only when complete: each is written under a
 * temporary name beside its final one and renamed when closed.  Temporary
 * files still open when the process exits are removed. */
#ifndef NB_OUTFILE_H
#define NB_OUTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct nb_outfile {
	char *path; /* final name */
	char *tmp;  /* name while being written */
	FILE *f;
	struct nb_outfile *next;
};

/* Creates the temporary file; on failure returns NULL and sets errno. A
 * name that holds anything but a regular file (a device, a pipe, a
 * directory) is refused with ENOTSUP: the commit's rename would replace it. */
struct nb_outfile *nb_outfile_open(const char *path);

/* Flushes, closes, renames and frees o; returns 0, or -1 with errno (the
 * temporary file is removed then). */
int nb_outfile_commit(struct nb_outfile *o);

/* Commits o, first flushing it; on failure ends the process (nb_fail)
 * naming the file: for a file without which the run has failed. */
void nb_outfile_commit_or_fail(struct nb_outfile *o);

/* Flushes o and waits until its data is on disk (a checkpoint that must
 * survive the node's crash, before its commit); 0, or -1 with errno. */
int nb_outfile_sync(struct nb_outfile *o);

/* Closes, removes and frees o, a file that will not be written after all. */
void nb_outfile_discard(struct nb_outfile *o);

/* Removes every temporary file not yet committed, for a process about to
 * exit without its files: any thread opening, committing or discarding a
 * file from then on waits for the exit.  Returns how many were removed. */
int nb_outfile_discard_all(void);

/* Writes v[0], v[stride], v[2*stride], ... one decimal number per line. */
void nb_write_u64_column(FILE *f, const uint64_t *v, size_t n, size_t stride);

#endif
