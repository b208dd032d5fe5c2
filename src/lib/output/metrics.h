/* Figures as a Prometheus node_exporter textfile (text format 0.0.4), the
 * way a site scrapes its nodes: the catalogue's metrics (kernels.json's
 * "metrics") made from rank lines, one series a rank, and gauges of a
 * program's own. The file is written under a temporary name and renamed
 * when whole, so the collector never reads half of one. */
#ifndef NB_METRICS_H
#define NB_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "machine.h"

/* The file's name: the template with each {host} replaced by host (one
 * template for every node of a shared file system). 0, or -1 if too long. */
int nb_metrics_path(const char *template, const char *host, char *buf, size_t size);

/* noisebench_info{version, kernel_release, host} 1 of m: the file's first
 * lines (in a file from nb_outfile_open, committed when whole). */
void nb_metrics_info(FILE *f, const struct nb_machine *m);

/* Each catalogue metric, one series a rank line ("rank kernel=K rank=N
 * host=H cpu=C key=value ..."), labelled kernel (K, or `kernel` when not
 * NULL: a program's own series beside the kernel's in one collector are
 * told apart by it), rank and cpu; a line without one of a metric's keys
 * has no series of it. */
void nb_metrics_rank_lines(FILE *f, char *const *lines, int n, const char *kernel);

/* One gauge without labels. */
void nb_metrics_gauge(FILE *f, const char *name, const char *help, double value);

#endif
