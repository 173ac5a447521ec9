# Two commands do everything on a fresh Debian 12 machine:
#   make demo   tune and run real models, print the plan and the speedups
#   make test   build and run the whole test suite
BUILD ?= build
JOBS ?= 2
PYTHON ?= /usr/bin/python3
ZOO_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/collage/zoo

.PHONY: all deps build test demo zoo clean format

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

format:
	@clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf $(BUILD)
