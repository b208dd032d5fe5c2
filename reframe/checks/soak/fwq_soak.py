"""FWQ streamed on every core of a node for soak_seconds (soak.py)."""
import reframe as rfm

from noisebench_reframe.base import KERNELS
from noisebench_reframe.soak import TAGS, soak_base


@rfm.simple_test
class fwq_soak_check(soak_base):
    descr = 'FWQ streamed on every core for hours'
    tags = TAGS
    kernel = 'fwq'

    def kernel_args(self):
        bits = KERNELS['kernels'][self.kernel]['work_bits']
        return ['--work', self.work, '-w', str(bits.get(self.work, bits['default'])),
                *self.stream_args()]
