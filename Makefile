# Thin front for CMake: `make deps` (root, Debian), `make`, `make test`,
# `make install` (PREFIX, default /usr/local; DESTDIR honoured), `make clean`.
#
# `make test` runs every test: the suite in build/ (the C unit tests, again
# under valgrind, the plugins, a few CLI tests), then build-sanitize/'s under
# ASan+UBSan (clang): the unit tests, the CLI tests (each CLI file runs in
# one of the two, tests/CMakeLists.txt says which), the fuzz harnesses replaying their corpus and
# fuzzing FUZZ_SECONDS (5) each: a brief run, so CI stays short. `make
# test-sanitize` runs the second half alone; `make fuzz-long` fuzzes each
# harness FUZZ_LONG_SECONDS (600), the real search for new crashes.
BUILD     ?= build
SAN_BUILD ?= build-sanitize
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
# Tests side by side: twice the cores, since the CLI tests spend much of
# their time waiting on the processes they start (on two cores -j 4 took the
# suite from 410 s to 353 s).
TEST_JOBS ?= $(shell echo $$((2 * $(JOBS))))
PREFIX    ?= /usr/local
FUZZ_SECONDS ?= 5
FUZZ_LONG_SECONDS ?= 600

# Everything zlb needs to build and test, from Debian's archive only
# (chromium renders zlb report's pages in tests/cli/test_report_chromium.py).
DEBIAN_PACKAGES = build-essential cmake ninja-build pkg-config \
	libjansson-dev libyaml-dev libxxhash-dev libcsv-dev libcmocka-dev \
	python3 python3-pytest python3-yaml groff-base \
	chromium fonts-dejavu-core \
	clang libclang-rt-14-dev valgrind

all: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja

deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends $$missing; \
	fi

test: all
	ctest --test-dir $(BUILD) -j $(TEST_JOBS) --output-on-failure
	$(MAKE) test-sanitize

$(SAN_BUILD)/build.ninja:
	CC=clang cmake -S . -B $(SAN_BUILD) -G Ninja -DZLB_SANITIZE=ON

sanitize: $(SAN_BUILD)/build.ninja
	cmake -S . -B $(SAN_BUILD) -DZLB_FUZZ_SECONDS=$(FUZZ_SECONDS) > /dev/null
	cmake --build $(SAN_BUILD) -j $(JOBS)

# A report from ASan or UBSan ends the program (no recovery), so the test
# fails; zlb and the unit tests also write every report into
# sanitizer-reports/, which must stay empty (a report from a process whose
# exit no test reads counts too).
test-sanitize: sanitize
	rm -rf $(SAN_BUILD)/sanitizer-reports && mkdir -p $(SAN_BUILD)/sanitizer-reports
	ctest --test-dir $(SAN_BUILD) -j $(TEST_JOBS) --output-on-failure
	@if [ -n "$$(ls -A $(SAN_BUILD)/sanitizer-reports)" ]; then \
		cat $(SAN_BUILD)/sanitizer-reports/*; \
		echo "sanitizer reports in $(SAN_BUILD)/sanitizer-reports (above)"; exit 1; fi
	@echo "sanitizers: no report"

# Only the harnesses, for longer (the next `make test` configures its brief
# FUZZ_SECONDS again).
fuzz-long:
	$(MAKE) sanitize FUZZ_SECONDS=$(FUZZ_LONG_SECONDS)
	ctest --test-dir $(SAN_BUILD) -j $(TEST_JOBS) -L fuzz --output-on-failure

# zlb, libzlbtimer.so, the Python plugins, the man page zlb.1 and the bash
# completion, all generated at build time.
install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(SAN_BUILD)

.PHONY: all deps test sanitize test-sanitize fuzz-long install clean
