"""Base classes of the noisebench ReFrame checks, after hpctestlib: a build
fixture, a run base that knows how to start a kernel on a partition and how
to hold it to the requirements (the kernel's verdict) and to give its
headline figure (the kernel catalogue's). The kernels' checks are made from
the catalogue (noise_check.py); the soak's derive from soak.py."""
import os

import reframe as rfm
import reframe.core.runtime as rt
import reframe.utility.sanity as sn
from reframe.core.builtins import (fixture, parameter, performance_function, run_after,
                                   run_before, sanity_function, variable)

from .catalogue import KERNELS, REPO, cause_share, ranks_line

# A check's only reference: the requirements' verdict as the kernel gave it
# (src/lib/base/requirements.h), no rule unmet on any rank. The rules are a
# site's file (the check's `requirements`, or its partition's
# extras['noisebench_requirements']) or the kernels' default, the Sequoia
# criteria; they are judged once, in C, as the report, JUBE and noise-check
# read them.
REQUIREMENTS_MET = {'rules_unmet': (0, None, 0.0, 'rules')}

# the rules the acceptance preset judges by unless a site names its own
# (DESCRIPTION.md, Commitments)
COMMITMENTS = ('site', 'acceptance', 'commitments.requirements')
# the acceptance checks' tags (noise_check.py)
NOISE_TAGS = {'acceptance', 'noise', 'benchmark'}

# a kernel every build has: the catalogue's first
FIRST_KERNEL = next(iter(KERNELS['kernels']))


def core_counts():
    """(partition, cores) pairs: 1, 2, 4, ... and every core of a node of
    each partition (its configured processor, else this host's CPUs)."""
    for part in rt.runtime().system.partitions:
        ncores = part.processor.num_cpus or os.cpu_count()
        count = 1
        while count < ncores:
            yield (part.fullname, count)
            count *= 2
        yield (part.fullname, ncores)


class noisebench_build(rfm.CompileOnlyRegressionTest):
    """Compiles this checkout with CMake once a partition, or takes the
    kernels of an installed noisebench (e.g. Spack's) from bin_dir."""

    #: The bin/ directory of an installed noisebench; empty: build REPO
    bin_dir = variable(str, value=os.environ.get('NOISEBENCH_BIN_DIR', ''))
    build_system = 'CustomBuild'
    sourcesdir = None
    build_locally = True

    @run_before('compile')
    def set_build_commands(self):
        if self.bin_dir:
            self.build_system.commands = [f'test -x {self.bin_dir}/{FIRST_KERNEL}']
        else:
            self.build_system.commands = [
                f'cmake -S {REPO} -B build -DCMAKE_BUILD_TYPE=Release > cmake.log',
                'cmake --build build -j >> cmake.log',
            ]

    @property
    def kernels(self):
        return self.bin_dir or os.path.join(self.stagedir, 'build', 'bin')

    @sanity_function
    def validate_build(self):
        return sn.path_exists(os.path.join(self.kernels, FIRST_KERNEL))


class noise_run_base(rfm.RunOnlyRegressionTest):
    """One kernel on `cores` CPUs of one node: as threads where the partition
    launches locally, as MPI ranks (<kernel>_mpi) under srun."""

    #: (partition, cores): threads or ranks, up to every core of a node
    layout = parameter(core_counts(), fmt=lambda x: x[1])
    #: Busy-wait D us every P us on every thread ("P:D"): a known noise
    #: that an acceptance check must catch; empty: none
    inject = variable(str, value='')
    #: A requirements file (docs/analysis.md, "Requirements"): the rules the
    #: kernel judges every rank by, and the check's only reference; empty:
    #: the partition's extras['noisebench_requirements'], else the default
    requirements = variable(str, value=os.environ.get('NOISEBENCH_REQUIREMENTS', ''))
    #: The rules file that judged the check, for the perflog (rules=): the
    #: one the kernel was given, or "default" (the Sequoia criteria)
    rules_file = variable(str, value='default')
    #: Attribute every detour to its cause (--trace: root or tracefs access);
    #: adds a max_<class>_percent performance variable per cause class
    trace = variable(bool, value=False)
    #: The acceptance preset (docs/reframe.md): each kernel once, on every
    #: core of every node the partition has free (ReFrame's flexible
    #: allocation), at the lengths of the catalogue's acceptance entry
    acceptance = variable(bool, value=False)
    #: A check no rule of the requirements judged fails, rather than log
    #: that it was not judged; the acceptance preset sets it: an acceptance
    #: check must be judged
    require_verdict = variable(bool, value=False)
    #: The kernel's name (its binary's)
    kernel = variable(str)
    noisebench = fixture(noisebench_build, scope='environment')
    #: any environment the partition offers: 'builtin' on the generic ones, a
    #: site's compiler environment on its own (the kernels need only a C compiler)
    valid_prog_environs = ['*']
    time_limit = '10m'
    exclusive_access = True

    @run_after('init')
    def restrict_partition(self):
        self.valid_systems = [self.layout[0]]

    @property
    def cores(self):
        return self.layout[1]

    @run_after('setup')
    def apply_acceptance(self):
        """-S acceptance=true: only the every-core point of the sweep (and
        FWQ's acceptance work kind), at the catalogue's lengths (its keys
        are this check's variables), with a time limit of 1.5 times what
        the kernel measures plus 15 minutes."""
        if not self.acceptance:
            return
        self.require_verdict = True
        # the vendor's signed commitments, unless given another file (-S
        # requirements=FILE): a partition's everyday rules do not accept it
        if not self.requirements:
            self.requirements = os.path.join(REPO, *COMMITMENTS)
        preset = KERNELS['acceptance'][self.kernel]
        ncores = self.current_partition.processor.num_cpus or os.cpu_count()
        self.skip_if(self.cores != ncores, 'the acceptance preset runs on every core')
        work = preset.get('work')
        self.skip_if(work is not None and getattr(self, 'work', work) != work,
                     f'the acceptance preset runs the {work} work kind')
        for key, value in preset.items():
            if key not in ('work', 'measure_s'):
                # a number as the catalogue gives it (a length or a width
                # may be a fraction: selfish's until_ci 0.1 on a default of
                # 0); anything else in the variable's own type
                current = getattr(self, key)
                number = isinstance(value, (int, float)) and isinstance(current, (int, float))
                setattr(self, key, value if number else type(current)(value))
        self.time_limit = f"{-(-int(1.5 * preset['measure_s']) // 60) + 15}m"

    @run_before('run')
    def set_command(self):
        mpi = self.current_partition.launcher_type.registered_name != 'local'
        binary = f'{self.kernel}_mpi' if mpi else self.kernel
        self.executable = os.path.join(self.noisebench.kernels, binary)
        if mpi:
            self.num_tasks = self.num_tasks_per_node = self.cores
            if self.acceptance:
                self.num_tasks = 0  # flexible: every node free in the partition
            self.num_cpus_per_task = 1
            opts = []
        else:
            self.num_tasks = self.num_tasks_per_node = 1
            self.num_cpus_per_task = self.cores
            opts = ['-t', str(self.cores)]
        if self.inject:
            opts += ['--inject', self.inject]
        if self.trace:
            opts += ['--trace']
        if self.requirements_file():
            self.rules_file = os.path.abspath(self.requirements_file())
            opts += ['--requirements', self.rules_file]
        self.executable_opts = opts + self.kernel_args() + ['-o', self.kernel]
        # when the kernel ran (s since the epoch), for ReFrame's own overhead
        self.prerun_cmds = ['date +%s.%N > kernel_started']
        self.postrun_cmds = ['date +%s.%N > kernel_ended']

    @sanity_function
    def validate_run(self):
        # the kernel's last line says the run completed and was written
        return sn.assert_found(rf'(?m)^run kernel={self.kernel} complete=true', self.stdout)

    @performance_function('us')
    def max_p99_9_loss_us(self):
        """The largest over the threads or ranks of the 99.9th percentile of
        the time a sample lost (or of the detours, where a kernel records
        only those): a site bounds the
        tail, which a mean hides."""
        return self.over_ranks('p99_9_loss_us_max')

    def requirements_file(self):
        """The site's requirements file for this check, or ''."""
        return self.requirements or self.current_partition.extras.get(
            'noisebench_requirements', '')

    def verdicts(self):
        """rules_unmet_max of the ranks line: the worst rank's unmet rules,
        as the kernel judged them; none where no rule spoke of the run."""
        # read now, from wherever ReFrame runs the hook: the job's stdout by
        # its path in the stage directory (none in a dry run)
        stdout = os.path.join(self.stagedir, str(self.stdout))
        if not os.path.exists(stdout):
            return []
        return sn.evaluate(sn.extractall(
            rf'(?m){ranks_line(self.kernel)} .*\brules_unmet_max=(\S+)', stdout, 1, float))

    @performance_function('rules')
    def rules_unmet(self):
        """How many of the requirements' rules the worst rank did not meet, as
        the kernel judged them; NaN where no rule judged the run: a missing
        verdict is not judged, never a pass."""
        found = self.verdicts()
        return max(found) if found else float('nan')

    @run_before('performance')
    def set_references(self):
        """The kernel's verdict by the requirements (REQUIREMENTS_MET); every
        other figure is logged, not judged. A run no rule judged has no
        verdict to log: it logs rules_judged 0 instead, which the acceptance
        summary reads as not judged, never as met. With require_verdict (the
        acceptance preset's) it keeps rules_unmet, whose NaN fails it."""
        if self.verdicts() or self.require_verdict:
            self.reference = {'*': dict(REQUIREMENTS_MET)}
            return
        del self.perf_variables['rules_unmet']
        self.perf_variables['rules_judged'] = sn.make_performance_function(sn.defer(0), 'rules')
        self.reference = {}

    def kernel_args(self):
        """The kernel's own options."""
        return []

    def over_ranks(self, figure):
        """FIGURE (KEY_min, KEY_avg, KEY_max) of the line of every thread's
        or rank's figures reduced in the job (the catalogue's ranks_line):
        one line, however many ranks printed theirs."""
        return sn.extractsingle(rf'(?m){ranks_line(self.kernel)} .*\b{figure}=(\S+)',
                                self.stdout, 1, float)

    @run_before('performance')
    def add_cause_variables(self):
        """With --trace: per cause class, the largest share of the detours'
        time it held on any CPU (docs/kernels.md, "Causes"), so a site can
        bound, say, IRQ noise on compute cores."""
        if not self.trace:
            return
        for cls in CAUSE_CLASSES:
            self.perf_variables[f'max_{cls}_percent'] = sn.make_performance_function(
                cause_share(self.stdout, ranks_line(self.kernel), cls), '%')

    @run_before('performance')
    def add_headline(self):
        """The kernel's headline figure, as the catalogue names it (its
        headline: the line it is read from, the key, the unit)."""
        h = KERNELS['kernels'][self.kernel]['headline']
        figure = self.over_ranks if h['line'] == 'ranks' else self.run_summary
        self.perf_variables[h['name']] = sn.make_performance_function(figure(h['key']), h['unit'])

    def run_summary(self, key):
        """KEY of the kernel's one summary line over all ranks (the kernels
        that print one)."""
        return sn.extractsingle(rf'(?m)^{self.kernel} summary .*\b{key}=(\S+)', self.stdout, 1,
                                float)


CAUSE_CLASSES = tuple(KERNELS['cause_classes'])
