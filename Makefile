# Two commands do everything on a fresh Debian 12 machine:
#   make demo   tune and run real models, print the plan and the speedups
#   make test   build and run the whole test suite
BUILD ?= build
JOBS ?= 2
PYTHON ?= /usr/bin/python3
ZOO_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/collage/zoo

.PHONY: all deps build test demo zoo clean format fuzz sanitize

all: build

deps:
	@bash scripts/install_deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release > /dev/null
	@cmake --build $(BUILD) -j$(JOBS)

zoo: deps
	@$(PYTHON) scripts/export_zoo.py --out $(ZOO_DIR)
	@bash scripts/fetch_thirdparty.sh

test: build zoo
	@cd $(BUILD) && COLLAGE_ZOO_DIR=$(ZOO_DIR) ctest --output-on-failure -j$(JOBS) --timeout 900

demo: build zoo
	@bash scripts/demo.sh $(BUILD)/collage $(ZOO_DIR)

# libFuzzer targets (fuzz/), built with clang, ASan and UBSan into build-fuzz;
# each runs FUZZ_SECONDS from the seed corpus in fuzz/corpus/ (new inputs go
# to build-fuzz/corpus/, findings to build-fuzz/findings/).
FUZZ_SECONDS ?= 60
FUZZERS = import npy plan_json
fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLAGE_FUZZ=ON > /dev/null
	@cmake --build build-fuzz -j$(JOBS) --target $(addsuffix _fuzzer,$(FUZZERS))
	@rm -rf build-fuzz/findings
	@for f in $(FUZZERS); do \
	  mkdir -p build-fuzz/corpus/$$f build-fuzz/findings/$$f; \
	  echo "== $${f}_fuzzer for $(FUZZ_SECONDS) s"; \
	  build-fuzz/fuzz/$${f}_fuzzer -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 -timeout=20 \
	    -artifact_prefix=build-fuzz/findings/$$f/ -print_final_stats=1 \
	    build-fuzz/corpus/$$f fuzz/corpus/$$f 2>&1 | grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)"; \
	done
	@if [ -n "$$(find build-fuzz/findings -type f)" ]; then \
	  echo "findings:"; find build-fuzz/findings -type f; exit 1; fi

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
