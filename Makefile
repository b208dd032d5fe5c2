# noisebench: `make` builds, `make run` surveys this machine, `make check` is
# the quick way in, `make test` runs every test.  run and test install what is missing first (scripts/setup.sh,
# Debian); `make` alone only checks for its tools (scripts/check_tools.sh).

BUILD      ?= build
ASAN_BUILD ?= build-asan
ARM_BUILD  ?= build-aarch64
JOBS       ?= $(shell nproc)
PYTEST      = .venv/bin/python -m pytest -q -p no:cacheprovider

.PHONY: all single threads build build-asan setup run check check-functional check-r test test-release test-sanitize test-aarch64 \
        test-analysis test-beside test-timing test-load test-fuzz fuzz asm bench dist clean

all: build

# Sequoia's build targets, for its users' scripts: `make single` the
# sequential fwq and ftq, `make threads` the threaded t_fwq and t_ftq (here
# the same binaries: -t N threads, one a CPU), into build/bin/.
single threads:
	@scripts/check_tools.sh
	cmake -S . -B $(BUILD) -DNOISEBENCH_WERROR=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target fwq ftq
	@echo "$(BUILD)/bin/: $(if $(filter threads,$@),t_fwq t_ftq (-t N: a thread a CPU),fwq ftq)"

build:
	@scripts/check_tools.sh
	cmake -S . -B $(BUILD) -DNOISEBENCH_WERROR=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

asm: build
	cmake --build $(BUILD) --target asm

run:
	@scripts/setup.sh run
	$(MAKE) --no-print-directory build
	scripts/survey.sh $(BUILD)/bin

# The quick way in, installing nothing: the build, then side by side the C
# unit tests with the functional tests that need no Slurm, browser or quiet
# CPU (pytest.ini's markers), and the R package's tests on the package the
# build installed; `make test` installs what it needs and runs everything.
check: build
	@test -x .venv/bin/python || { echo "make check: no .venv: run scripts/setup.sh test once"; exit 2; }
	$(MAKE) --no-print-directory -j2 check-functional check-r

# Two pytest workers, a test file each at a time (their module fixtures
# stay whole); the slowdown model's one periodic shape: its every shape runs
# the same code, and the others (30 s) run in make test's test-beside.
check-functional:
	cd $(BUILD) && ctest --output-on-failure
	NB_BIN_DIR=$(BUILD)/bin $(PYTEST) -n 2 --dist loadfile \
	  -m "not timing and not slurm and not browser and not harness and not scale" \
	  -k "not test_scale_csv_agrees_with_the_simulation or periodic" tests

# testthat on the installed package, quiet unless a test fails; on one
# thread of data.table's, so that the functional tests keep a CPU (the
# tests of the forked workers ask for two themselves)
R_TESTS = testthat::test_dir("analysis/tests/testthat", package = "noisebench", \
  load_package = "installed", reporter = "summary", stop_on_failure = TRUE)
check-r:
	@R_LIBS=$(abspath $(BUILD))/lib/R R_DATATABLE_NUM_THREADS=1 Rscript -e '$(R_TESTS)' >$(BUILD)/r-tests.log 2>&1 \
	  && echo "R tests: passed ($(BUILD)/r-tests.log)" \
	  || { cat $(BUILD)/r-tests.log; echo "R tests: FAILED"; exit 1; }

# Every test, each on the build it proves most on, in two phases. First, side
# by side, what measures no noise and needs no quiet CPU: R CMD check, the
# aarch64 build, the functional tests under ASan/UBSan, and the release
# build's tests that need none either (test-beside). Then, alone on the
# machine (the timing tests need both cores), the rest of the release
# build's own: the timing tests, JUBE and ReFrame driving the release
# kernels (ReFrame's bounds are a quiet run's), the scale tests.
test:
	@scripts/setup.sh test
	$(MAKE) --no-print-directory build
	@rm -f .cache/cannot-tell.log
	$(MAKE) --no-print-directory -j4 test-analysis test-aarch64 test-sanitize test-beside test-fuzz
	$(MAKE) --no-print-directory test-release
	@scripts/cannot_tell.py

build-asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DNOISEBENCH_SANITIZE=ON \
	      -DNOISEBENCH_WERROR=ON -DNOISEBENCH_ANALYSIS=OFF >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The R package: R CMD check, which runs its tests (testthat: synthetic runs
# with known answers); a note or a warning fails as an error does.
test-analysis:
	cmake --build $(BUILD) --target r_check
	@grep -q '^Status: OK$$' $(BUILD)/analysis/noisebench.Rcheck/00check.log \
	  || { echo "R CMD check: not clean, see $(BUILD)/analysis/noisebench.Rcheck/00check.log"; exit 1; }

# The tests whose subject is the release build and which need the machine
# (or its build tree: the loops' assembly is made in it) to themselves
# (pytest.ini's markers): the timing ones, the harness's, the scale ones,
# the assembly's. The rest of the release build's own run in test-beside,
# the functional tests under the sanitizers (test-sanitize) and on this build
# in `make check`.
RELEASE_TESTS = -m "timing or harness or scale or release" -k "not test_scale_model and not make_single"
test-release:
	cd $(BUILD) && ctest --output-on-failure
	NB_BIN_DIR=$(BUILD)/bin $(PYTEST) --durations=30 $(RELEASE_TESTS) tests

# The release build's tests that need no quiet CPU (reports read in headless
# Chromium, the slowdown model's every shape, Sequoia's make targets): beside the sanitizer suite,
# so in a pytest directory of their own. Not the machine code's: `make asm`
# builds in the build tree, which R CMD check's build uses at the same time.
RELEASE_BESIDE = -m "(browser or release) and not scale and not timing and not harness" \
                 -k "not test_loops_asm and not machine_code"
test-beside:
	mkdir -p .cache
	NB_BIN_DIR=$(BUILD)/bin $(PYTEST) --basetemp=.cache/pytest-beside $(RELEASE_BESIDE) tests

# The timing tests alone, on the release build (the proof of docs/testing.md:
# several rounds in a row, the suite's daemons still running).
test-timing:
	NB_BIN_DIR=$(BUILD)/bin $(PYTEST) -m timing tests

# The functional tests under ASan/UBSan: all but those whose C the others
# run too (a browser reading a report, 128 ranks at once) and the timing
# tests, which run on the release build. The slow unwinder on a fatal
# signal: a jump to address 0 leaves the fast one no frame to start from.
# Open MPI's memory patcher rewrites munmap and friends that ASan
# intercepts too, a known conflict (open-mpi/ompi#13069, #12819; its
# maintainers' advice for sanitized builds: leave it out). A rank that dies
# at address 0 in Open MPI's start-up (tests/nbtest/launch.py) leaves its
# core in .cache/foreign-crash-cores for gdb: ASan dumps one when it
# aborts, where the limit allows.
test-sanitize: build-asan
	cd $(ASAN_BUILD) && ctest --output-on-failure
	ulimit -c unlimited 2>/dev/null; \
	NB_SANITIZE=1 NB_BIN_DIR=$(ASAN_BUILD)/bin OMPI_MCA_memory=^patcher \
	  NB_FOREIGN_CRASH_CORES=$(CURDIR)/.cache/foreign-crash-cores \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:disable_coredump=0:fast_unwind_on_fatal=0 \
	  UBSAN_OPTIONS=print_stacktrace=1 \
	  $(PYTEST) --durations=10 -m "not timing and not browser and not scale" tests

# The timing tests LOAD_ROUNDS times in a row under a noise generator of our
# own, on the bad day the gate must hold on (tests/load.py --bad-day). Each
# test's cannot-tells are counted; one that could not tell in every round
# fails, for it never answered.
LOAD_ROUNDS ?= 3
test-load:
	@scripts/setup.sh test
	$(MAKE) --no-print-directory build
	mkdir -p .cache
	@rm -f .cache/cannot-tell.log
	@rc=0; tests/under_load.sh $(LOAD_ROUNDS) --bad-day || rc=1; \
	  scripts/cannot_tell.py --rounds $(LOAD_ROUNDS) || rc=1; exit $$rc

# aarch64 must compile (and link) warning-free: the ASM kind drops out there.
test-aarch64:
	cmake -S . -B $(ARM_BUILD) -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 \
	      -DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc -DNOISEBENCH_WERROR=ON >/dev/null
	cmake --build $(ARM_BUILD) -j $(JOBS)
	@echo "aarch64: built $$(ls $(ARM_BUILD)/bin | tr '\n' ' ')"

bench:
	@scripts/setup.sh test
	$(MAKE) --no-print-directory build
	benchmarks/loop_cost.py $(BUILD)/bin
	benchmarks/selfish_overhead.py $(BUILD)/bin
	benchmarks/trace_cost.py $(BUILD)/bin
	Rscript benchmarks/analysis_speed.R
	mkdir -p .cache/bench && $(BUILD)/bin/fwq -n 20000 -o .cache/bench/fwq >/dev/null
	Rscript benchmarks/survey_scale.R .cache/bench/fwq.json
	benchmarks/stream_cost.py $(BUILD)/bin
	rm -rf .cache/bench/soak && mkdir -p .cache/bench/soak
	$(BUILD)/bin/fwq -t 0 --stream --seconds 3 -o .cache/bench/soak/soak >/dev/null
	Rscript benchmarks/stream_report.R .cache/bench/soak
	benchmarks/jube_overhead.py $(BUILD)/bin
	benchmarks/reframe_overhead.py
	benchmarks/bsp_validate.py $(BUILD)/bin
	benchmarks/report_time.py $(BUILD)/bin
	benchmarks/check_rates.py $(BUILD)/bin
	benchmarks/limits_from.py $(BUILD)/bin
	benchmarks/probes.py $(BUILD)/bin

# Every C parser's fuzz target (tests/fuzz/, clang's libFuzzer under ASan and
# UBSan) from its seed corpus: a smoke of 8 s each in make test, 60 s each
# here; any crash, leak or sanitizer report fails (scripts/fuzz.sh)
test-fuzz:
	scripts/fuzz.sh 8
fuzz:
	@scripts/setup.sh test
	scripts/fuzz.sh 60

# the release tarball of HEAD and its sha256, dist/noisebench-VERSION.tar.gz
# (docs/releasing.md)
dist:
	scripts/dist.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(ARM_BUILD) build-fuzz
