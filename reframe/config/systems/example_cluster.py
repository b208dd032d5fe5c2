"""A production system's file, as a template: copy it to
reframe/config/systems/<system>.py and set its hostnames, partitions and
requirements. Partitions without `noisebench_requirements` hold FWQ to
Sequoia's "diminutive noise" criteria (the kernels' default)."""

site_configuration = {
    'systems': [
        {
            'name': 'example',
            'descr': 'An example Tier-0 system',
            # the login nodes' host names; none here, so it never matches
            'hostnames': [r'^example-login\d+$'],
            'modules_system': 'lmod',
            'partitions': [
                {
                    'name': 'compute',
                    'descr': 'Compute nodes, tuned kernel: Sequoia bounds',
                    'scheduler': 'slurm',
                    'launcher': 'srun',
                    'access': ['--partition=compute', '--account=acceptance'],
                    'environs': ['gnu'],
                    'env_vars': [['SLURM_MPI_TYPE', 'pmix']],
                    'processor': {'num_cpus': 128},
                },
                {
                    'name': 'login',
                    'descr': 'Login nodes: site requirements, noisy by design',
                    'scheduler': 'local',
                    'launcher': 'local',
                    'environs': ['gnu'],
                    # the login nodes' own rules (docs/analysis.md, Requirements)
                    'extras': {'noisebench_requirements': '/etc/noisebench/login.requirements'},
                },
            ],
        },
    ],
    'environments': [
        {'name': 'gnu', 'modules': ['GCC', 'OpenMPI'], 'cc': 'gcc',
         'target_systems': ['example']},
    ],
}
