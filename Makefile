# Targets a newcomer guesses. `make dev` once, then edit and rerun: the
# editable install rebuilds the extension on import.
PYTHON ?= python
PIP ?= $(PYTHON) -m pip
CTEST_BUILD ?= build/ctest
TSAN_BUILD ?= build/tsan
ASAN_BUILD ?= build/asan
# The Python run under ASan: the test files that drive the extension, a
# compiled NumbaModel (numba's JIT runs under ASan as is) included.
ASAN_PY_TESTS ?= tests/runtime/test_package_import.py tests/runtime/test_phold.py \
	tests/runtime/test_parallel_equivalence.py tests/reliability/test_contract_violations.py \
	tests/reliability/test_bad_input.py tests/reliability/test_env_faults.py \
	tests/reliability/test_stateful_fuzz.py tests/vector/test_vector_env.py \
	tests/envs/test_pcs_v0.py tests/envs/test_aircraft_v0.py tests/models/test_python_model.py \
	tests/models/test_numba_model.py tests/models/test_numba_vector_and_auto.py \
	tests/decisions/test_decision_env_api.py tests/decisions/test_decision_snapshots.py
# The Python run under TSan: a compiled NumbaModel on 2-4 worker threads
# (one small file: TSan slows the runtime 5-15x).
TSAN_PY_TESTS ?= tests/models/test_numba_threads.py
SANITIZER_OPTIONS = ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# pytest runs with --capture=sys under a sanitizer: a report goes to file
# descriptor 2 as the process dies, and fd capture would swallow it.
# The interpreter itself, not a launcher script (a pyenv shim is a bash
# script, and bash crashes with the TSan runtime preloaded).
PYTHON_EXE = $$($(PYTHON) -c 'import sys; print(sys.executable)')

.PHONY: install dev demo test test-cpp tsan tsan-cpp tsan-python asan asan-build asan-cpp asan-python fuzz lint format bench bench-full bench-peers baselines docs stubs clean
.PHONY: wheel smoke-wheel smoke-pythons test-portable model-check

install:
	$(PIP) install -e ".[test,bench,docs]"

dev:
	$(PIP) install --no-build-isolation -e ".[dev]" \
		-Ceditable.rebuild=true -Ceditable.verbose=false -Cbuild-dir=build/dev \
		-Ccmake.define.CMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF

demo:
	$(PYTHON) -m seer_env.demo

test: test-cpp
	$(PYTHON) -m pytest

test-cpp:
	cmake -S . -B $(CTEST_BUILD) -DSEER_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(CTEST_BUILD) -j 2
	ctest --test-dir $(CTEST_BUILD) --output-on-failure

# ThreadSanitizer, one build (build/tsan) for both runs: the C++ tests, then a
# compiled NumbaModel on worker threads driven from Python (TSAN_PY_TESTS)
# through the TSan-built extension (tsan-python alone builds only _core). As
# for ASan, python is not instrumented, so the TSan runtime is LD_PRELOADed
# (its interceptors then see CPython's GIL and the runtime's own locks alike).
# numba's compiled handlers are not instrumented; the runtime around them
# (pool, barriers, event lists, the handler context's C ABI) is. No
# suppressions: a report fails the run. `setarch -R` (no ASLR for that one
# process, where the container allows it): gcc's TSan runtime aborts with
# "unexpected memory mapping" when a kernel with more mmap randomization bits
# (vm.mmap_rnd_bits > 28) maps python or a library inside its shadow ranges.
TSAN_CONFIGURE = cmake -S . -B $(TSAN_BUILD) -DSEER_BUILD_TESTS=ON -DSEER_BUILD_PYTHON=ON \
	-DSEER_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DPython_EXECUTABLE=$$(command -v $(PYTHON)) \
	-Dpybind11_DIR=$$($(PYTHON) -m pybind11 --cmakedir) >/dev/null

tsan: tsan-cpp tsan-python

tsan-cpp:
	$(TSAN_CONFIGURE)
	cmake --build $(TSAN_BUILD) -j 2
	TSAN_OPTIONS=halt_on_error=1 ctest --test-dir $(TSAN_BUILD) --output-on-failure

tsan-python:
	$(TSAN_CONFIGURE)
	cmake --build $(TSAN_BUILD) --target _core -j 2
	rm -rf $(TSAN_BUILD)/pkg && mkdir -p $(TSAN_BUILD)/pkg
	cp -r seer_env $(TSAN_BUILD)/pkg/ && cp $(TSAN_BUILD)/_core*.so $(TSAN_BUILD)/pkg/seer_env/
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		LD_PRELOAD="$$($(CXX) -print-file-name=libtsan.so) $$($(CXX) -print-file-name=libstdc++.so)" \
		$$(setarch -R true 2>/dev/null && echo setarch -R) $(PYTHON_EXE) .ci/pytest_sanitized.py \
		$(TSAN_BUILD)/pkg -q -p no:cacheprovider --capture=sys $(TSAN_PY_TESTS)

# AddressSanitizer + UndefinedBehaviorSanitizer, one build (build/asan) for
# both runs: the C++ tests, then the Python tests that drive the extension,
# with the ASan-built extension imported ahead of the editable install. The
# ASan runtime is LD_PRELOADed because python itself is not instrumented, with
# libstdc++ so that its __cxa_throw interceptor finds the real one (C++
# exceptions crossing the extension work).
asan: asan-cpp asan-python

asan-build:
	cmake -S . -B $(ASAN_BUILD) -DSEER_BUILD_TESTS=ON -DSEER_BUILD_PYTHON=ON \
		-DSEER_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DPython_EXECUTABLE=$$(command -v $(PYTHON)) \
		-Dpybind11_DIR=$$($(PYTHON) -m pybind11 --cmakedir) >/dev/null
	cmake --build $(ASAN_BUILD) -j 2

asan-cpp: asan-build
	$(SANITIZER_OPTIONS) ctest --test-dir $(ASAN_BUILD) --output-on-failure

asan-python: asan-build
	rm -rf $(ASAN_BUILD)/pkg && mkdir -p $(ASAN_BUILD)/pkg
	cp -r seer_env $(ASAN_BUILD)/pkg/ && cp $(ASAN_BUILD)/_core*.so $(ASAN_BUILD)/pkg/seer_env/
	$(SANITIZER_OPTIONS) LD_PRELOAD="$$($(CXX) -print-file-name=libasan.so) $$($(CXX) -print-file-name=libstdc++.so)" \
		$(PYTHON) .ci/pytest_sanitized.py $(ASAN_BUILD)/pkg -q -p no:cacheprovider --capture=sys \
		$(ASAN_PY_TESTS)

# Hypothesis over Simulation.load blobs, configs, action arrays, vector env
# call interleavings, action dicts (key order, subsets, unknown keys, value
# types, against a reference env) and the batched TorchRL env's TensorDict
# actions (dtypes, shapes, against a reference env), under ASan + UBSan (the
# asan build), for FUZZ_SECONDS (tools/fuzz.py).
FUZZ_SECONDS ?= 600
fuzz: asan-build
	rm -rf $(ASAN_BUILD)/pkg && mkdir -p $(ASAN_BUILD)/pkg
	cp -r seer_env $(ASAN_BUILD)/pkg/ && cp $(ASAN_BUILD)/_core*.so $(ASAN_BUILD)/pkg/seer_env/
	$(SANITIZER_OPTIONS) FUZZ_SECONDS=$(FUZZ_SECONDS) \
		LD_PRELOAD="$$($(CXX) -print-file-name=libasan.so) $$($(CXX) -print-file-name=libstdc++.so)" \
		$(PYTHON) tools/fuzz.py $(ASAN_BUILD)/pkg

# Packaging (docs/install.md). `make wheel`: the sdist, then a wheel built from
# it in a clean folder (python -m build), repaired to a manylinux tag
# (auditwheel, with patchelf). `make smoke-wheel`: that wheel in a fresh venv,
# smoke-tested from outside the checkout (.ci/smoke). `make smoke-pythons`: the
# sdist built, installed and smoke-tested on each Python this machine has (the
# wheel instead on the Python it was built for).
DIST ?= build/dist
WHEELHOUSE ?= build/wheelhouse
SMOKE_VENV ?= build/smoke-venv

# Tools outside the README's install: each target says which extra brings its tool.
need = @command -v $(1) >/dev/null 2>&1 || { echo "make $@ needs $(1): pip install -e '.[$(2)]'"; exit 2; }

wheel:
	$(call need,auditwheel,release)
	rm -rf $(DIST) $(WHEELHOUSE)
	$(PYTHON) -m build -o $(DIST)
	auditwheel repair -w $(WHEELHOUSE) $(DIST)/*.whl
	@ls -l $(WHEELHOUSE)

smoke-wheel:
	rm -rf $(SMOKE_VENV) && $(PYTHON) -m venv $(SMOKE_VENV)
	$(SMOKE_VENV)/bin/python -m pip install -q "$$(ls $(WHEELHOUSE)/*.whl)[numba]" pytest
	cd "$$(mktemp -d)" && SEER_SOURCE_TREE=$(CURDIR) $(CURDIR)/$(SMOKE_VENV)/bin/python \
		-m pytest -q $(CURDIR)/.ci/smoke

smoke-pythons:
	.ci/smoke_pythons $$(ls $(DIST)/*.tar.gz) build/smoke-pythons $(WHEELHOUSE)

# The platform layer's portable fallbacks (cpp/src/platform.hpp: a condition
# variable for the futex, hardware_concurrency for affinity, no /proc reads),
# built on Linux (-DSEER_PORTABLE=ON, build/portable): the C++ tests, then the
# Python equivalence tests through that build's extension.
PORTABLE_BUILD ?= build/portable
PORTABLE_PY_TESTS ?= tests/runtime/test_package_import.py tests/runtime/test_parallel_equivalence.py \
	tests/runtime/test_phold.py tests/runtime/test_adaptive_pool.py tests/runtime/test_prewake.py \
	tests/vector/test_vector_env.py tests/envs/test_pcs_v0.py tests/envs/test_aircraft_v0.py \
	tests/envs/test_dict_api.py tests/models/test_numba_threads.py \
	tests/reliability/test_bad_input.py tests/vector/test_background_step_lifecycle.py

test-portable:
	cmake -S . -B $(PORTABLE_BUILD) -DSEER_BUILD_TESTS=ON -DSEER_BUILD_PYTHON=ON -DSEER_PORTABLE=ON \
		-DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$$(command -v $(PYTHON)) \
		-Dpybind11_DIR=$$($(PYTHON) -m pybind11 --cmakedir) >/dev/null
	cmake --build $(PORTABLE_BUILD) -j 2
	ctest --test-dir $(PORTABLE_BUILD) --output-on-failure
	rm -rf $(PORTABLE_BUILD)/pkg && mkdir -p $(PORTABLE_BUILD)/pkg
	cp -r seer_env $(PORTABLE_BUILD)/pkg/ && cp $(PORTABLE_BUILD)/_core*.so $(PORTABLE_BUILD)/pkg/seer_env/
	$(PYTHON) .ci/pytest_sanitized.py $(PORTABLE_BUILD)/pkg -q -p no:cacheprovider $(PORTABLE_PY_TESTS)

model-check:  # the round protocol's spin model: passes, and fails with each planted bug
	bash model/check.sh

lint:
	$(call need,ruff,dev)
	ruff check seer_env bench training tests examples tools
	ruff format --check seer_env bench training tests examples tools

format:
	$(call need,ruff,dev)
	ruff format seer_env bench training tests examples tools
	ruff check --fix seer_env bench training tests examples tools

bench:
	OMP_NUM_THREADS=1 $(PYTHON) -m bench

bench-full:
	OMP_NUM_THREADS=1 $(PYTHON) -m bench --profile full

# seer beside ROSS, ROOT-Sim and USE on PCS and PHOLD (docs/peers.md): the engines'
# checkouts in SEER_PEER_ROSS, SEER_PEER_ROOTSIM, SEER_PEER_USE (bench/peers/README.md);
# built into build/peers/, ~10 minutes on a quiet 2-vCPU machine. Exit 2: no engine.
bench-peers:
	OMP_NUM_THREADS=1 $(PYTHON) -m bench.peers

baselines:  # random, best fixed and PPO on each task and size (docs/tasks.md)
	OMP_NUM_THREADS=1 $(PYTHON) -m training --out docs/img/tasks

# seer_env/_core.pyi from the built extension (rerun after changing cpp/bindings/;
# tests/tooling/test_core_stubs.py fails while the checked-in stub is stale).
stubs:
	$(PYTHON) tools/core_stubs.py

docs:
	NO_MKDOCS_2_WARNING=1 mkdocs build --strict -d build/site

clean:
	rm -rf build dist *.egg-info bench/results .pytest_cache .ruff_cache site
