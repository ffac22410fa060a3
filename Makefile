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

PKGS     := jansson
WARN     := -Wall -Wextra -Wpedantic -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
            -Wformat=2 -Wvla
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -Iinclude -MMD -MP
ifeq ($(WERROR),1)
CFLAGS   += -Werror
endif
ifeq ($(SAN),1)
CFLAGS   += -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=address,undefined
endif
DEP_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
DEP_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ljansson) -lcsv
TEST_LIBS  = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

LIB_SRC  := $(wildcard src/*.c)
CLI_SRC  := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
BENCH_SRC:= $(wildcard bench/bench_*.c)

LIB      := $(BUILD)/libtrainplan.a
BIN      := $(BUILD)/trainplan
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps run test unit cli-test bench-smoke bench clean
.SECONDARY:
all: $(BIN) $(TESTS) $(BENCHES)

deps:
	@sh scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEP_CFLAGS) -c $< -o $@

$(LIB): $(LIB_SRC:%.c=$(BUILD)/%.o)
	$(AR) rcs $@ $^

$(BIN): $(CLI_SRC:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS) -lm

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS) $(TEST_LIBS) -lm

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/bench/common.o $(LIB)
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

clean:
	rm -rf build build-san

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
