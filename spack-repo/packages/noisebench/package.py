# Copyright the noisebench developers.
#
# SPDX-License-Identifier: (Apache-2.0 OR MIT)

import json
import re

from spack.package import *

try:  # Spack 1.x: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:  # Spack 0.x: spack.package provides them
    pass


class Noisebench(CMakePackage):
    """OS-noise microbenchmarks: FWQ and FTQ from the Sequoia/ASC suite (work
    kinds MULTIITER, ASM, DAXPY), P-SNAP and Netgauge's selfish detour, each as
    threads (pthreads; FWQ and FTQ also OpenMP) and as MPI ranks, writing its
    samples and a JSON description of the run, with noise-info to calibrate
    the timer."""

    homepage = "https://github.com/noisebench/noisebench"
    git = "https://github.com/noisebench/noisebench.git"

    maintainers("noisebench")

    license("Apache-2.0 OR MIT", checked_by="noisebench")

    # a release from its git tag; docs/releasing.md adds the tarball's sha256
    version("main", branch="main")
    version("1.0.0", tag="v1.0.0")

    variant(
        "work",
        values=any_combination_of("multiiter", "increment", "daxpy").with_default(
            "multiiter,increment,daxpy"
        ),
        description="Portable work loops compiled into FWQ, FTQ and P-SNAP",
    )
    # the register-only x86-64 loop: on by default wherever it builds
    variant(
        "asm", default=True, when="target=x86_64:", description="Also the x86-64 asm work loop"
    )
    variant("openmp", default=True, description="Build the OpenMP kernels fwq_omp, ftq_omp")
    variant("mpi", default=True, description="Build every kernel's MPI build, <kernel>_mpi")
    variant(
        "sanitize",
        default=False,
        description="Build with AddressSanitizer and UndefinedBehaviorSanitizer (testing)",
    )

    variant(
        "report",
        default=False,
        description="The R package and noise-report, the command that writes the report",
    )

    depends_on("c", type="build")
    # the R package's imports, all in Spack's builtin repository: its FFT is
    # R's own where R's fftw is missing, which Spack does not package
    with when("+report"):
        depends_on("r@4.1:", type=("build", "run"))
        for r_package in ("r-data-table", "r-ggplot2", "r-jsonlite", "r-htmltools", "r-scales"):
            depends_on(r_package, type=("build", "run"))
    depends_on("cmake@3.19:", type="build")  # string(JSON)
    depends_on("mpi", when="+mpi")

    def _catalogue(self):
        """The kernels this build installed, as their catalogue describes them"""
        with open(join_path(self.prefix.share.noisebench, "kernels.json")) as f:
            return json.load(f)["kernels"]

    # after the install: every kernel of the catalogue, in each of its builds
    @property
    def sanity_check_is_file(self):
        kernels = self._catalogue()
        names = list(kernels) + ["bsp", "noise-info", "noise-check", "t_fwq", "t_ftq"]
        if self.spec.satisfies("+mpi"):
            names += [f"{k}_mpi" for k in kernels] + ["bsp_mpi"]
        if self.spec.satisfies("+openmp"):
            names += [f"{k}_omp" for k, entry in kernels.items() if entry.get("openmp")]
        if self.spec.satisfies("+report"):
            names += ["noise-report"]
        return [join_path("bin", name) for name in names]

    def _work_kinds(self):
        kinds = [w for w in self.spec.variants["work"].value if w != "none"]
        return kinds + (["asm"] if self.spec.satisfies("+asm") else [])

    def cmake_args(self):
        return [
            self.define("NOISEBENCH_WORK", self._work_kinds()),
            self.define_from_variant("NOISEBENCH_OPENMP", "openmp"),
            self.define_from_variant("NOISEBENCH_MPI", "mpi"),
            self.define_from_variant("NOISEBENCH_SANITIZE", "sanitize"),
            # the R package only with +report, never from an R not declared
            self.define_from_variant("NOISEBENCH_ANALYSIS", "report"),
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

    def _work_bits(self, work):
        """FWQ's work amount for a kind, from the kernels' description"""
        bits = self._catalogue()["fwq"]["work_bits"]
        return bits.get(work, bits["default"])

    @staticmethod
    def _figures(out, key):
        return [float(v) for v in re.findall(rf"\b{key}=(\S+)", out)]

    @staticmethod
    def _least_over_ranks(out, key):
        """KEY's smallest over the threads or ranks: the ranks line, their
        figures reduced in the job (the catalogue's ranks_line)"""
        found = re.search(rf"(?m)^ranks kernel=.* {key}_min=(\S+)", out)
        assert found, f"no {key}_min on a ranks line:\n{out}"
        return float(found.group(1))

    def test_fwq(self):
        """fwq reports an injected 20% noise with every work kind built"""
        for work in self._work_kinds():
            with test_part(self, f"test_fwq_{work}", purpose=f"fwq --work {work}"):
                out = self._run("fwq", "-n", "3000", "-w", str(self._work_bits(work)),
                                "--work", work)
                noise = self._least_over_ranks(out, "scaled_noise_mean")
                assert noise > 0.1, f"injected noise not found: {noise}"

    def test_ftq(self):
        """ftq reports an injected 20% noise as missing work"""
        out = self._run("ftq", "--freq", "10000", "-n", "10000")
        missing = self._least_over_ranks(out, "scaled_noise_mean")
        assert missing > 0.1, f"injected noise not found: {missing}"

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

    def test_bsp(self):
        """bsp, the bulk-synchronous application, is slowed by the injected noise"""
        out = self._run("bsp", "-t", "2", "-n", "300")
        slowdown = self._figures(out, "slowdown")
        assert slowdown and slowdown[-1] > 1.1, f"injected noise not felt: {slowdown}"

    def test_mpi_kernels(self):
        """every MPI kernel finds the injected noise on 2 ranks"""
        if not self.spec.satisfies("+mpi"):
            raise SkipTest("built without MPI")
        out = self._run("fwq_mpi", "-n", "3000", mpi=True)
        assert self._least_over_ranks(out, "scaled_noise_mean") > 0.1, out
        out = self._run("ftq_mpi", "-n", "10000", mpi=True)
        assert self._least_over_ranks(out, "scaled_noise_mean") > 0.1, out
        out = self._run("psnap_mpi", "-n", "300", mpi=True)
        assert self._figures(out, "os_noise_percent")[0] > 10, out
        out = self._run("selfish_mpi", "--seconds", "1", mpi=True)
        assert self._figures(out, "cpu_overhead_percent")[-1] > 10, out
