"""The soak checks' base: a kernel streamed (--stream) on every core of a node of
each partition for soak_seconds, its figures written out every
checkpoint_s; the job's time limit is the soak's length plus 15 minutes.

    reframe -C reframe/config/generic.py -c reframe/checks/soak -r              # 10 minutes
    reframe ... -c reframe/checks/soak -S soak_seconds=86400 -r                 # an acceptance day

Kept apart from reframe/checks/ (which -c does not descend into) so that the
survey's checks stay short; each kernel's leaf is reframe/checks/soak/<kernel>_soak.py.
docs/running.md describes a 24-hour soak."""
import os

from reframe.core.builtins import parameter, performance_function, run_before, variable

from .base import noise_run_base

TAGS = {'acceptance', 'noise', 'soak'}


def every_core():
    """(partition, cores): one layout, every core of a node of each partition."""
    import reframe.core.runtime as rt
    for part in rt.runtime().system.partitions:
        yield (part.fullname, part.processor.num_cpus or os.cpu_count())


class soak_base(noise_run_base):
    """A kernel streamed for soak_seconds: memory fixed whatever the length,
    a loss histogram, the longest losses with their samples, a line a
    second (docs/kernels.md, "Streamed runs")."""

    layout = parameter(every_core(), fmt=lambda x: x[1])
    #: Length of the soak (s)
    soak_seconds = variable(int, value=600)
    #: How often the figures are written out (s): a killed job loses at most this
    checkpoint_s = variable(int, value=60)
    #: Work kind of the loop
    work = variable(str, value='multiiter')

    @run_before('run')
    def set_time_limit(self):
        self.time_limit = f'{self.soak_seconds + 900}s'

    def stream_args(self):
        return ['--stream', '--seconds', str(self.soak_seconds), '--checkpoint',
                str(self.checkpoint_s)]

    @performance_function('us')
    def max_p99_9_loss_us(self):
        """The largest over the threads or ranks of the 99.9th percentile of
        a sample's loss (from the histogram: within 1%)."""
        return self.over_ranks('p99_9_loss_us_max')

    @performance_function('us')
    def max_loss_us(self):
        return self.over_ranks('max_loss_us_max')

    @performance_function('%')
    def max_stolen_percent(self):
        """What the system took of the worst thread or rank: every kernel's
        headline (src/lib/system/speed.h), each 10 ms chunk its window."""
        return self.over_ranks('stolen_percent_max')

    @performance_function('%')
    def max_lost_percent(self):
        return self.over_ranks('lost_percent_max')

    @performance_function('')
    def lost_samples(self):
        """The most samples a rank's writer lost (it fell behind): 0 on a
        sound run."""
        return self.over_ranks('lost_samples_max')

    @performance_function('MiB')
    def max_memory_mib(self):
        return self.over_ranks('memory_bytes_max') / 2**20
