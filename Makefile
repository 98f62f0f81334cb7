# Targets a newcomer guesses. `make dev` once, then edit and rerun: the
# editable install rebuilds the extension on import.
PYTHON ?= python
PIP ?= $(PYTHON) -m pip
CTEST_BUILD ?= build/ctest
TSAN_BUILD ?= build/tsan

.PHONY: install dev demo test test-cpp tsan lint format bench bench-full docs clean

install:
	$(PIP) install -e ".[test,bench,docs]"

dev:
	$(PIP) install --no-build-isolation -e ".[dev]" \
		-Ceditable.rebuild=true -Ceditable.verbose=false -Cbuild-dir=build/dev \
		-Ccmake.define.CMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF

demo:
	$(PYTHON) -m seer_env.demo

test: test-cpp
	pytest

test-cpp:
	cmake -S . -B $(CTEST_BUILD) -DSEER_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(CTEST_BUILD) -j 2
	ctest --test-dir $(CTEST_BUILD) --output-on-failure

tsan:
	cmake -S . -B $(TSAN_BUILD) -DSEER_BUILD_TESTS=ON -DSEER_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(TSAN_BUILD) -j 2
	TSAN_OPTIONS=halt_on_error=1 ctest --test-dir $(TSAN_BUILD) --output-on-failure

lint:
	ruff check seer_env tests examples
	ruff format --check seer_env tests examples

format:
	ruff format seer_env tests examples
	ruff check --fix seer_env tests examples

bench:
	$(PYTHON) -m seer_env.bench

bench-full:
	$(PYTHON) -m seer_env.bench --profile full

docs:
	NO_MKDOCS_2_WARNING=1 mkdocs build --strict -d build/site

clean:
	rm -rf build dist *.egg-info bench/results .pytest_cache .ruff_cache site
