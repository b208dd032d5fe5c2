"""FWQ's ReFrame base: the work kind and its size, Sequoia's three figures
(judged by the kernel: the base's rules_unmet)."""
from reframe.core.builtins import performance_function, variable

from .base import KERNELS, noise_run_base, speed_figures


class fwq_base(noise_run_base, speed_figures):
    """FWQ: 2^work_bits loops of a work kind (`work`: multiiter, asm, daxpy,
    a parameter of the leaf), timed `samples` times a thread; Sequoia's three
    figures over the threads."""

    #: 2^work_bits work loops a sample; 0: the work kind's default in
    #: kernels.json (about 70-100 us a sample on ~3 GHz)
    work_bits = variable(int, value=0)
    #: Samples a thread
    samples = variable(int, value=20000)
    kernel = 'fwq'

    def kernel_args(self):
        bits = KERNELS['kernels'][self.kernel]['work_bits']
        work_bits = self.work_bits or bits.get(self.work, bits['default'])
        return ['--work', self.work, '-w', str(work_bits), '-n', str(self.samples)]

    @performance_function('')
    def max_scaled_noise_sd(self):
        return self.over_ranks('scaled_noise_sd_max')

    @performance_function('')
    def max_kurtosis(self):
        return self.over_ranks('kurtosis_max')
