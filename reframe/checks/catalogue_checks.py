"""Every kernel of the catalogue without a base of its own
(reframe/noisebench_reframe/<kernel>.py), at its defaults on 1, 2, 4, ...
and every core of a node, held to its headline figure's bounds: the check a
new kernel gets from its catalogue entry alone (docs/reframe.md)."""
import importlib.util

import reframe as rfm
from reframe.core.builtins import parameter, run_after

from noisebench_reframe.base import KERNELS, NOISE_TAGS, noise_run_base


def without_a_base():
    return [k for k in KERNELS['kernels']
            if importlib.util.find_spec(f'noisebench_reframe.{k}') is None]


class catalogue_noise_check(noise_run_base):
    #: The kernel, of those the catalogue lists without a base of their own
    catalogue_kernel = parameter(without_a_base())
    descr = 'A kernel of the catalogue at its defaults, its headline figure'
    tags = NOISE_TAGS

    @run_after('init')
    def set_kernel(self):
        self.kernel = self.catalogue_kernel


# a check with no kernel to run would be a warning in every session
if without_a_base():
    rfm.simple_test(catalogue_noise_check)
