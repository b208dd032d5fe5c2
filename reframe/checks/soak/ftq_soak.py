"""FTQ streamed on every core of a node for soak_seconds (soak.py)."""
import reframe as rfm
from reframe.core.builtins import variable

from noisebench_reframe.soak import TAGS, soak_base


@rfm.simple_test
class ftq_soak_check(soak_base):
    #: Sampling frequency (Hz)
    frequency_hz = variable(int, value=10000)
    descr = 'FTQ streamed on every core for hours'
    tags = TAGS
    kernel = 'ftq'

    def kernel_args(self):
        return ['--work', self.work, '--freq', str(self.frequency_hz), *self.stream_args()]
