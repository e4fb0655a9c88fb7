# Every target does its own set-up: missing Debian packages, CMake configure, Ninja build.
BUILD ?= build
JOBS ?= 2
# Tests at once: most of a test's time is spent waiting for daemons, so 4 on 2 cores halve the
# suite's wall time (docs/decisions.md, "The test suite four at a time").
TEST_JOBS ?= 4
CTEST_ARGS ?=
# libFuzzer targets (test/fuzz/): built with clang, ASan and UBSan into their own directory.
FUZZ_BUILD ?= build-fuzz
FUZZ_RUNS ?= 10000000
FUZZ_TARGETS ?=
FUZZ_CC ?= clang
FUZZ_CXX ?= clang++

.PHONY: all deps kafka-jars configure build test fault demo bench scale package clean fuzz-build fuzz

all: build

deps:
	@bash deploy/install-deps.sh

# Java 17 and the jars of Apache Kafka's broker (deploy/kafka/pom.xml) in $(BUILD)/kafka/libs, once.
kafka-jars:
	@bash deploy/kafka/fetch-broker.sh $(BUILD)

$(BUILD)/build.ninja: | deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

configure: deps $(BUILD)/build.ninja

build: configure kafka-jars
	@ninja -C $(BUILD) -j$(JOBS)

$(FUZZ_BUILD)/build.ninja: | deps
	@cmake -S test/fuzz -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=$(FUZZ_CC) -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) >/dev/null

fuzz-build: deps $(FUZZ_BUILD)/build.ninja
	@ninja -C $(FUZZ_BUILD) -j$(JOBS)

# FUZZ_RUNS inputs per target (FUZZ_TARGETS=fuzz_sbatch ... for some); new inputs are kept in $(FUZZ_BUILD)/corpus.
fuzz: fuzz-build
	@FUZZ_WORK=$(abspath $(FUZZ_BUILD))/corpus bash test/fuzz/run.sh $(FUZZ_BUILD) . $(FUZZ_RUNS) $(FUZZ_TARGETS)

# Every test: the fault tests in a short seeded version (the 3-broker Kafka cluster's are
# `make fault`), each fuzz target for a short seeded run (so they are built first).
test: build fuzz-build
	@cd $(BUILD) && ctest --output-on-failure -j$(TEST_JOBS) -LE '^kafka_cluster$$' $(CTEST_ARGS)

# The fault tests at length: many trials (FAULT_TRIALS, a seed printed by each), the Kafka cluster's too.
fault: build
	@cd $(BUILD) && FAULT_TRIALS=$${FAULT_TRIALS:-32} ctest --output-on-failure -L '^fault$$' $(CTEST_ARGS)

# The Debian package of what $(BUILD) built: $(BUILD)/cairn_<version>_amd64.deb (deploy/CMakeLists.txt).
package: configure
	@ninja -C $(BUILD) -j$(JOBS) package

demo: build
	@bash deploy/demo.sh $(BUILD)

# Every figure printed, and all of them in $(BUILD)/bench/results.json (name -> value, unit, goal):
# `test/bench/compare.py OLD.json NEW.json` flags CPU-per-unit regressions over 10%.
bench: build
	@ninja -C $(BUILD) -j$(JOBS) cairn_bench_programs
	@bash test/bench/run.sh $(BUILD)

# Simulated sites (test/scale/scale.sh): 1,000 nodes and a 10,000-job synthetic trace, then
# 10,000 nodes and 100,000 jobs, each compressed to about SCALE_WALL seconds and audited; figures
# printed and added to $(BUILD)/bench/results.jsonl. SCALE_SIZES="NODES:JOBS ..." for others.
SCALE_SIZES ?= 1000:10000 10000:100000
scale: build
	@mkdir -p $(BUILD)/bench
	@status=0; for size in $(SCALE_SIZES); do \
	  echo "== $${size%%:*} simulated nodes, $${size##*:} jobs"; \
	  CAIRN_BENCH_RESULTS=$(abspath $(BUILD))/bench/results.jsonl SCALE_NODES=$${size%%:*} SCALE_JOBS=$${size##*:} \
	    bash test/scale/scale.sh $(BUILD) || status=1; \
	done; exit $$status

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
