#include "runinfo.h"

#include <stdio.h>
#include <string.h>

#include "errors.h"

void nb_json_run_head(struct nb_json *j, const struct nb_run_info *ri)
{
	char name[16];

	nb_json_object(j, NULL);
	nb_json_string(j, "noisebench_version", NOISEBENCH_VERSION);
	nb_json_string(j, "kernel", ri->kernel);
	nb_json_string(j, "frontend", ri->frontend);
	nb_json_array(j, "command_line");
	for (int i = 0; i < ri->argc; i++)
		nb_json_string(j, NULL, ri->argv[i]);
	nb_json_end(j, ']');
	nb_json_bool(j, "complete", ri->signo == 0);
	nb_json_string(j, "interrupted_by",
		       ri->signo ? nb_signal_name(ri->signo, name, sizeof(name)) : NULL);
}

static void json_time(struct nb_json *j, const char *key, const struct timespec *utc,
		      const struct nb_clock_pair *p)
{
	char buf[64];
	struct tm tm;

	gmtime_r(&utc->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%06ldZ", utc->tv_nsec / 1000);
	nb_json_object(j, key);
	nb_json_string(j, "utc", buf);
	nb_json_uint(j, "ticks", p->ticks);
	nb_json_uint(j, "monotonic_raw_ns", p->raw_ns);
	nb_json_end(j, '}');
}

void nb_json_run_tail(struct nb_json *j, const struct nb_run_info *ri)
{
	const struct nb_calibration *c = ri->cal;

	nb_json_string(j, "timer", NB_TIMER_NAME);
	nb_json_double(j, "ticks_per_ns", c->ticks_per_ns);
	nb_json_string(j, "ticks_per_ns_source", c->ticks_per_ns_given ? "option" : "measured");
	nb_json_object(j, "calibration");
	/* timer_read_ns: kept for readers of earlier runs; the same as the mean */
	nb_json_double(j, "timer_read_ns", nb_ticks_to_ns(c, c->timer_read_ticks));
	nb_json_double(j, "timer_read_mean_ns", nb_ticks_to_ns(c, c->timer_read_ticks));
	nb_json_double(j, "timer_read_min_ns", nb_ticks_to_ns(c, c->timer_read_min_ticks));
	nb_json_double(j, "timer_read_median_ns", nb_ticks_to_ns(c, c->timer_read_median_ticks));
	nb_json_double(j, "unfenced_read_min_ns", nb_ticks_to_ns(c, c->unfenced_read_min_ticks));
	nb_json_double(j, "unfenced_read_median_ns",
		       nb_ticks_to_ns(c, c->unfenced_read_median_ticks));
	nb_json_double(j, "timer_resolution_mean_ns", nb_ticks_to_ns(c, c->timer_resolution_ticks));
	nb_json_double(j, "timer_resolution_ns", nb_ticks_to_ns(c, c->timer_resolution_ticks));
	nb_json_double(j, "loop_overhead_ns", nb_ticks_to_ns(c, c->loop_overhead_ticks));
	nb_json_double(j, "min_measurable_ns", c->min_measurable_ns);
	nb_json_int(j, "cpus_online", c->cpus_online);
	nb_json_int(j, "cpus_allowed", c->cpus_allowed);
	nb_json_end(j, '}');
	nb_json_uint(j, "warmup_ms", ri->warmup_ms);
	nb_json_bool(j, "pinned", ri->pinned);
	if (ri->inject->duration_us) {
		nb_json_object(j, "inject");
		nb_json_uint(j, "period_us", ri->inject->period_us);
		nb_json_uint(j, "duration_us", ri->inject->duration_us);
		nb_json_string(j, "pattern", ri->inject->poisson ? "poisson" : "periodic");
		nb_json_double(j, "overhead_ns",
			       nb_ticks_to_ns(c, (double)ri->inject->overhead_ticks));
		nb_json_end(j, '}');
	} else {
		nb_json_null(j, "inject");
	}
	json_time(j, "start", &ri->start_utc, &ri->start);
	json_time(j, "end", &ri->end_utc, &ri->end);
	nb_machine_json(ri->machine, j, "machine");
	nb_json_end(j, '}');
}

