"""FTQ's ReFrame base: the sampling frequency, the spectrum's strongest line."""
from reframe.core.builtins import performance_function, variable

from .base import noise_run_base


class ftq_base(noise_run_base):
    """FTQ: work loops counted in each quantum at `frequency_hz` (a parameter
    of the leaf); the share of the best quantum's work missing, and the
    spectrum's strongest line."""

    #: Seconds of quanta a thread
    seconds = variable(float, value=2.0)
    kernel = 'ftq'

    def kernel_args(self):
        return ['--freq', str(self.frequency_hz), '--seconds', str(self.seconds)]

    @performance_function('Hz')
    def largest_peak_hz(self):
        """The strongest line of the counts' spectrum over the threads or
        ranks, each of which found its own in its counts (0 0 when none
        stood out; docs/kernels.md): its frequency and share, reduced in the
        job onto the kernel's summary line."""
        return self.run_summary('line_hz')

    @performance_function('%')
    def largest_peak_share(self):
        return self.run_summary('line_share_percent')
