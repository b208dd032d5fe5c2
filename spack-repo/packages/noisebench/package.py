# Copyright the noisebench developers.
#
# SPDX-License-Identifier: (Apache-2.0 OR MIT)

import re

from spack.package import *

try:  # Spack 1.x: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:  # Spack 0.x: spack.package provides them
    pass


class Noisebench(CMakePackage):
    """OS-noise microbenchmarks: FWQ and FTQ from the Sequoia/ASC suite (work
    kinds MULTIITER, ASM, DAXPY; pthreads and OpenMP), P-SNAP and Netgauge's
    selfish detour (threads, or MPI ranks), each writing its samples and a JSON
    description of the run, with noise-info to calibrate the timer."""

    homepage = "https://github.com/noisebench/noisebench"
    url = "https://github.com/noisebench/noisebench/archive/refs/tags/v0.1.0.tar.gz"
    git = "https://github.com/noisebench/noisebench.git"

    maintainers("noisebench")

    license("Apache-2.0 OR MIT")

    version("main", branch="main")
    version("0.1.0", sha256="5b6d65dd39909f713d782b650c1b9241c4ffb40f8eef26224466cffbb5cecf33")

    variant(
        "work",
        values=any_combination_of("multiiter", "asm", "daxpy").with_default(
            "multiiter,daxpy"
        ),
        description="Work loops compiled into FWQ and FTQ (asm: x86-64 only)",
    )
    variant("openmp", default=True, description="Build the OpenMP kernels fwq_omp, ftq_omp")
    variant("mpi", default=True, description="Build the MPI kernels psnap_mpi, selfish_mpi")
    variant(
        "sanitize",
        default=False,
        description="Build with AddressSanitizer and UndefinedBehaviorSanitizer (testing)",
    )

    depends_on("c", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("mpi", when="+mpi")

    # the ASM loop is register-only x86-64 assembly
    conflicts("work=asm", when="target=aarch64:", msg="the asm work loop is x86-64 only")
    conflicts("work=asm", when="target=ppc64le:", msg="the asm work loop is x86-64 only")
    conflicts("work=asm", when="target=riscv64:", msg="the asm work loop is x86-64 only")

    def cmake_args(self):
        return [
            self.define_from_variant("NOISEBENCH_WORK", "work"),
            self.define_from_variant("NOISEBENCH_OPENMP", "openmp"),
            self.define_from_variant("NOISEBENCH_MPI", "mpi"),
            self.define_from_variant("NOISEBENCH_SANITIZE", "sanitize"),
        ]

    # Stand-alone tests: each kernel briefly, with a noise injected on
    # purpose (a busy-wait of 200 us every 1 ms: 20% of each core), which it
    # must report; the machine's own noise is a few % at most.

    def _run(self, kernel, *args, mpi=False):
        exe = which(join_path(self.prefix.bin, kernel))
        if mpi:
            exe = which(join_path(self.spec["mpi"].prefix.bin, "mpiexec"))
            # Open MPI refuses root unless told (test machines often are)
            exe.add_default_env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            exe.add_default_env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            args = ("-n", "2", join_path(self.prefix.bin, kernel)) + args
        return exe(*args, "--inject", "1000:200", "-o", kernel, output=str, error=str)

    @staticmethod
    def _figures(out, key):
        return [float(v) for v in re.findall(rf"\b{key}=(\S+)", out)]

    def test_fwq(self):
        """fwq reports an injected 20% noise with every work kind built"""
        for work in self.spec.variants["work"].value:
            with test_part(self, f"test_fwq_{work}", purpose=f"fwq --work {work}"):
                out = self._run("fwq", "-n", "3000", "-w", "9" if work == "daxpy" else "12",
                                "--work", work)
                noise = self._figures(out, "scaled_noise_mean")
                assert noise and min(noise) > 0.1, f"injected noise not found: {noise}"

    def test_ftq(self):
        """ftq reports an injected 20% noise as missing work"""
        out = self._run("ftq", "--freq", "10000", "-n", "10000")
        missing = self._figures(out, "scaled_noise_mean")
        assert missing and min(missing) > 0.1, f"injected noise not found: {missing}"

    def test_psnap(self):
        """psnap reports an injected 20% noise as OS noise"""
        out = self._run("psnap", "-n", "300")
        noise = self._figures(out, "os_noise_percent")
        assert noise and noise[0] > 10, f"injected noise not found: {noise}"

    def test_selfish(self):
        """selfish records an injected 20% noise as CPU overhead"""
        out = self._run("selfish", "--seconds", "1")
        overhead = self._figures(out, "cpu_overhead_percent")
        assert overhead and overhead[-1] > 10, f"injected noise not found: {overhead}"

    def test_mpi_kernels(self):
        """psnap_mpi and selfish_mpi find the injected noise on 2 ranks"""
        if not self.spec.satisfies("+mpi"):
            raise SkipTest("built without MPI")
        out = self._run("psnap_mpi", "-n", "300", mpi=True)
        assert self._figures(out, "os_noise_percent")[0] > 10, out
        out = self._run("selfish_mpi", "--seconds", "1", mpi=True)
        assert self._figures(out, "cpu_overhead_percent")[-1] > 10, out
