/* Figures as a Prometheus node_exporter textfile (text format 0.0.4), the
 * way a site scrapes its nodes: the catalogue's metrics (kernels.json's
 * "metrics") made from rank lines, the node's series and those of its CPUs
 * that broke a rule, and gauges of a program's own. The file is written under a temporary name and renamed
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

/* The catalogue's per-CPU series are named NB_METRICS_CPU_PREFIX...; each
 * has a node-level twin, NB_METRICS_NODE_PREFIX... */
#define NB_METRICS_CPU_PREFIX "noisebench_cpu_"
#define NB_METRICS_NODE_PREFIX "noisebench_node_"

/* A node's rank lines ("rank kernel=K rank=N host=H cpu=C key=value ..."):
 * of each catalogue metric, the node's series (labels kernel and stat: max,
 * its worst CPU; median, its median one), and noisebench_node_cpus and
 * noisebench_node_cpus_breaking. Then one series a rank, labelled kernel,
 * rank and cpu, of the ranks that broke a rule (broken[i] not 0), or of
 * every rank with every_cpu: a node of 288 CPUs writes 21 series and 9 a
 * CPU that broke a rule, not 2,592. kernel, when not NULL, replaces K (a
 * program's own series beside the kernel's in one collector are told apart
 * by it). A line without one of a metric's keys has no series of it. */
void nb_metrics_rank_lines(FILE *f, char *const *lines, const int *broken, int n,
			   const char *kernel, int every_cpu);

/* One gauge without labels. */
void nb_metrics_gauge(FILE *f, const char *name, const char *help, double value);

#endif
