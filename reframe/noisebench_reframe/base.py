"""Base classes of the noisebench ReFrame checks, after hpctestlib: a build
fixture, a run base that knows how to start a kernel on a partition and how
to hold it to its references, and one base per kernel. The leaves in
reframe/checks/ only pick parameters and tags."""
import os

import reframe as rfm
import reframe.core.runtime as rt
import reframe.utility.sanity as sn
from reframe.core.builtins import (fixture, parameter, performance_function, run_after,
                                   run_before, sanity_function, variable)

from .catalogue import KERNELS, REPO, cause_share, ranks_line

# Sequoia RFP's "diminutive noise": the default FWQ bounds of an acceptance
# run (value, lower, upper, unit): the figure must stay below the value.
SEQUOIA_REFERENCES = {f'max_{name}': (float(limit), None, 0.0, '')
                      for name, limit in KERNELS['sequoia_limits'].items()}


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
            self.build_system.commands = [f'test -x {self.bin_dir}/fwq']
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
        return sn.path_exists(os.path.join(self.kernels, 'fwq'))


class noise_run_base(rfm.RunOnlyRegressionTest):
    """One kernel on `cores` CPUs of one node: as threads where the partition
    launches locally, as MPI ranks (<kernel>_mpi) under srun."""

    #: (partition, cores): threads or ranks, up to every core of a node
    layout = parameter(core_counts(), fmt=lambda x: x[1])
    #: Busy-wait D us every P us on every thread ("P:D"): a known noise
    #: that an acceptance check must catch; empty: none
    inject = variable(str, value='')
    #: Attribute every detour to its cause (--trace: root or tracefs access);
    #: adds a max_<class>_percent performance variable per cause class
    trace = variable(bool, value=False)
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

    @run_before('run')
    def set_command(self):
        mpi = self.current_partition.launcher_type.registered_name != 'local'
        binary = f'{self.kernel}_mpi' if mpi else self.kernel
        self.executable = os.path.join(self.noisebench.kernels, binary)
        if mpi:
            self.num_tasks = self.num_tasks_per_node = self.cores
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
        the time a sample lost (selfish: of its detours): a site bounds the
        tail, which a mean hides."""
        return self.over_ranks('p99_9_loss_us_max')

    @run_before('performance')
    def set_references(self):
        """The partition's bounds (extras 'noisebench_references' of the
        system's config file, for '<kernel>_<work>' or '<kernel>'), else the
        kernel's default ones."""
        bounds = self.current_partition.extras.get('noisebench_references', {})
        work = getattr(self, 'work', None)
        chosen = bounds.get(f'{self.kernel}_{work}', bounds.get(self.kernel))
        refs = chosen if chosen is not None else self.default_references()
        self.reference = {'*': {name: tuple(ref) for name, ref in refs.items()}}

    def kernel_args(self):
        """The kernel's own options."""
        return []

    def default_references(self):
        return {}

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

    def run_summary(self, key):
        """KEY of the kernel's one summary line over all ranks (P-SNAP, selfish)."""
        return sn.extractsingle(rf'(?m)^{self.kernel} summary .*\b{key}=(\S+)', self.stdout, 1,
                                float)


CAUSE_CLASSES = tuple(KERNELS['cause_classes'])


class speed_figures(rfm.RegressionMixin):
    """Detours or running slow (src/lib/system/speed.h), over the threads or ranks:
    a site can bound each, e.g. slow running on compute cores."""

    @performance_function('%')
    def max_detour_percent(self):
        return self.over_ranks('detour_percent_max')

    @performance_function('%')
    def max_slow_percent(self):
        return self.over_ranks('slow_percent_max')


class fwq_base(noise_run_base, speed_figures):
    """FWQ: 2^work_bits loops of a work kind (`work`: multiiter, asm, daxpy,
    a parameter of the leaf), timed `samples` times a thread; Sequoia's three
    figures over the threads."""

    #: 2^work_bits work loops a sample; 0: the work kind's default in
    #: kernels.json (about 70-100 us a sample on ~3 GHz)
    work_bits = variable(int, value=0)
    #: Samples a thread
    samples = variable(int, value=20000)
    kernel = 'fwq'

    def kernel_args(self):
        bits = KERNELS['kernels']['fwq']['work_bits']
        work_bits = self.work_bits or bits.get(self.work, bits['default'])
        return ['--work', self.work, '-w', str(work_bits), '-n', str(self.samples)]

    def default_references(self):
        return SEQUOIA_REFERENCES

    @performance_function('')
    def max_scaled_noise_mean(self):
        return self.over_ranks('scaled_noise_mean_max')

    @performance_function('')
    def max_scaled_noise_sd(self):
        return self.over_ranks('scaled_noise_sd_max')

    @performance_function('')
    def max_kurtosis(self):
        return self.over_ranks('kurtosis_max')


class ftq_base(noise_run_base):
    """FTQ: work loops counted in each quantum at `frequency_hz` (a parameter
    of the leaf); the share of the best quantum's work missing, and the
    spectrum's strongest line."""

    #: Seconds of quanta a thread
    seconds = variable(float, value=2.0)
    kernel = 'ftq'

    def kernel_args(self):
        return ['--freq', str(self.frequency_hz), '--seconds', str(self.seconds)]

    @performance_function('')
    def noise_fraction(self):
        return self.over_ranks('scaled_noise_mean_max')

    @performance_function('Hz')
    def largest_peak_hz(self):
        """The strongest line of the counts' spectrum over the threads or
        ranks, each of which found its own in its counts (0 0 when none
        stood out; docs/kernels.md): its frequency and share, reduced in the
        job onto the kernel's summary line."""
        return self.run_summary('line_hz')

    @performance_function('%')
    def largest_peak_share(self):
        return self.run_summary('line_share_percent')


class psnap_base(noise_run_base, speed_figures):
    """P-SNAP: a loop calibrated to `granularity_us`, `reps` times on every
    thread or rank; PRACE's OS noise % and the correlation with rank 0."""

    #: Calibrated iteration length (us)
    granularity_us = variable(int, value=1000)
    #: Iterations
    reps = variable(int, value=2000)
    kernel = 'psnap'

    def kernel_args(self):
        return ['-n', str(self.reps), '-g', str(self.granularity_us)]

    @performance_function('%')
    def os_noise_percent(self):
        return self.run_summary('os_noise_percent')

    @run_before('performance')
    def drop_correlation_of_one(self):
        # one rank has nothing to correlate with: no figure rather than NaN
        if self.cores == 1:
            self.perf_variables.pop('max_correlation', None)

    @performance_function('')
    def max_correlation(self):
        # the largest |correlation| of a rank's iteration times with rank 0's
        return self.run_summary('max_correlation')


class selfish_base(noise_run_base, speed_figures):
    """Selfish detour: every iteration of a tight loop longer than 9x the
    shortest, for `seconds`; Netgauge's CPU overhead and detours a second."""

    #: Seconds of measurement
    seconds = variable(int, value=3)
    #: Detours a rank can record
    detours = variable(int, value=1000000)
    kernel = 'selfish'

    def kernel_args(self):
        return ['--seconds', str(self.seconds), '--detours', str(self.detours)]

    @performance_function('%')
    def cpu_overhead_percent(self):
        return self.run_summary('cpu_overhead_percent')

    @performance_function('1/s')
    def detours_per_s(self):
        return self.run_summary('detours_per_s')
