# Thin front for CMake: `make`, `make test`, `make clean`.
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)

all: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja

test: all
	ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

clean:
	rm -rf $(BUILD)

.PHONY: all test clean
