# trainplan - build, run and test.
#   make run           set up, build, and run the main job on the built-in defaults
#   make test          set up, build, and run every test (unit, CLI, benchmark smoke)
#   make test SAN=1    the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make WERROR=1      warnings are errors (CI)
#   make bench         the benchmarks, with their figures
CC      ?= cc
SAN     ?= 0
WERROR  ?= 0
BUILD   ?= $(if $(filter 1,$(SAN)),build-san,build)

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
ifeq ($(SAN),1)
CFLAGS   += -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=address,undefined
endif
DEP_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
DEP_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ljansson -lgsl -lgslcblas -lyaml) -lcsv
TEST_LIBS  = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

LIB_SRC  := $(wildcard src/*.c)
CLI_SRC  := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
BENCH_SRC:= $(wildcard bench/bench_*.c)

LIB      := $(BUILD)/libtrainplan.a
BIN      := $(BUILD)/trainplan
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps run test unit cli-test bench-smoke bench clean calibration check-calibration
.SECONDARY:
all: $(BIN) $(TESTS) $(BENCHES)

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

run: deps
	@$(MAKE) --no-print-directory $(BIN)
	./$(BIN) params llama-3.1-8b

test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory unit bench-smoke cli-test

unit: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; ./$$t; done

cli-test: $(BIN)
	@sh tests/cli/run.sh ./$(BIN) tests/cli/cases.txt

bench-smoke: $(BENCHES)
	@set -e; for b in $(BENCHES); do ./$$b --smoke >/dev/null; echo "bench $$b: ran"; done

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
	rm -rf build build-san

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
