# Thin wrapper over CMake: the real build lives in CMakeLists.txt.
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
# make install: where (PREFIX), and under which staging root (DESTDIR, for
# packagers and tests: files land in $(DESTDIR)$(PREFIX)/…).
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps layers test test-plain test-asan demo bench bench-peers fuzz install uninstall clean

all:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

deps:
	@bash scripts/deps.sh

test: deps layers
	@$(MAKE) --no-print-directory test-plain
	@$(MAKE) --no-print-directory test-asan

# The include graph against DESIGN.md §1 and the size limits of §2 (also
# ctest entries, lint.layers and lint.sizes).
layers:
	@python3 .ci/layers.py
	@python3 .ci/sizes.py

test-plain: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DLOOM_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

# The demo needs only the loom program; its build is shown one line a stage
# (scripts/quiet_build.sh: errors in full when there are any).
demo: deps
	@bash scripts/quiet_build.sh $(BUILD) $(JOBS) loom
	@bash scripts/demo.sh $(BUILD)/loom

# bin/loom, bin/loom-serve and bin/loom-acp, lib/libloom.so (with its SONAME link), include/loom.h and
# loom_protocol.h, lib/pkgconfig/loom.pc and share/man/man1/loom.1 under
# $(DESTDIR)$(PREFIX). Builds only what it installs, and leaves an existing
# build folder's type alone (docs/cli.md, *Installing*).
install:
	@bash scripts/quiet_build.sh $(BUILD) $(JOBS) loom loom-serve loom-mcp-server loom-acp libloom
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# Removes what the last `make install` from $(BUILD) installed: the files
# CMake's install_manifest.txt lists, under the same DESTDIR (give it again;
# the manifest holds the paths without it).
uninstall:
	@test -f $(BUILD)/install_manifest.txt || \
	  { echo "make uninstall: nothing installed from $(BUILD) ($(BUILD)/install_manifest.txt is missing)" >&2; exit 1; }
	@sed 's|^|$(DESTDIR)|' $(BUILD)/install_manifest.txt | tr '\n' '\0' | xargs -0 -r rm -fv --
	@rm -f $(BUILD)/install_manifest.txt

bench: deps all
	@bash bench/run.sh $(BUILD)

# Loom beside Codex CLI and Claude Code (installed from npm into a cache) on
# the same scripted tasks, in a loopback-only network namespace (docs/bench.md).
# Not part of make test: it needs the npm registry once and takes minutes.
bench-peers: deps all
	@bash bench/peers.sh $(BUILD)

fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DLOOM_FUZZ=ON \
	  -DLOOM_SANITIZE=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
