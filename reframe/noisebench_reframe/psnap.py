"""P-SNAP's ReFrame base: the granularity, the correlation with rank 0."""
from reframe.core.builtins import performance_function, run_before, variable

from .base import noise_run_base, speed_figures


class psnap_base(noise_run_base, speed_figures):
    """P-SNAP: a loop calibrated to `granularity_us`, `reps` times on every
    thread or rank; PRACE's OS noise % and the correlation with rank 0."""

    #: Calibrated iteration length (us)
    granularity_us = variable(int, value=1000)
    #: Iterations
    reps = variable(int, value=2000)
    kernel = 'psnap'

    def kernel_args(self):
        return ['-n', str(self.reps), '-g', str(self.granularity_us)]

    @run_before('performance')
    def drop_correlation_of_one(self):
        # one rank has nothing to correlate with: no figure rather than NaN
        if self.cores == 1:
            self.perf_variables.pop('max_correlation', None)

    @performance_function('')
    def max_correlation(self):
        # the largest |correlation| of a rank's iteration times with rank 0's
        return self.run_summary('max_correlation')
