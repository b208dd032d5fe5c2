"""FWQ on 1, 2, 4, ... and every core of a node of each partition, held to
the partition's bounds, else the kernel's defaults (docs/reframe.md)."""
import platform

import reframe as rfm
from reframe.core.builtins import parameter, run_after

from noisebench_reframe.base import NOISE_TAGS as TAGS
from noisebench_reframe.fwq import fwq_base


@rfm.simple_test
class fwq_noise_check(fwq_base):
    #: Work loop: multiiter (32 inc, 31 dec), asm (x86-64 registers only), daxpy
    work = parameter(['multiiter', 'asm', 'daxpy'])
    descr = 'FWQ scaled noise against the Sequoia criteria'
    tags = TAGS

    @run_after('setup')
    def skip_asm_elsewhere(self):
        # the kernels are built here, and have an ASM loop on x86-64 only
        self.skip_if(self.work == 'asm' and platform.machine() != 'x86_64',
                     'the asm work loop is x86-64 only')
