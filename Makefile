# trainplan - build, run and test.
#   make run           set up, build, and run the main job on the built-in defaults
#   make test          set up, build, and run every test (unit, CLI, benchmark smoke)
#   make test SAN=1    the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make WERROR=1      warnings are errors (CI)
#   make bench         the benchmarks, with their figures
#   make fuzz          the libFuzzer targets (clang), FUZZ_SECONDS each (docs/fuzzing.md)
#   make valgrind      the unit tests under valgrind
CC      ?= cc
SAN     ?= 0
WERROR  ?= 0
BUILD   ?= $(if $(filter 1,$(SAN)),build-san,$(if $(filter fuzz,$(SAN)),build-fuzz,build))

PKGS     := jansson gsl yaml-0.1
WARN     := -Wall -Wextra -Wpedantic -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
            -Wformat=2 -Wvla
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -Iinclude -MMD -MP
# the CLI runs the search on POSIX threads (cli/par_search.c); the library has none
CFLAGS   += -pthread
LDFLAGS  += -pthread
ifeq ($(WERROR),1)
CFLAGS   += -Werror
endif
# SAN=1: ASan + UBSan; clang adds the checks gcc's UBSan lacks: float-cast-overflow (a double
# out of an integer's range converted to it) and the integer checks that are never intended here
# (SAN_EXTRA; docs/fuzzing.md says why the other -fsanitize=integer checks are left out)
SAN_CHECKS = address,undefined$(if $(filter clang%,$(notdir $(CC))),$(SAN_EXTRA))
SAN_EXTRA  = ,float-cast-overflow,integer-divide-by-zero,implicit-signed-integer-truncation
ifeq ($(SAN),1)
CFLAGS   += -O1 -fsanitize=$(SAN_CHECKS) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=$(SAN_CHECKS)
endif
# SAN=fuzz (make fuzz): objects instrumented for libFuzzer, with ASan and UBSan
ifeq ($(SAN),fuzz)
CFLAGS   += -O1 -fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow \
            -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=address,undefined,float-cast-overflow
endif
DEP_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
DEP_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ljansson -lgsl -lgslcblas -lyaml) -lcsv
TEST_LIBS  = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

LIB_SRC  := $(wildcard src/*.c)
CLI_SRC  := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
BENCH_SRC:= $(wildcard bench/bench_*.c)
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
FUZZ_NAMES := $(FUZZ_SRC:fuzz/fuzz_%.c=%)

LIB      := $(BUILD)/libtrainplan.a
BIN      := $(BUILD)/trainplan
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
# the CLI without its main(): fuzz_args drives its argument parsing
CLI_OBJ  := $(filter-out $(BUILD)/cli/main.o,$(CLI_SRC:%.c=$(BUILD)/%.o))
REPLAYS  := $(FUZZ_NAMES:%=$(BUILD)/fuzz/replay_%)
FUZZERS  := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)

.PHONY: all deps run test unit cli-test formats-test bench-smoke bench clean calibration check-calibration \
        fuzz-replay fuzz fuzzers valgrind
.SECONDARY:
all: $(BIN) $(TESTS) $(BENCHES) $(REPLAYS)

deps:
	@sh scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEP_CFLAGS) -c $< -o $@

# The built-in calibration: data/calibration.json as a C string literal for src/calib.c.
$(BUILD)/gen/calib_defaults.inc: data/calibration.json
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@
$(BUILD)/src/calib.o: $(BUILD)/gen/calib_defaults.inc
$(BUILD)/src/calib.o: CFLAGS += -I$(BUILD)/gen

$(LIB): $(LIB_SRC:%.c=$(BUILD)/%.o)
	$(AR) rcs $@ $^

$(BIN): $(CLI_SRC:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS) -lm

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS) $(TEST_LIBS) -lm

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/bench/common.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS) -lm

# bench_search times the threaded search of the CLI too
$(BUILD)/bench/bench_search: $(BUILD)/bench/bench_search.o $(BUILD)/bench/common.o \
                             $(BUILD)/cli/par_search.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS) -lm

# A fuzz target without libFuzzer: fuzz/replay.c feeds it files (the reproducers, the seeds).
$(BUILD)/fuzz/replay_%: $(BUILD)/fuzz/fuzz_%.o $(BUILD)/fuzz/replay.o $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS) -lm

# The same target linked with libFuzzer (SAN=fuzz builds only).
$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/fuzz_%.o $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(DEP_LIBS) -lm

run: deps
	@$(MAKE) --no-print-directory $(BIN)
	./$(BIN) params llama-3.1-8b

test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory unit bench-smoke fuzz-replay cli-test formats-test

unit: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; ./$$t; done

cli-test: $(BIN)
	@sh tests/cli/run.sh ./$(BIN) tests/cli/cases.txt

# every command's CSV and JSON parse (libcsv strict, jansson)
$(BUILD)/tests/check_format: tests/formats/check_format.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEP_CFLAGS) $(LDFLAGS) -o $@ $< $(DEP_LIBS)

formats-test: $(BIN) $(BUILD)/tests/check_format
	@sh tests/formats/run.sh ./$(BIN) ./$(BUILD)/tests/check_format

bench-smoke: $(BENCHES)
	@set -e; for b in $(BENCHES); do ./$$b --smoke >/dev/null; echo "bench $$b: ran"; done

# Every committed crash reproducer and seed through its target, once (any compiler).
fuzz-replay: $(REPLAYS)
	@set -e; for n in $(FUZZ_NAMES); do \
	    ./$(BUILD)/fuzz/replay_$$n tests/fuzz-regressions/$$n fuzz/corpus/$$n; done

# libFuzzer campaigns, one target after another, FUZZ_SECONDS each; new inputs go to
# build-fuzz/corpus/NAME, findings to build-fuzz/findings/NAME/ and fail the run.
FUZZ_SECONDS ?= 300
FUZZ_FLAGS   ?= -timeout=5 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
fuzzers:
	@$(MAKE) --no-print-directory SAN=fuzz CC=clang $(FUZZ_NAMES:%=build-fuzz/fuzz/fuzz_%)
fuzz:
	@sh scripts/deps.sh clang
	@$(MAKE) --no-print-directory fuzzers
	@set -e; for n in $(FUZZ_NAMES); do \
	    mkdir -p build-fuzz/corpus/$$n build-fuzz/findings/$$n; \
	    echo "== fuzz_$$n, $(FUZZ_SECONDS) s"; \
	    ./build-fuzz/fuzz/fuzz_$$n $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	        -artifact_prefix=build-fuzz/findings/$$n/ build-fuzz/corpus/$$n \
	        $$(ls -d fuzz/corpus/$$n tests/fuzz-regressions/$$n 2>/dev/null) \
	        2>build-fuzz/fuzz_$$n.log || { tail -40 build-fuzz/fuzz_$$n.log; exit 1; }; \
	    grep -E '^stat::number_of_executed_units|^Done' build-fuzz/fuzz_$$n.log || true; done

# The unit tests under valgrind (CI), the property test on a smaller sample.  CI gives it its own
# gcc build (BUILD=build-valgrind): valgrind 3.19 cannot read clang 14's DWARF 5.
valgrind:
	@sh scripts/deps.sh valgrind
	@$(MAKE) --no-print-directory $(TESTS)
	@set -e; for t in $(TESTS); do \
	    TP_PROPS_N=20000 valgrind -q --error-exitcode=1 --leak-check=full ./$$t >/dev/null; \
	    echo "valgrind $$t: clean"; done

bench: $(BENCHES)
	@set -e; for b in $(BENCHES); do ./$$b; done

# The built-in calibration (data/calibration.json) is what `trainplan calibrate --base prior`
# fits over the runs files: `make calibration` regenerates it, `make check-calibration` (CI)
# fails when the checked-in file differs from what the command gives.
RUNS_DIR ?= ../shared/validation/runs
calibration: $(BIN)
	./$(BIN) calibrate $(RUNS_DIR)/*.csv --base prior --no-cv -o data/calibration.json

check-calibration: $(BIN)
	@if [ -d $(RUNS_DIR) ]; then \
	    ./$(BIN) calibrate $(RUNS_DIR)/*.csv --base prior --no-cv \
	        -o $(BUILD)/calibration.json >/dev/null && \
	    cmp -s $(BUILD)/calibration.json data/calibration.json && \
	    echo "data/calibration.json: up to date" || \
	    { echo "data/calibration.json is stale: run make calibration"; exit 1; }; \
	else echo "check-calibration: $(RUNS_DIR) not found; skipped"; fi

clean:
	rm -rf build build-san build-fuzz build-valgrind

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
