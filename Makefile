# Thin front for CMake: `make deps` (root, Debian), `make`, `make test`,
# `make install` (PREFIX, default /usr/local; DESTDIR honoured), `make clean`.
BUILD  ?= build
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local

# Everything zlb needs to build and test, from Debian's archive only
# (chromium renders zlb report's pages in tests/cli/test_report_chromium.py).
DEBIAN_PACKAGES = build-essential cmake ninja-build pkg-config \
	libjansson-dev libyaml-dev libxxhash-dev libcsv-dev libcmocka-dev \
	python3 python3-pytest python3-yaml groff-base \
	chromium fonts-dejavu-core

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
	ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

# zlb, libzlbtimer.so, the Python plugins, the man page zlb.1 and the bash
# completion, all generated at build time.
install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)

.PHONY: all deps test install clean
