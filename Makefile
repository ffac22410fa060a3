# trainplan - build, run and test.
#   make run           set up, build, and run the main job on the built-in defaults
#   make test          set up, build, and run every test (unit, CLI, benchmark smoke)
#   make test SAN=1    the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make WERROR=1      warnings are errors (CI)
#   make NO_GSL=1      without GSL (GPL-3): no calibrate fit, in build-nogsl/ (README "Licence")
#   make bench         the benchmarks, with their figures
#   make fuzz          the libFuzzer targets (clang), FUZZ_SECONDS each (docs/fuzzing.md)
#   make valgrind      the unit tests under valgrind
#   make web           the page: the core as WebAssembly in build/web/ (sh scripts/deps.sh web first)
#   make python        the Python package in a virtual environment, build/venv (offline)
CC      ?= cc
SAN     ?= 0
WERROR  ?= 0
# NO_GSL=1: a build that links only permissively licensed libraries (README "Licence"): no GSL,
# so calibrate's fit is src/fit/nofit.c (it says it cannot fit); its own build folder
NO_GSL  ?= 0
BUILD   ?= $(if $(filter 1,$(SAN)),build-san,$(if $(filter fuzz,$(SAN)),build-fuzz,build))$(if $(filter 1,$(NO_GSL)),-nogsl,)

PKGS     := jansson yaml-0.1 $(if $(filter 1,$(NO_GSL)),,gsl)
WARN     := -Wall -Wextra -Wpedantic -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
            -Wformat=2 -Wvla
# The user's CFLAGS / LDFLAGS (make CFLAGS=-O3) extend the flags the build needs (TP_CFLAGS,
# TP_LDFLAGS) instead of replacing them.
# (sanitizer builds default to -O1: faster to build, still useful stack traces)
CFLAGS   ?= $(if $(filter 1 fuzz,$(SAN)),-O1,-O2) -g
# every floor's private header by its name (docs/design.md "Source layout: floors": a file
# includes its own floor's header, which includes the floors below; scripts/check-layers.py
# checks that)
TP_CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -Iinclude \
              $(addprefix -I,$(sort $(dir $(wildcard src/*/*.h)))) -MMD -MP
# the CLI runs the search on POSIX threads (cli/par_search.c); the library has none
TP_CFLAGS  += -pthread
TP_LDFLAGS := -pthread
ifeq ($(WERROR),1)
TP_CFLAGS  += -Werror
endif
ifeq ($(NO_GSL),1)
TP_CFLAGS  += -DTP_NO_GSL
endif
# SAN=1: ASan + UBSan; clang adds the checks gcc's UBSan lacks: float-cast-overflow (a double
# out of an integer's range converted to it) and the integer checks that are never intended here
# (SAN_EXTRA; docs/fuzzing.md says why the other -fsanitize=integer checks are left out)
SAN_CHECKS = address,undefined$(if $(filter clang%,$(notdir $(CC))),$(SAN_EXTRA))
SAN_EXTRA  = ,float-cast-overflow,integer-divide-by-zero,implicit-signed-integer-truncation
ifeq ($(SAN),1)
TP_CFLAGS  += -fsanitize=$(SAN_CHECKS) -fno-sanitize-recover=all -fno-omit-frame-pointer
TP_LDFLAGS += -fsanitize=$(SAN_CHECKS)
endif
# SAN=fuzz (make fuzz): objects instrumented for libFuzzer, with ASan and UBSan
ifeq ($(SAN),fuzz)
TP_CFLAGS  += -fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow \
              -fno-sanitize-recover=all -fno-omit-frame-pointer
TP_LDFLAGS += -fsanitize=address,undefined,float-cast-overflow
endif
# The library's objects: position-independent (one set serves the .a and the .so) and hidden
# unless include/ marks a declaration TP_API.
LIB_CFLAGS := -fPIC -fvisibility=hidden -DTP_BUILDING_LIBRARY
ALL_CFLAGS  = $(TP_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(TP_LDFLAGS) $(LDFLAGS)
DEP_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
DEP_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || \
               echo -ljansson -lyaml $(if $(filter 1,$(NO_GSL)),,-lgsl -lgslcblas)) -lcsv
TEST_LIBS  = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

LIB_SRC  := $(filter-out $(if $(filter 1,$(NO_GSL)),src/fit/fit.c src/fit/explain.c,src/fit/nofit.c),\
                        $(wildcard src/*/*.c))
CLI_SRC  := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
BENCH_SRC:= $(wildcard bench/bench_*.c)
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
FUZZ_NAMES := $(FUZZ_SRC:fuzz/fuzz_%.c=%)

LIB      := $(BUILD)/libtrainplan.a
# the shared library: soname libtrainplan.so.MAJOR; only the TP_API declarations are exported
VERSION  := $(shell sed -n 's/^\#define TP_VERSION "\(.*\)"/\1/p' include/trainplan/base.h)
SOMAJOR  := $(firstword $(subst ., ,$(VERSION)))
SHLIB    := $(BUILD)/libtrainplan.so
PCFILE   := $(BUILD)/trainplan.pc
BIN      := $(BUILD)/trainplan
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
# the CLI without its main(): fuzz_args drives its argument parsing
CLI_OBJ  := $(filter-out $(BUILD)/cli/main.o,$(CLI_SRC:%.c=$(BUILD)/%.o))
REPLAYS  := $(FUZZ_NAMES:%=$(BUILD)/fuzz/replay_%)
FUZZERS  := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)

.PHONY: all deps run test unit header-test layers-test cli-test formats-test svg-test export-test schema-test \
        web web-test bench-smoke bench clean calibration check-calibration fuzz-replay fuzz fuzzers \
        valgrind install python-test python readme-test
.SECONDARY:
all: $(BIN) $(SHLIB) $(PCFILE) $(TESTS) $(BENCHES) $(REPLAYS)

deps:
	@sh scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) -c $< -o $@
$(BUILD)/src/%.o: TP_CFLAGS += $(LIB_CFLAGS)

# The built-in calibration: data/calibration.json as a C string literal for src/data/calib.c.
$(BUILD)/gen/calib_defaults.inc: data/calibration.json
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@
$(BUILD)/src/data/calib.o: $(BUILD)/gen/calib_defaults.inc
$(BUILD)/src/data/calib.o: TP_CFLAGS += -I$(BUILD)/gen

# written anew: ar would keep a member whose source left LIB_SRC (fit.c / nofit.c)
$(LIB): $(LIB_SRC:%.c=$(BUILD)/%.o)
	rm -f $@
	$(AR) rcs $@ $^

$(SHLIB): $(LIB_SRC:%.c=$(BUILD)/%.o)
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,libtrainplan.so.$(SOMAJOR) -o $@ $^ $(DEP_LIBS) -lm

# pkg-config: the static link needs the dependencies' libraries too (Libs.private); written
# again by install, for the PREFIX it installs to
PREFIX  ?= /usr/local
PC_SED   = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
               -e 's|@LIBS_PRIVATE@|$(strip $(DEP_LIBS)) -lm|' trainplan.pc.in
$(PCFILE): trainplan.pc.in include/trainplan/base.h
	@mkdir -p $(dir $@)
	$(PC_SED) > $@

# make install PREFIX=/opt/trainplan (DESTDIR for staging): the CLI, the headers, both libraries,
# the pkg-config file
install: $(BIN) $(LIB) $(SHLIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include/trainplan \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/trainplan
	install -m 644 include/trainplan.h include/trainplan_export.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 include/trainplan/*.h $(DESTDIR)$(PREFIX)/include/trainplan/
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libtrainplan.a
	install -m 755 $(SHLIB) $(DESTDIR)$(PREFIX)/lib/libtrainplan.so.$(VERSION)
	ln -sf libtrainplan.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libtrainplan.so.$(SOMAJOR)
	ln -sf libtrainplan.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libtrainplan.so
	$(PC_SED) > $(DESTDIR)$(PREFIX)/lib/pkgconfig/trainplan.pc

$(BIN): $(CLI_SRC:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS) -lm

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS) $(TEST_LIBS) -lm

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/bench/common.o $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS) -lm

# bench_search times the threaded search of the CLI too
$(BUILD)/bench/bench_search: $(BUILD)/bench/bench_search.o $(BUILD)/bench/common.o \
                             $(BUILD)/cli/par_search.o $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS) -lm

# A fuzz target without libFuzzer: fuzz/replay.c feeds it files (the reproducers, the seeds).
$(BUILD)/fuzz/replay_%: $(BUILD)/fuzz/fuzz_%.o $(BUILD)/fuzz/replay.o $(CLI_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS) -lm

# The same target linked with libFuzzer (SAN=fuzz builds only).
$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/fuzz_%.o $(CLI_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(DEP_LIBS) -lm

run: deps
	@$(MAKE) --no-print-directory $(BIN)
	./$(BIN) params llama-3.1-8b

test: deps
	@sh scripts/check-citations.sh
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory unit header-test layers-test bench-smoke fuzz-replay cli-test \
	    formats-test svg-test export-test python-test schema-test readme-test \
	    $(if $(filter 1,$(SAN)),,web-test)

# The floors of src/ depend only downward: the #include lines and the symbols each object
# defines and uses (nm), in the order docs/design.md gives ("Source layout: floors")
layers-test: $(LIB)
	@python3 scripts/check-layers.py $(BUILD)

# Each topical public header compiles on its own (it includes what it uses), as C11 and, with a
# C++ compiler installed, as C++ (the extern "C" blocks).
header-test:
	@set -e; for h in include/trainplan/*.h include/trainplan.h include/trainplan_export.h; do \
	    printf '#include "%s"\n' "$${h#include/}" | \
	        $(CC) -std=c11 $(WARN) -Werror -Iinclude -fsyntax-only -x c -; done; \
	if command -v c++ >/dev/null; then for h in include/trainplan/*.h; do \
	    printf '#include "%s"\n' "$${h#include/}" | c++ -Iinclude -fsyntax-only -x c++ -; done; fi
	@echo "header-test: every public header compiles on its own"

unit: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; ./$$t; done

# tests/cli/cases.txt and every tests/cli/cases.d/*.txt (one file per topic), as one list
# export -o refuses files that exist (without --force): the cases' export folders start empty
cli-test: $(BIN)
	@rm -rf build/export-cases
	@cat tests/cli/cases.txt $(sort $(wildcard tests/cli/cases.d/*.txt)) >$(BUILD)/cli-cases.txt
	@sh tests/cli/run.sh ./$(BIN) $(BUILD)/cli-cases.txt

# the exported files would start: Megatron's argument parser and validity rules, DeepSpeed's
# config model, Axolotl's schema, bash -n (scripts/check-export-start.py, docs/export.md)
export-test: $(BIN)
	@sh tests/export/check.sh ./$(BIN)

# the options are declared once, in src/api/option_table.c: no CLI option, Python keyword or
# page field anywhere else
schema-test:
	@sh tests/schema/check.sh

# every command's --svg file is well-formed XML and shows the command's figures
svg-test: $(BIN)
	@sh tests/svg/check.sh ./$(BIN)

# The page (docs/web.md): the core as WebAssembly in build/web/, offline once
# `sh scripts/deps.sh web` has run.  web-test: the page in headless Chromium against the CLI,
# built first when emscripten and the sources are there; skipped (and said) without Chromium.
web:
	@sh web/build.sh

web-test: $(BIN)
	@if command -v chromium >/dev/null 2>&1 && command -v emcc >/dev/null 2>&1 && \
	    ls -d .web-deps/jansson-*/src >/dev/null 2>&1; then sh web/build.sh >/dev/null; fi
	@sh tests/web/check.sh ./$(BIN)

# The Python package (python/trainplan) against the CLI's JSON, on this build's shared library.
# A sanitizer build's library cannot be loaded into an uninstrumented python3: there the C test
# tests/test_threads.c covers the same calls.
python-test: $(BIN) $(SHLIB)
ifeq ($(SAN),0)
	@TRAINPLAN_LIBRARY=$(SHLIB) TRAINPLAN_CLI=$(BIN) PYTHONPATH=python \
	    python3 -m unittest discover -s python/tests
else
	@echo "python-test: skipped under SAN=$(SAN) (tests/test_threads.c covers the library)"
endif

# The Python package in a virtual environment (Debian's python3 refuses `pip install` into the
# system: PEP 668 "externally-managed-environment"): build/venv, offline (the in-tree backend
# bundles this build's libtrainplan.so).  Then: build/venv/bin/python -c "import trainplan"
VENV ?= $(BUILD)/venv
python: $(SHLIB)
	@[ -x $(VENV)/bin/python ] || python3 -m venv $(VENV)
	@TRAINPLAN_LIBRARY=$(abspath $(SHLIB)) $(VENV)/bin/python -m pip install --quiet --no-index \
	    --force-reinstall ./python
	@$(VENV)/bin/python -c "import trainplan; print('python: trainplan', \
	    trainplan.__version__ if hasattr(trainplan, '__version__') else '', 'in $(VENV)')"

# Every README example against this build: each `$ trainplan ...` paste (with its `...`
# elisions), the Python session, the bare example commands (tests/readme/check.py says how).
# A failure names the README line of the example and of the first line that differs;
# `python3 tests/readme/check.py --bin $(BIN) --lib $(SHLIB) --update` rewrites whole pastes
# after a deliberate change.  The sanitizer build's library cannot load into python3: there
# the session is skipped (and said).
readme-test: $(BIN) $(SHLIB)
	@python3 tests/readme/check.py --bin $(BIN) --lib $(SHLIB) \
	    $(if $(filter 0,$(SAN)),,--no-python) README.md

# every command's CSV and JSON parse (libcsv strict, jansson)
$(BUILD)/tests/check_format: tests/formats/check_format.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEP_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(DEP_LIBS)

formats-test: $(BIN) $(BUILD)/tests/check_format
	@sh tests/formats/run.sh ./$(BIN) ./$(BUILD)/tests/check_format

bench-smoke: $(BENCHES)
	@set -e; for b in $(BENCHES); do ./$$b --smoke >/dev/null; echo "bench $$b: ran"; done

# Every committed crash reproducer and seed through its target, once (any compiler).  The
# inputs are hostile on purpose, so the CLI's `trainplan: error: ...` lines they draw are
# expected: counted, kept in build/fuzz/replay_NAME.err and shown only when the replay fails.
fuzz-replay: $(REPLAYS)
	@set -e; for n in $(FUZZ_NAMES); do log=$(BUILD)/fuzz/replay_$$n.err; \
	    if ./$(BUILD)/fuzz/replay_$$n tests/fuzz-regressions/$$n fuzz/corpus/$$n 2>$$log; then \
	        grep -v '^trainplan: error: ' $$log >&2 || true; \
	        e=$$(grep -c '^trainplan: error: ' $$log || true); \
	        [ "$$e" = 0 ] || echo "  ($$e expected error lines from hostile inputs: $$log)"; \
	    else cat $$log >&2; echo "replay_$$n failed" >&2; exit 1; fi; done

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
# fits over the calibration set, the runs files named in data/runs/calibration.txt (shipped in
# the tree, so a fresh clone reproduces it): `make calibration` regenerates it, `make
# check-calibration` (CI) fails when the checked-in file differs from what the command gives,
# or when a calibration runs file is missing.
CALIB_RUNS := $(addprefix data/runs/,$(shell grep -v '^\#' data/runs/calibration.txt))
calibration: $(BIN)
	./$(BIN) calibrate $(CALIB_RUNS) --base prior --no-cv -o data/calibration.json

check-calibration: $(BIN)
	@if [ "$(NO_GSL)" = 1 ]; then echo "check-calibration: NO_GSL=1 build (no fit); skipped"; \
	else for f in $(CALIB_RUNS); do [ -r $$f ] || { echo "check-calibration: $$f missing"; \
	    exit 1; }; done; \
	    ./$(BIN) calibrate $(CALIB_RUNS) --base prior --no-cv \
	        -o $(BUILD)/calibration.json >/dev/null && \
	    cmp -s $(BUILD)/calibration.json data/calibration.json && \
	    echo "data/calibration.json: up to date" || \
	    { echo "data/calibration.json is stale: run make calibration"; exit 1; }; fi

clean:
	rm -rf build build-san build-fuzz build-valgrind build-nogsl build-san-nogsl

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
