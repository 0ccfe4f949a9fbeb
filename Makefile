# Strata: the commands a new user runs. Each installs what is missing, then
# configures and builds into build/.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local

.PHONY: all setup configure build test bench demo install format clean

all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@test -f $(BUILD)/build.ninja || cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: configure
	@bash scripts/setup.sh --bench
	cmake --build $(BUILD) -j $(JOBS)
	bash scripts/bench.sh $(BUILD)

demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target strata
	bash scripts/demo.sh $(BUILD)

# The headers, libstrata.a, the strata CLI, the CMake package and strata.pc.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

clean:
	rm -rf $(BUILD)
