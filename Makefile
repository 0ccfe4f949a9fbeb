# Strata: the commands a new user runs. Each installs what is missing, then
# configures and builds into build/.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local
SETUP_FLAGS ?=
VERSION := $(shell sed -En 's/^project.strata VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
IMAGE ?= strata:$(VERSION)
IMAGE_BUILD_FLAGS ?=

.PHONY: all setup configure build test test-cpu bench demo install image format clean

all: build

setup:
	@bash scripts/setup.sh $(SETUP_FLAGS)

configure: setup
	@test -f $(BUILD)/build.ninja || cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The tests built as against a LibTorch 2.11 without CUDA (pytorch.org's CPU
# archive): the .venv wheel's CPU libraries alone, no CUDA paths compiled, in
# build-cpu/ (a build of its own, as long as the first `make test`).
test-cpu: setup
	@test -f build-cpu/build.ninja || cmake -S . -B build-cpu -G Ninja \
	  -DSTRATA_TORCH=python -DSTRATA_TORCH_CUDA=OFF $(CMAKE_FLAGS)
	cmake --build build-cpu -j $(JOBS)
	cd build-cpu && ctest --output-on-failure -j $(JOBS)

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

# The CPU container image (deploy/Containerfile), built with podman, else
# docker. podman uses deploy/podman.conf unless CONTAINERS_CONF names another.
image:
	@engine=$$(command -v podman || command -v docker) || \
	  { echo "make image: needs podman or docker (scripts/setup.sh installs podman)" >&2; exit 1; }; \
	CONTAINERS_CONF=$${CONTAINERS_CONF:-$(CURDIR)/deploy/podman.conf} \
	  $$engine build -f deploy/Containerfile -t $(IMAGE) $(IMAGE_BUILD_FLAGS) .

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

clean:
	rm -rf $(BUILD)
