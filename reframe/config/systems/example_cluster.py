"""A production system's file, as a template: copy it to
reframe/config/systems/<system>.py and set its hostnames, partitions and
bounds. Partitions without `noisebench_references` hold FWQ to Sequoia's
"diminutive noise" criteria (the checks' default)."""

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
                    'descr': 'Login nodes: site bounds, noisy by design',
                    'scheduler': 'local',
                    'launcher': 'local',
                    'environs': ['gnu'],
                    'extras': {
                        'noisebench_references': {
                            'fwq': {'max_scaled_noise_mean': (0.01, None, 0.0, ''),
                                    'max_scaled_noise_sd': (0.1, None, 0.0, ''),
                                    'max_kurtosis': (1000, None, 0.0, '')},
                            'ftq': {'noise_fraction': (0.01, None, 0.0, '')},
                            'psnap': {'os_noise_percent': (2.0, None, 0.0, '%')},
                            'selfish': {'cpu_overhead_percent': (2.0, None, 0.0, '%')},
                        }
                    },
                },
            ],
        },
    ],
    'environments': [
        {'name': 'gnu', 'modules': ['GCC', 'OpenMPI'], 'cc': 'gcc',
         'target_systems': ['example']},
    ],
}
