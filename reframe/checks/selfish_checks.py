"""The selfish detour on 1, 2, 4, ... and every core of a node of each partition, held to
the partition's bounds, else the kernel's defaults (docs/reframe.md)."""
import reframe as rfm

from noisebench_reframe.base import NOISE_TAGS as TAGS
from noisebench_reframe.selfish import selfish_base


@rfm.simple_test
class selfish_noise_check(selfish_base):
    descr = 'Selfish detour CPU overhead'
    tags = TAGS
