# Every target does its own set-up: missing Debian packages, CMake configure, Ninja build.
BUILD ?= build
JOBS ?= 2
CTEST_ARGS ?=

.PHONY: all deps configure build test demo bench fault clean

all: build

deps:
	@bash deploy/install-deps.sh

$(BUILD)/build.ninja: | deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

configure: deps $(BUILD)/build.ninja

build: configure
	@ninja -C $(BUILD) -j$(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS) $(CTEST_ARGS)

# The fault tests at length: many crash trials (FAULT_TRIALS), a seed printed by each.
fault: build
	@cd $(BUILD) && FAULT_TRIALS=$${FAULT_TRIALS:-32} ctest --output-on-failure -L fault $(CTEST_ARGS)

demo: build
	@bash deploy/demo.sh $(BUILD)

bench: build
	@bash test/bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)
