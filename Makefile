# C-only builds of the core: unit tests (also under ASan+UBSan) and fuzzers.
# The Python extension is built by meson-python (`pip install .`).
CC ?= cc
CFLAGS ?= -O1 -g
WARN = -std=c11 -Wall -Wextra -Werror
CORE_SRC = $(wildcard src/core/*.c src/core/opcodes/*.c)
INC = -Isrc/core -Isrc/core/opcodes
BUILD = build-c
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TESTS = $(patsubst tests/c/%.c,$(BUILD)/%,$(wildcard tests/c/test_*.c))
SAN_TESTS = $(patsubst tests/c/%.c,$(BUILD)/san_%,$(wildcard tests/c/test_*.c))

.PHONY: ctest ctest-san clean
ctest: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; ./$$t; done
ctest-san: $(SAN_TESTS)
	@set -e; for t in $(SAN_TESTS); do echo "== $$t"; ./$$t; done

$(BUILD)/test_%: tests/c/test_%.c tests/c/testlib.h $(wildcard tests/c/*.inc) $(CORE_SRC)
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) $(INC) -o $@ $< $(CORE_SRC) -lm
$(BUILD)/san_test_%: tests/c/test_%.c tests/c/testlib.h $(wildcard tests/c/*.inc) $(CORE_SRC)
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) $(SAN) $(INC) -o $@ $< $(CORE_SRC) -lm
clean:
	rm -rf $(BUILD)
