"""P-SNAP streamed on every core of a node for soak_seconds (soak.py)."""
import reframe as rfm
from reframe.core.builtins import variable

from noisebench_reframe.soak import TAGS, soak_base


@rfm.simple_test
class psnap_soak_check(soak_base):
    #: Time of one iteration (us)
    granularity_us = variable(int, value=1000)
    descr = 'P-SNAP streamed on every core for hours'
    tags = TAGS
    kernel = 'psnap'

    def kernel_args(self):
        return ['-g', str(self.granularity_us), *self.stream_args()]
