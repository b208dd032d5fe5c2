#define _GNU_SOURCE
#include "outfile.h"
#include "errors.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every file is created, committed and discarded under the lock, so a
 * signal thread removing them all never misses one already on disk nor
 * closes one another thread is closing. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct nb_outfile *open_files;
static int discarding; /* set for good once the process drops its files */

static void unlink_open_files(void)
{
	nb_outfile_discard_all();
}

/* Takes the lock, unless the process is leaving without its files: the
 * thread then waits for the exit rather than create or rename a file. */
static void lock_unless_discarding(void)
{
	pthread_mutex_lock(&lock);
	while (discarding) {
		pthread_mutex_unlock(&lock);
		pause();
		pthread_mutex_lock(&lock);
	}
}

struct nb_outfile *nb_outfile_open(const char *path)
{
	static int registered;
	struct stat st;

	/* the commit renames the new file onto the name: never onto a device
	 * (-o /dev/null once replaced the machine's /dev/null), a pipe or a
	 * directory */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		errno = ENOTSUP;
		return NULL;
	}
	struct nb_outfile *o = calloc(1, sizeof(*o));

	if (!o || asprintf(&o->tmp, "%s.%ld.tmp", path, (long)getpid()) < 0) {
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	o->path = strdup(path);
	lock_unless_discarding();
	o->f = fopen(o->tmp, "w");
	if (!o->f) {
		int e = errno;

		pthread_mutex_unlock(&lock);
		free(o->tmp);
		free(o->path);
		free(o);
		errno = e;
		return NULL;
	}
	setvbuf(o->f, NULL, _IOFBF, 1 << 20);
	if (!registered) {
		atexit(unlink_open_files);
		registered = 1;
	}
	o->next = open_files;
	open_files = o;
	pthread_mutex_unlock(&lock);
	return o;
}

/* Called with the lock held; releases it. */
static void forget(struct nb_outfile *o)
{
	for (struct nb_outfile **p = &open_files; *p; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	free(o->tmp);
	free(o->path);
	free(o);
}

void nb_outfile_discard(struct nb_outfile *o)
{
	lock_unless_discarding();
	if (o->f)
		fclose(o->f);
	unlink(o->tmp);
	forget(o);
}

int nb_outfile_sync(struct nb_outfile *o)
{
	if (fflush(o->f) != 0 || fdatasync(fileno(o->f)) != 0)
		return -1;
	return ferror(o->f) ? (errno = EIO, -1) : 0;
}

int nb_outfile_commit(struct nb_outfile *o)
{
	int failed;

	lock_unless_discarding();
	failed = ferror(o->f);
	failed |= fclose(o->f) != 0;
	o->f = NULL;
	if (failed || rename(o->tmp, o->path) != 0) {
		int e = errno ? errno : EIO;

		unlink(o->tmp);
		forget(o);
		errno = e;
		return -1;
	}
	forget(o);
	return 0;
}

void nb_outfile_commit_or_fail(struct nb_outfile *o)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s", o->path);
	if (nb_outfile_commit(o) != 0)
		nb_fail(NB_EXIT_FAILURE, "cannot write %s: %s", path, strerror(errno));
}

int nb_outfile_discard_all(void)
{
	int n = 0;

	pthread_mutex_lock(&lock);
	discarding = 1;
	/* Kept on the list, unfreed: another thread may hold one, waiting. */
	for (struct nb_outfile *o = open_files; o; o = o->next)
		if (o->f) {
			fclose(o->f);
			o->f = NULL;
			unlink(o->tmp);
			n++;
		}
	pthread_mutex_unlock(&lock);
	return n;
}

void nb_write_u64_column(FILE *f, const uint64_t *v, size_t n, size_t stride)
{
	char buf[24];

	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i * stride];
		char *p = buf + sizeof(buf);

		*--p = '\n';
		do {
			*--p = (char)('0' + x % 10);
			x /= 10;
		} while (x);
		fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), f);
	}
}
