"""FWQ on 1, 2, 4, ... and every core of a node of each partition, held to
the partition's bounds, else the kernel's defaults (docs/reframe.md)."""
import platform

import reframe as rfm
from reframe.core.builtins import parameter, run_after

from noisebench_reframe.base import KERNELS, NOISE_TAGS as TAGS
from noisebench_reframe.fwq import fwq_base


@rfm.simple_test
class fwq_noise_check(fwq_base):
    #: Work loop: every work kind of the catalogue (kernels.json, work_kinds)
    work = parameter(list(KERNELS['work_kinds']))
    descr = 'FWQ scaled noise against the Sequoia criteria'
    tags = TAGS

    @run_after('setup')
    def skip_kinds_the_node_lacks(self):
        # the kernels are built here, for this host's processor
        builds_on = KERNELS['work_kinds'][self.work].get('arch', [platform.machine()])
        self.skip_if(platform.machine() not in builds_on,
                     f'the {self.work} work loop builds on {", ".join(builds_on)} only')
