"""The selfish detour's ReFrame base: how long, detours a second."""
from reframe.core.builtins import performance_function, variable

from .base import noise_run_base, speed_figures


class selfish_base(noise_run_base, speed_figures):
    """Selfish detour: every iteration of a tight loop longer than 9x the
    shortest, for `seconds`; Netgauge's CPU overhead and detours a second."""

    #: Seconds of measurement
    seconds = variable(int, value=3)
    #: Detours a rank can record
    detours = variable(int, value=1000000)
    kernel = 'selfish'

    def kernel_args(self):
        return ['--seconds', str(self.seconds), '--detours', str(self.detours)]

    @performance_function('1/s')
    def detours_per_s(self):
        return self.run_summary('detours_per_s')
