"""What the checks read of the kernels: the kernel catalogue
(src/kernels/kernels.json, the one description of every kernel's output)
and the figures of the ranks line. Needs no ReFrame runtime, so that it can
be tried on a kernel's own output."""
import json
import os
import re

import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

# the checkout this package is installed from (pip install -e reframe/)
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def catalogue_path():
    """The kernel catalogue of the kernels the checks run: that of an
    installed noisebench (NOISEBENCH_BIN_DIR/../share/noisebench/), else
    this checkout's."""
    bin_dir = os.environ.get('NOISEBENCH_BIN_DIR', '')
    installed = os.path.join(bin_dir, '..', 'share', 'noisebench', 'kernels.json')
    if bin_dir and os.path.exists(installed):
        return installed
    return os.path.join(REPO, 'src', 'kernels', 'kernels.json')


# what the harness knows of each kernel: its summary lines, the Sequoia
# limits, the cause classes, FWQ's work amount per work kind
with open(catalogue_path()) as f:
    KERNELS = json.load(f)


def ranks_line(kernel):
    """The pattern of the one line of every rank's figures reduced."""
    return KERNELS['ranks_line'].replace('{kernel}', kernel)


@sn.deferrable
def cause_share(stdout, pattern, cls):
    """The largest share (%) of `cls` over the threads or ranks (causes_<cls>_max
    of the line `pattern` matches, the ranks line); a class no rank printed
    (under 0.05%) counts as 0. A run in which any rank could not trace
    (traced_min=0) fails here, saying how many; each said why on stderr."""
    with open(stdout) as f:
        found = [ln for ln in f if re.match(pattern, ln)]
    if not found:
        raise SanityError('no ranks line to read the causes from')
    figures = dict(re.findall(r'\b(\w+)=(\S+)', found[-1]))
    if float(figures.get('traced_min', 0)) < 1:
        ranks = int(figures.get('ranks', 0))
        untraced = round((1 - float(figures.get('traced_avg', 0))) * ranks)
        raise SanityError(f'{untraced} of the {ranks} threads or ranks could not trace: '
                          'see the warning in stderr')
    return float(figures.get(f'causes_{cls}_max', 0))
