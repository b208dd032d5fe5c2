"""FTQ on 1, 2, 4, ... and every core of a node of each partition, held to
the partition's bounds, else the kernel's defaults (docs/reframe.md)."""
import reframe as rfm
from reframe.core.builtins import parameter

from noisebench_reframe.base import NOISE_TAGS as TAGS
from noisebench_reframe.ftq import ftq_base


@rfm.simple_test
class ftq_noise_check(ftq_base):
    #: Sampling frequency (Hz): two that are not multiples of each other
    frequency_hz = parameter([10000, 7000])
    descr = 'FTQ noise fraction and strongest spectral line'
    tags = TAGS
