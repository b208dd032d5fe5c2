"""Every kernel's check, made from its catalogue entry (kernels.json): one
class a kernel, <kernel>_noise_check, on 1, 2, 4, ... and every core. Its
parameters are the lists of the kernel's sweep (work: null, every work
kind), its variables the sweep's single values (-S key=value), its options
the sweep's keys through sweep_options. It logs the headline, the figures
the entry's logged lists, and what the system took and the work's
slowdown. A new kernel gets its check from its entry alone."""
import platform

import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, variable
from reframe.core.meta import make_test

from .base import KERNELS, NOISE_TAGS, noise_run_base

# what the system took of the worst rank, and apart the work's largest
# slowdown (src/lib/system/speed.h): every kernel has them
SPEED = [{'name': f'max_{part}_percent', 'line': 'ranks', 'key': f'{part}_percent_max',
          'unit': '%'} for part in ('stolen', 'slowdown')]


def number(value):
    """A value as an option: 2.0 as 2, so the kernel reads what JUBE gives."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


class noise_check_base(noise_run_base):
    """The check of one kernel of the catalogue (the class sets `kernel`
    and its sweep's parameters and variables)."""

    #: 2^work_bits work loops a sample; 0: the kernel's work_bits for the
    #: work kind in kernels.json
    work_bits = variable(int, value=0)

    @run_after('setup')
    def skip_kinds_the_node_lacks(self):
        # the kernels are built here, for this host's processor
        work = getattr(self, 'work', None)
        if work is None:
            return
        builds_on = KERNELS['work_kinds'][work].get('arch', [platform.machine()])
        self.skip_if(platform.machine() not in builds_on,
                     f'the {work} work loop builds on {", ".join(builds_on)} only')

    def kernel_args(self):
        entry = KERNELS['kernels'][self.kernel]
        options = KERNELS['sweep_options']
        args = []
        for key in entry.get('sweep', {}):
            value = getattr(self, key)
            if key == 'work_bits' and not value:
                value = entry['work_bits'].get(self.work, entry['work_bits']['default'])
            args += [options[key], number(value)]
        return args

    @run_before('performance')
    def add_logged(self):
        """The entry's logged figures, and the system's share; a figure a
        run of too few ranks cannot have is left out rather than logged as
        NaN."""
        entry = KERNELS['kernels'][self.kernel]
        logged = entry.get('logged', []) + SPEED
        for figure in logged:
            if self.cores < figure.get('ranks_min', 1):
                continue
            read = self.over_ranks if figure['line'] == 'ranks' else self.run_summary
            self.perf_variables[figure['name']] = sn.make_performance_function(
                read(figure['key']), figure['unit'])


def sweep_body(entry):
    """The parameters and variables of a kernel's check, from its sweep."""
    body = {}
    for key, value in entry.get('sweep', {}).items():
        if key == 'work' and value is None:
            body[key] = parameter(list(KERNELS['work_kinds']))
        elif isinstance(value, list):
            body[key] = parameter(value)
        elif key == 'work':
            body[key] = variable(str, value=value)
        elif value is not None:
            # a length may be a fraction (-S seconds=0.5)
            body[key] = variable(float, int, value=value)
    return body


def noise_check_classes(module):
    """Every kernel's check class, defined in `module` (the checks' file,
    which registers each as ReFrame's loader expects)."""
    for kernel, entry in KERNELS['kernels'].items():
        body = {'kernel': kernel, 'tags': NOISE_TAGS,
                'descr': f"{entry['title']}: {entry['headline']['name']} and the requirements"}
        body.update(sweep_body(entry))
        yield make_test(f'{kernel}_noise_check', (noise_check_base,), body, module=module)
