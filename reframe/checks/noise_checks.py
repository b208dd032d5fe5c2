"""OS-noise checks for the acceptance of a system: FWQ, FTQ, P-SNAP and the
selfish detour on 1, 2, 4, ... and every core of a node of each partition.

    reframe -C reframe/config/generic.py -c reframe/checks -r
    reframe ... -S inject=1000:700 -r      # a known noise: the checks must fail

The figures are held to the partition's bounds (its system's config file),
else to the kernel's defaults: Sequoia's "diminutive noise" for FWQ."""
import platform

import reframe as rfm
from reframe.core.builtins import parameter, run_after

from noisebench_reframe.base import fwq_base, ftq_base, psnap_base, selfish_base

TAGS = {'acceptance', 'noise', 'benchmark'}


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


@rfm.simple_test
class ftq_noise_check(ftq_base):
    #: Sampling frequency (Hz): two that are not multiples of each other
    frequency_hz = parameter([10000, 7000])
    descr = 'FTQ noise fraction and strongest spectral line'
    tags = TAGS


@rfm.simple_test
class psnap_noise_check(psnap_base):
    descr = 'P-SNAP OS noise and correlation with rank 0'
    tags = TAGS


@rfm.simple_test
class selfish_noise_check(selfish_base):
    descr = 'Selfish detour CPU overhead'
    tags = TAGS
