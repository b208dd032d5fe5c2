"""P-SNAP on 1, 2, 4, ... and every core of a node of each partition, held to
the partition's bounds, else the kernel's defaults (docs/reframe.md)."""
import reframe as rfm

from noisebench_reframe.base import NOISE_TAGS as TAGS
from noisebench_reframe.psnap import psnap_base


@rfm.simple_test
class psnap_noise_check(psnap_base):
    descr = 'P-SNAP OS noise and correlation with rank 0'
    tags = TAGS
