"""ReFrame configuration for noisebench's checks on any machine.

    reframe -C reframe/config/generic.py -c reframe/checks -r

The system files in reframe/config/systems/ come first: a host that one of
them names (its `hostnames`) runs as that system, with that site's
partitions and bounds. Any other host is `anynode`: partition `local` (this
machine, no scheduler; always there) and `slurm` (a Slurm job each check;
there when a Slurm controller answers). `--system anynode:local` or
`--system anynode:slurm` picks one. A new system is one file: docs/reframe.md.
"""
import glob
import json
import os
import re
import shutil
import subprocess

import reframe.utility as util

HERE = os.path.dirname(os.path.abspath(__file__))

# The generic partitions know nothing of the node: their bounds are those of
# an ordinary shared machine (a laptop, a VM), loose enough for its daemons
# and its hypervisor, tight enough that a noise taking 70% of each core fails
# every check. A system's own file sets real bounds (per kernel, or per
# '<kernel>_<work>'), or leaves Sequoia's defaults.
COMMODITY_BOUNDS = {
    # two FWQ threads on a VM's vCPUs slow each other down, even the
    # register-only ASM loop (SMT siblings on the host: contention, not the
    # OS, but FWQ sees it): 15-40% on the 2-vCPU VM of the tests, DAXPY up
    # to 105% (one vCPU ran a whole run at two thirds of its speed). A noise
    # taking 70% of each core reads as 2.3. One stall of the VM (up to 150 ms)
    # among 20000 samples of 80 us gives an sd of 12.
    'fwq': {'max_scaled_noise_mean': (1.5, None, 0.0, ''),
            'max_scaled_noise_sd': (20.0, None, 0.0, ''),
            'max_kurtosis': (1e6, None, 0.0, '')},
    'ftq': {'noise_fraction': (0.25, None, 0.0, '')},
    # measured against the fastest iteration, the run's too, P-SNAP counts the
    # VM's changes of speed: up to 11% here in bursts. 70% of each core
    # stolen reads over 200%.
    'psnap': {'os_noise_percent': (25.0, None, 0.0, '%')},
    'selfish': {'cpu_overhead_percent': (10.0, None, 0.0, '%')},
}


def generic_bounds():
    """COMMODITY_BOUNDS, or the bounds in the JSON file that the environment
    variable NOISEBENCH_REFERENCES names (the same shape: {kernel or
    kernel_work: {figure: [reference, lower, upper, unit]}}), e.g. bounds a
    site took from a reference run of its own."""
    path = os.environ.get('NOISEBENCH_REFERENCES')
    if not path:
        return COMMODITY_BOUNDS
    with open(path) as f:
        return json.load(f)


def system_files():
    systems, environments = [], []
    for path in sorted(glob.glob(os.path.join(HERE, 'systems', '*.py'))):
        module = util.import_module_from_file(path)
        systems += module.site_configuration.get('systems', [])
        environments += module.site_configuration.get('environments', [])
    return systems, environments


def slurm_node_cpus():
    """The CPUs of the smallest node in Slurm's default partition, or None
    when no Slurm controller answers. A check's core counts are those of a
    compute node, not of the login node ReFrame runs on."""
    if not shutil.which('sinfo'):
        return None
    try:
        done = subprocess.run(['sinfo', '-h', '-o', '%P %c'], capture_output=True, text=True,
                              timeout=15)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        return None
    # '%c' is the partition's smallest node with a '+' when its nodes differ
    cpus = [int(c.rstrip('+')) for p, c in (line.split() for line in done.stdout.splitlines())
            if p.endswith('*')]
    return cpus[0] if cpus else None


def slurm_scheduler():
    """ReFrame's 'slurm' asks sacct for a finished job; a cluster without
    accounting gets 'squeue', which polls the queue instead."""
    try:
        done = subprocess.run(['scontrol', 'show', 'config'], capture_output=True, text=True,
                              timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return 'slurm'
    none = re.search(r'(?m)^AccountingStorageType\s*=\s*accounting_storage/none', done.stdout)
    return 'squeue' if none else 'slurm'


_systems, _environments = system_files()
_slurm_cpus = slurm_node_cpus()

SLURM_PARTITION = {
    'name': 'slurm',
    'descr': "Slurm's default partition, srun with PMIx",
    'scheduler': slurm_scheduler() if _slurm_cpus else 'slurm',
    'launcher': 'srun',
    'environs': ['builtin'],
    'max_jobs': 1,
    'env_vars': [['SLURM_MPI_TYPE', 'pmix'],
                 ['OMPI_ALLOW_RUN_AS_ROOT', '1'],
                 ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1']],
    'extras': {'noisebench_references': generic_bounds()},
    'processor': {'num_cpus': _slurm_cpus},
}

site_configuration = {
    'systems': _systems + [
        {
            'name': 'anynode',
            'descr': 'Any machine: here, or through its Slurm',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'local',
                    'descr': 'This machine, no scheduler (one check at a time)',
                    'scheduler': 'local',
                    'launcher': 'local',
                    'environs': ['builtin'],
                    # one check at a time: a noise check needs the cores to itself
                    'max_jobs': 1,
                    'extras': {'noisebench_references': generic_bounds()},
                },
            ] + ([SLURM_PARTITION] if _slurm_cpus else []),
        },
    ],
    'environments': _environments + [
        {'name': 'builtin', 'cc': 'cc', 'target_systems': ['anynode']},
    ],
    # every session's figures in ReFrame's results database (RFM_SQLITE_DB_FILE,
    # by default ~/.reframe/reports/results.db): --performance-compare
    # shows what an update changed (docs/site.md)
    'storage': [{'enable': True}],
    'logging': [
        {
            'handlers_perflog': [
                {
                    'type': 'filelog',
                    'prefix': '%(check_system)s/%(check_partition)s',
                    'level': 'info',
                    'format': ('%(check_job_completion_time)s|%(check_result)s|'
                               '%(check_name)s|%(check_system)s:%(check_partition)s|'
                               'jobid=%(check_jobid)s|%(check_perfvalues)s'),
                    'format_perfvars': ('%(check_perf_var)s=%(check_perf_value)s '
                                        '%(check_perf_unit)s '
                                        '(ref %(check_perf_ref)s, '
                                        'upper %(check_perf_upper_thres)s)|'),
                    'append': True,
                }
            ]
        }
    ],
}
