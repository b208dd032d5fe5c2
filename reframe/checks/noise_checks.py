"""Every kernel of the catalogue on 1, 2, 4, ... and every core of a node of
each partition, held to the partition's bounds, else the kernel's defaults:
<kernel>_noise_check, made from the kernel's catalogue entry
(noisebench_reframe/noise_check.py, docs/reframe.md)."""
import reframe as rfm

from noisebench_reframe.noise_check import noise_check_classes

for check in noise_check_classes(__name__):
    rfm.simple_test(check)
