# C-only builds of the core: unit tests (also under ASan+UBSan) and fuzzers.
# The Python extension is built by meson-python (`pip install .`).
CC ?= cc
CFLAGS ?= -O1 -g
WARN = -std=c11 -Wall -Wextra -Werror
CORE_SRC = $(wildcard src/core/*.c src/core/opcodes/*.c)
CORE_HDR = $(wildcard src/core/*.h src/core/opcodes/*.h)
INC = -Isrc/core -Isrc/core/opcodes
BUILD = build-c
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TESTS = $(patsubst tests/c/%.c,$(BUILD)/%,$(wildcard tests/c/test_*.c))
SAN_TESTS = $(patsubst tests/c/%.c,$(BUILD)/san_%,$(wildcard tests/c/test_*.c))
# The core is compiled once per flavour (plain, sanitized, fuzzing) into an
# archive that every test and harness links (`make -j2` compiles in parallel).
CORE_LIB = $(BUILD)/core/libcore.a
SAN_LIB = $(BUILD)/core-san/libcore.a
FUZZ_LIB = $(BUILD)/core-fuzz/libcore.a
objs = $(patsubst src/core/%.c,$(BUILD)/$(1)/%.o,$(CORE_SRC))

.PHONY: ctest ctest-san clean
ctest: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; ./$$t; done
ctest-san: $(SAN_TESTS)
	@set -e; for t in $(SAN_TESTS); do echo "== $$t"; ./$$t; done

$(BUILD)/core/%.o: src/core/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(INC) -c -o $@ $<
$(BUILD)/core-san/%.o: src/core/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(SAN) $(INC) -c -o $@ $<
$(CORE_LIB): $(call objs,core)
	rm -f $@ && ar rcs $@ $^
$(SAN_LIB): $(call objs,core-san)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/test_%: tests/c/test_%.c tests/c/testlib.h $(wildcard tests/c/*.inc) $(CORE_HDR) $(CORE_LIB)
	$(CC) $(WARN) $(CFLAGS) $(INC) -o $@ $< $(CORE_LIB) -lm
$(BUILD)/san_test_%: tests/c/test_%.c tests/c/testlib.h $(wildcard tests/c/*.inc) $(CORE_HDR) $(SAN_LIB)
	$(CC) $(WARN) $(CFLAGS) $(SAN) $(INC) -o $@ $< $(SAN_LIB) -lm
clean:
	rm -rf $(BUILD)

# ---- fuzzing (fuzz/README.md): needs clang with libFuzzer (Debian: apt-get install clang)
FUZZ_CC ?= clang
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# the core's objects: instrumented for coverage, without libFuzzer's main
FUZZ_OBJ_FLAGS = $(subst fuzzer,fuzzer-no-link,$(FUZZ_FLAGS))
FUZZ_HARNESSES = reader pipeline
# seconds per harness: `make fuzz`, and `make fuzz-smoke` (CI)
FUZZ_TIME ?= 600
FUZZ_SMOKE_TIME ?= 25
FUZZ_RUN = -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
PYTHON ?= python3

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-seeds ctest-valgrind
fuzz-build: $(patsubst %,$(BUILD)/fuzz_%,$(FUZZ_HARNESSES))
$(BUILD)/core-fuzz/%.o: src/core/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(WARN) $(FUZZ_OBJ_FLAGS) $(INC) -c -o $@ $<
$(FUZZ_LIB): $(call objs,core-fuzz)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/fuzz_%: fuzz/%.c fuzz/harness.h $(CORE_HDR) $(FUZZ_LIB)
	$(FUZZ_CC) $(WARN) $(FUZZ_FLAGS) $(INC) -o $@ $< $(FUZZ_LIB) -lm
# Seeds from the project's fixtures; rebuilt every run (cheap).
fuzz-seeds:
	$(PYTHON) fuzz/make_seeds.py $(BUILD)/fuzz-seeds
# New inputs go to $(BUILD)/fuzz-corpus/<harness>, crashes to $(BUILD)/fuzz-crashes/<harness>-*.
define fuzz_each
	@set -e; for h in $(FUZZ_HARNESSES); do \
	  mkdir -p $(BUILD)/fuzz-corpus/$$h $(BUILD)/fuzz-crashes; \
	  echo "== fuzz_$$h for $(1) s (log: $(BUILD)/fuzz-$$h.log)"; \
	  nice ./$(BUILD)/fuzz_$$h $(FUZZ_RUN) -max_total_time=$(1) \
	    -artifact_prefix=$(BUILD)/fuzz-crashes/$$h- \
	    $(BUILD)/fuzz-corpus/$$h $(BUILD)/fuzz-seeds/$$h >$(BUILD)/fuzz-$$h.log 2>&1 \
	    || { tail -n 60 $(BUILD)/fuzz-$$h.log; exit 1; }; \
	  grep -E "^stat::(number_of_executed_units|peak_rss_mb)|^Done" $(BUILD)/fuzz-$$h.log; \
	done
endef
fuzz: fuzz-build fuzz-seeds
	$(call fuzz_each,$(FUZZ_TIME))
fuzz-smoke: fuzz-build fuzz-seeds
	$(call fuzz_each,$(FUZZ_SMOKE_TIME))

# The unit tests under valgrind: no invalid access, no leak (the harnesses'
# time budget is scaled for valgrind's slowdown: fuzz/harness.h).
ctest-valgrind: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== valgrind $$t"; \
	  DEPYF_FUZZ_TIME_SCALE=50 valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect ./$$t >/dev/null; done
