"""ReFrame configuration for noisebench's checks on any machine.

    reframe -C reframe/config/generic.py -c reframe/checks -r

The system files in reframe/config/systems/ come first: a host that one of
them names (its `hostnames`) runs as that system, with that site's
partitions and requirements. Any other host is `anynode`: partition `local` (this
machine, no scheduler; always there) and `slurm` (a Slurm job each check;
there when a Slurm controller answers). `--system anynode:local` or
`--system anynode:slurm` picks one. A new system is one file: docs/reframe.md.
"""
import glob
import os
import re
import shutil
import subprocess

import reframe.utility as util

HERE = os.path.dirname(os.path.abspath(__file__))

# The generic partitions know nothing of the node: their requirements are
# those of an ordinary shared machine (commodity.requirements), unless the
# environment's NOISEBENCH_REQUIREMENTS names a site's own.
COMMODITY_REQUIREMENTS = os.path.join(HERE, 'commodity.requirements')


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
    'extras': {'noisebench_requirements': COMMODITY_REQUIREMENTS},
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
                    'extras': {'noisebench_requirements': COMMODITY_REQUIREMENTS},
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
                               'jobid=%(check_jobid)s|rules=%(check_rules_file)s|'
                               '%(check_perfvalues)s'),
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
