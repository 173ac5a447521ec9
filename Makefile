# Two commands do everything on a fresh Debian 12 machine:
#   make demo   tune and run real models, print the plan and the speedups
#   make test   build and run the whole test suite
BUILD ?= build
JOBS ?= 2
PYTHON ?= /usr/bin/python3
ZOO_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/collage/zoo

.PHONY: all deps build test demo zoo clean format fuzz fuzz-build fuzz-smoke sanitize

# Only the commands' own output: no "Entering directory" lines from the
# builds that cmake --build runs.
MAKEFLAGS += --no-print-directory

all: build

deps:
	@bash scripts/install_deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release > /dev/null
	@cmake --build $(BUILD) -j$(JOBS)

zoo: deps
	@$(PYTHON) scripts/export_zoo.py --out $(ZOO_DIR)
	@bash scripts/fetch_thirdparty.sh

# The suite runs JOBS test programs at once on the machine's cores: a short
# OpenMP spin keeps one program's idle workers off the cores the others
# compute on (docs/threading.md), unless the user chose a wait policy.
TEST_ENV = $(if $(GOMP_SPINCOUNT)$(OMP_WAIT_POLICY),,GOMP_SPINCOUNT=1000)

test: build zoo fuzz-smoke
	@cd $(BUILD) && $(TEST_ENV) COLLAGE_ZOO_DIR=$(ZOO_DIR) ctest --output-on-failure -j$(JOBS) --timeout 900

demo: build zoo
	@bash scripts/demo.sh $(BUILD)/collage $(ZOO_DIR)

# libFuzzer targets (fuzz/), built with clang, ASan and UBSan. `make fuzz`
# builds them at -O1 into build-fuzz and runs each for FUZZ_SECONDS from the
# seed corpus in fuzz/corpus/ (new inputs go to build-fuzz/corpus/, findings
# to build-fuzz/findings/); `make test` builds them at -O0 into
# build-fuzz-smoke (2.4 times faster to compile: the smoke run needs the
# targets to build and their checks, not speed) and runs each for
# FUZZ_SMOKE_SECONDS from a fixed seed, so a change that breaks a fuzzer's
# build or lets it find a crash fails the suite.
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_BUILD ?= build-fuzz
FUZZ_OPT ?= -O1
FUZZERS = import graph_passes npy plan_json array_input
fuzz-build: deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Fuzz \
	  -DCMAKE_CXX_FLAGS_FUZZ="$(FUZZ_OPT) -g1" -DCMAKE_C_FLAGS_FUZZ="$(FUZZ_OPT) -g1" \
	  -DCOLLAGE_FUZZ=ON > /dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target $(addsuffix _fuzzer,$(FUZZERS))

fuzz: fuzz-build
	@bash scripts/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZERS)

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz-build FUZZ_BUILD=build-fuzz-smoke FUZZ_OPT=-O0
	@FUZZ_SEED=1 bash scripts/run_fuzzers.sh build-fuzz-smoke $(FUZZ_SMOKE_SECONDS) $(FUZZERS)

# The unit and CLI tests under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize: deps
	@cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Sanitize \
	  -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g1" \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
	  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
	  -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined" > /dev/null
	@cmake --build build-sanitize -j$(JOBS)
	@cd build-sanitize && ASAN_OPTIONS=detect_leaks=0 ctest -L "unit|cli" --output-on-failure -j$(JOBS)

format:
	@clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf $(BUILD)
