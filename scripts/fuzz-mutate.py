#!/usr/bin/env python3
"""Mutation fuzzing of the `yolo` CLI's file loaders and flags.

WHAT IT DOES
  Takes valid seed inputs from the repository, mutates them (blindly and with
  format-aware mutations), runs the `yolo` binary on each mutant in its own
  temporary directory and classifies every run:

    ok         exit status 0
    error      exit status 1 and exactly one error line on stderr (the clean
               failure the CLI promises).  Lines that are not the failure
               itself are tolerated: "yolo: warning: ...", detect's summary
               "yolo: N input(s) failed", and for convert/eval progress lines
               that do not start with "yolo:".
    bad-error  exit status 1 but stderr is empty, has several error lines, or
               holds a raw stack trace
    crash      killed by a signal, an exit status other than 0/1, or a Swift
               "Fatal error" / "runtime failure" in the output
    hang       still running after --timeout seconds (then killed)

  A run can also carry flags (reported separately, they do not change the
  class): `tmp-leftover` (a hidden `.*.tmp` file left in the case directory),
  `partial-output` (an output file written by a run that failed),
  `overlong-message` (error line over 1000 characters), `control-chars`
  (error line holding control characters), `unprefixed` (the one error line
  does not start with "yolo: error:").

  Families (choose with --families, default all):
    cfg      darknet .cfg: byte flips, truncation, line deletion/duplication,
             edge numbers / non-numbers in key=value fields, sections repeated
             up to thousands of times, channels=1, unknown keys/sections.
             Every mutant runs `yolo info FILE.cfg`; every second one also
             `yolo detect --cfg FILE --weights Weights/yolov3-tiny.weights
             Samples/coffee.png` (those mutants favour weight-count-preserving
             changes such as pad/stride/size so that they reach the network).
    weights  darknet .weights: header fields (e.g. major = 0x7fffffff),
             truncation, appended bytes, NaN/Inf/1e30 written into the payload
             (randomly or into a chosen layer's batch-norm variances, scales,
             biases or weights).  Runs `yolo detect --cfg Weights/yolov3-tiny.cfg
             --weights FILE Samples/coffee.png` (every 4th: `yolo info --weights`).
    model    SwiftYOLO .yolo (default model as seed): raw byte flips and
             truncation (checksum then fails), and field mutations that keep
             the checksum valid: the file is parsed into header, description,
             labels, tensor records and blobs (format of
             Sources/YOLO/Model/ModelFile*.swift), one field is changed (or a
             layer inserted/removed/swapped, a label or blob changed), the file
             is re-encoded and the FNV-1a 4-lane checksum recomputed.  Some
             mutants also regenerate the weight blobs with the sizes the new
             description needs, so they get past the tensor checks into the
             geometry and forward pass.  Each mutant runs `yolo detect --model
             FILE Samples/coffee.png` (every third with --residency codes) and
             `yolo info FILE`.
    npy      .npy for `yolo forward --model Weights/yolov3-tiny-lut8.yolo
             --input FILE.npy --out out`: shapes (huge, negative, zero,
             mismatched with the payload, other ranks), dtype strings,
             fortran_order, version byte, header length, truncation, NaN/Inf data.
    cli      odd flag values for detect, bench, eval, convert, forward, info,
             track-object (--box, --level, --format, --save, --from-detection,
             sources: empty folders, frames of two sizes) and eval-sot
             (--size 8192x8192, 100000x100000, 0x0, negative numbers,
             --conf 1.5, --iou 0, --classes '', --names with --model, empty
             strings, unknown flags, very long strings, odd environment).  The
             list of distinct single-flag cases holds about 470 entries, taken
             round-robin across subcommands (so --cases 300 covers every
             subcommand; --cases cli=473 runs them all); with --cases above
             that, the rest are random combinations of two or three of them on
             one subcommand.  >= 90 cases is enough for this family if you need
             it shorter.
    image    JPEG/PNG for `yolo detect FILE` (default model): byte flips,
             truncation, SOF/IHDR sizes (huge, zero), component counts,
             sampling factors, marker lengths, EXIF orientation / IFD
             mutations, PNG bit depth / colour type / interlace / chunk
             mutations with valid CRCs, recompressed IDAT with bad filter bytes.
             Every 4th run adds --save out, every 5th --full-decode.
    onnx     ONNX protobuf (the 5 KB fuzz seed, the unit tests' YOLOv8 graph and the 40 KB YOLO11 seed):
             byte mutations, length prefixes set to edge values or replaced by
             10-byte varints, operator/attribute/metadata names changed.  Runs
             `yolo convert --onnx FILE -o out.yolo`.
    coco     COCO annotation + results JSON for `yolo eval --annotations A
             --results R`: values replaced by huge/negative/NaN numbers, wrong
             types, deep nesting, missing keys, byte flips; every 10th case runs
             the model over a small image folder (`--images`).

  Each case gets its own RNG seeded from (--seed, family, index), so
  `--replay ID` re-creates exactly one case (IDs look like `model-0042-detect`).

OUTPUT
  --out DIR (default /tmp/fuzz-mutate-out):
    results.jsonl        one JSON line per run (id, class, rc, message, flags...)
    summary.txt          the tables printed at the end
    crashes/<ID>/        for every crash and hang: the input file(s) (see
                         below), stderr.txt, stdout.txt and repro.sh (a one-line
                         reproducer: `cd <that dir> && <yolo> <args>`).
                         Inputs larger than 4 MB are saved only for the first 3
                         runs of each signature; the others' repro.sh re-creates
                         the input with `--replay`.
    reproducers.txt      one line per crash/hang: id, class, signature, repro.
    snapshot/bin/yolo    the binary actually run: a copy of --yolo taken at
                         start, so that a rebuild during the run does not mix
                         two builds (snapshot/Weights links to the repo's
                         Weights, where the CLI looks for its default model).
                         --no-snapshot runs --yolo in place.  To re-test a
                         crash with a newer build, run its repro.sh command
                         with the repo binary instead.
  Exit status: 1 if any crash or hang was found, else 0.

HOW TO RUN
  python3 scripts/fuzz-mutate.py                      # all families, 300 each
  python3 scripts/fuzz-mutate.py --cases 20           # quick smoke run
  python3 scripts/fuzz-mutate.py --families model,npy --cases 500 --jobs 2
  python3 scripts/fuzz-mutate.py --cases 300,weights=150   # per-family counts
  python3 scripts/fuzz-mutate.py --replay model-0042-detect   # one case, verbose

HOW LONG
  On 2 cores with --jobs 2 and 300 cases per family: about 2,550 runs, most of
  them 0.1-0.5 s (forward passes, calibrated conversions and decompression
  bombs take 2-25 s); roughly 15-20 minutes, plus --timeout for every hang
  (calibrated `convert` runs in the cli family get 4x --timeout).  --cases 20
  takes about 1 minute.

Only the Python 3 standard library and numpy are used.  Nothing here needs the
network.  Each run is limited to --mem-limit-mb of address space (default
8192) so that an allocation bomb fails inside the child instead of exhausting
the machine; such a failure is counted as a crash (the loader accepted an input
that asks for that much memory).
"""

import argparse
import concurrent.futures
import copy
import json
import math
import os
import random
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILIES = ["cfg", "weights", "model", "npy", "cli", "image", "coco", "onnx"]

# Files of the repository used as seeds and fixed arguments (absolute paths).
CFG = os.path.join(REPO, "Weights/yolov3-tiny.cfg")
WEIGHTS = os.path.join(REPO, "Weights/yolov3-tiny.weights")
NAMES = os.path.join(REPO, "Weights/coco.names")
MODEL = os.path.join(REPO, "Weights/yolov3-tiny-lut8.yolo")
COFFEE = os.path.join(REPO, "Samples/coffee.png")
SAMPLES = [os.path.join(REPO, "Samples", n) for n in ("astronaut.png", "camera.png", "chelsea.png", "coffee.png")]
IMAGE_FIXTURES = os.path.join(REPO, "Tests/YOLOTests/Fixtures/Image")
EVAL_FIXTURES = os.path.join(REPO, "Tests/YOLOTests/Fixtures/eval")
ONNX_SEEDS = [os.path.join(REPO, "Fuzz/Corpus/fuzz-onnx/yolov8-mini.onnx"), os.path.join(REPO, "Tests/YOLOTests/Fixtures/onnx/yolov8-tiny-random.onnx"),
              os.path.join(REPO, "Fuzz/Corpus/fuzz-onnx/yolo11-mini.onnx")]

BIG_INPUT = 4 << 20          # inputs above this size are saved only a few times per signature
BIG_INPUT_SAVES = 3

# ----------------------------------------------------------------------------------------------
# Interesting values
# ----------------------------------------------------------------------------------------------

INT_EDGES = [0, 1, -1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256,
             1023, 1024, 1025, 4095, 4096, 65535, 65536, 65537, 1 << 20, 1 << 24, (1 << 24) + 1,
             2**31 - 1, -2**31, -2, -1024, 0x40000000, -0x40000000, 1000000, 1000001]
FLOAT_EDGES = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e30, -1e30, 3.4e38, -3.4e38,
               1e-45, 1e-38, -1.0, 0.5, 1e10, 65536.0, 2.0**31, -2.0**31, 1e-30]
CFG_VALUES = ["0", "1", "-1", "2", "3", "-2147483648", "2147483647", "2147483648", "4294967296",
              "9223372036854775807", "9223372036854775808", "99999999999999999999999999", "65536",
              "65537", "1024", "1025", "100000", "16777216", "1e30", "-1e30", "1e999", "nan", "inf",
              "-inf", "", "abc", "0x20", "1.5", "-0.0", "+3", "1,2", ",", "3,,4", "\u0663", "1_000",
              "0b1", "0.0000001", "-416", "5", "7", "13", "32", "33", "255"]


def i32(v):
    """Wraps an integer into the int32 range."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def pick_int(rng):
    return rng.choice(INT_EDGES) if rng.random() < 0.85 else rng.randint(-5, 5000)


# ----------------------------------------------------------------------------------------------
# Generic byte mutations
# ----------------------------------------------------------------------------------------------

def flip_bytes(rng, data, count=None, start=0, end=None):
    """Flips random bits (or writes an edge byte) at `count` random positions in [start, end)."""
    b = bytearray(data)
    end = len(b) if end is None else min(end, len(b))
    if end <= start:
        return b
    for _ in range(count or rng.choice([1, 1, 2, 3, 4, 8, 16, 32])):
        p = rng.randrange(start, end)
        b[p] = rng.choice([b[p] ^ (1 << rng.randrange(8)), 0x00, 0xFF, 0x7F, 0x80, rng.randrange(256)])
    return b


def truncate(rng, data, lo=0):
    n = len(data)
    cut = rng.choice([lo, lo + 1, n // 2, n - 1, rng.randrange(lo, max(lo + 1, n)),
                      rng.randrange(lo, min(n, lo + 200) or 1)])
    return bytearray(data[:max(0, min(cut, n))])


def append_junk(rng, data):
    extra = rng.choice([b"\0", b"\0" * 3, b"\0" * 4, b"\xff" * 8, bytes(64),
                        bytes(rng.randrange(256) for _ in range(rng.choice([1, 7, 100, 4000]))),
                        b"garbage\n"])
    return bytearray(data) + extra


def splice_delete(rng, data):
    b = bytearray(data)
    if len(b) < 4:
        return b
    p = rng.randrange(len(b) - 1)
    del b[p:p + rng.choice([1, 2, 4, 8, 64, 1000])]
    return b


def splice_duplicate(rng, data):
    b = bytearray(data)
    if len(b) < 4:
        return b
    p = rng.randrange(len(b) - 1)
    n = rng.choice([1, 4, 16, 256])
    b[p:p] = b[p:p + n]
    return b


def generic_bytes(rng, data, start=0):
    op = rng.choice(["flip", "flip", "flip", "truncate", "append", "delete", "duplicate"])
    if op == "flip":
        return flip_bytes(rng, data, start=start), "byte flips"
    if op == "truncate":
        out = truncate(rng, data)
        return out, "truncated to %d of %d bytes" % (len(out), len(data))
    if op == "append":
        return append_junk(rng, data), "appended bytes"
    if op == "delete":
        return splice_delete(rng, data), "deleted bytes"
    return splice_duplicate(rng, data), "duplicated bytes"


# ----------------------------------------------------------------------------------------------
# Cases, running and classification
# ----------------------------------------------------------------------------------------------

@dataclass
class Case:
    id: str
    family: str
    label: str                          # what was mutated, one line
    argv: list                          # arguments after the yolo binary; relative paths = case dir
    files: dict = field(default_factory=dict)   # relative path -> bytes (written into the case dir)
    dirs: list = field(default_factory=list)    # empty directories to create
    env: dict = field(default_factory=dict)     # extra environment variables
    links: dict = field(default_factory=dict)   # relative symlink path -> target
    timeout: float = 0.0                        # seconds; 0 means --timeout


@dataclass
class Result:
    case: Case
    cls: str
    rc: int
    seconds: float
    message: str = ""
    signature: str = ""
    flags: list = field(default_factory=list)
    stdout: bytes = b""
    stderr: bytes = b""


BENIGN = [re.compile(r"^yolo: warning: "), re.compile(r"^yolo: \d+ input\(s\) failed$")]
STACK = re.compile(r"(Backtrac|Thread \d+ .*crashed|^\s*#?\d+\s+0x[0-9a-f]{6,}|Stack dump|Current stack trace)", re.M)
FATAL = re.compile(r"^.*(Fatal error|runtime failure).*$", re.M)
FRAME = re.compile(r" at (\S*?Sources/\S+?\.swift):(\d+)")


def crash_signature(text, rc):
    """First "Fatal error"/"runtime failure" line (addresses and paths shortened) plus the first
    frame inside the project's sources, or the signal / exit status."""
    m = FATAL.search(text)
    if m:
        line = m.group(0).strip().strip("*").strip()
        line = re.sub(r"0x[0-9a-f]+", "0x…", line)
        line = re.sub(r"^\S*/(\w+\.swift:\d+: )", r"\1", line)
        line = re.sub(r" in yolo at //<compiler-generated>", "", line)
        line = re.sub(r"^\s*\d+ \[[^\]]*\]\s+", "", line)
    elif rc < 0:
        try:
            line = "killed by %s" % signal.Signals(-rc).name
        except ValueError:
            line = "killed by signal %d" % -rc
    else:
        line = "exit status %d" % rc
    f = FRAME.search(text)
    where = " @ %s:%s" % (os.path.basename(f.group(1)), f.group(2)) if f else ""
    return line + where


TIMEOUT = [20.0]


def timeout_of(case):
    return case.timeout or TIMEOUT[0]


def classify(case, rc, out, err, timed_out):
    """Returns (class, message or signature, flags)."""
    text = err.decode("utf-8", "replace")
    both = text + "\n" + out.decode("utf-8", "replace")
    if timed_out:
        # grouped by subcommand and mutation kind (numbers masked)
        kind = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", case.label)[:100]
        return "hang", "no exit within %gs: %s: %s" % (timeout_of(case), case.argv[0] if case.argv else "", kind), []
    if rc < 0 or rc not in (0, 1) or FATAL.search(both):
        return "crash", crash_signature(both, rc), []
    if rc == 0:
        return "ok", "", []
    lines = [l for l in text.split("\n") if l.strip()]
    if not lines:
        return "bad-error", "empty stderr", []
    if STACK.search(text):
        return "bad-error", "stack trace: " + lines[0][:200], []
    progress_ok = case.argv and case.argv[0] in ("convert", "eval")
    errors = [l for l in lines if l.startswith("yolo: error:")]
    others = [l for l in lines if not l.startswith("yolo: error:") and not any(b.search(l) for b in BENIGN)
              and not (progress_ok and not l.startswith("yolo:"))]
    flags = []
    if len(errors) == 1 and not others:
        message = errors[0]
    elif not errors and len(others) == 1:
        message = others[0]
        flags.append("unprefixed")
    elif not errors and not others:
        # only warnings: e.g. eval --images reports unreadable images as warnings and exits 1
        message = lines[-1]
        flags.append("warnings-only")
    else:
        return "bad-error", "%d message lines: %s" % (len(errors) + len(others), (errors + others)[0][:200]), []
    if len(message) > 1000:
        flags.append("overlong-message")
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", message):
        flags.append("control-chars")
    return "error", message, flags


class Runner:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.running = set()
        self.saved_big = {}          # signature -> count of big inputs saved
        self.stopping = False

    def _limits(self):
        if self.args.mem_limit_mb > 0:
            limit = self.args.mem_limit_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def run(self, case):
        if self.stopping:
            return None
        d = tempfile.mkdtemp(prefix=case.id + "-", dir=self.args.workdir)
        try:
            materialize(case, d)
            before = set(walk(d))
            env = dict(os.environ)
            env.update(case.env)
            t0 = time.monotonic()
            p = subprocess.Popen([self.args.yolo] + case.argv, cwd=d, env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                 preexec_fn=self._limits)
            with self.lock:
                self.running.add(p)
            timed_out = False
            try:
                out, err = p.communicate(timeout=timeout_of(case))
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(p)
                out, err = p.communicate()
            finally:
                with self.lock:
                    self.running.discard(p)
            seconds = time.monotonic() - t0
            cls, message, flags = classify(case, p.returncode, out, err, timed_out)
            after = set(walk(d))
            new = sorted(after - before)
            tmp = [f for f in after if os.path.basename(f).startswith(".") and f.endswith(".tmp")]
            if tmp:
                flags.append("tmp-leftover:" + ",".join(sorted(tmp))[:300])
            produced = [f for f in new if f not in tmp]
            if cls != "ok" and produced:
                flags.append("partial-output:" + ",".join(produced)[:300])
            r = Result(case, cls, p.returncode, seconds, message if cls != "crash" and cls != "hang" else "",
                       message if cls in ("crash", "hang") else "", flags, out, err)
            if cls in ("crash", "hang"):
                self.save(r, d)
            return r
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def save(self, r, d):
        """Copies a crashing/hanging case's inputs with its output and a one-line reproducer."""
        case = r.case
        dest = os.path.join(self.args.out, "crashes", case.id)
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        big = sum(len(v) for v in case.files.values()) > BIG_INPUT
        keep = True
        if big:
            with self.lock:
                n = self.saved_big.get(r.signature, 0)
                keep = n < BIG_INPUT_SAVES
                self.saved_big[r.signature] = n + 1
        if keep:
            materialize(case, dest)
        envs = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in case.env.items())
        cmd = " ".join(shlex.quote(a) for a in [self.args.yolo] + case.argv)
        if keep:
            repro = "cd %s && %s%s" % (shlex.quote(dest), envs + " " if envs else "", cmd)
        else:
            repro = "python3 %s --yolo %s --seed %d --replay %s   # input not saved (%d bytes)" % (
                shlex.quote(os.path.abspath(__file__)), shlex.quote(self.args.yolo), self.args.seed, case.id,
                sum(len(v) for v in case.files.values()))
        r.repro = repro
        with open(os.path.join(dest, "repro.sh"), "w") as f:
            f.write("#!/bin/sh\n# %s: %s\n# %s\n%s\n" % (r.cls, r.signature, case.label, repro))
        with open(os.path.join(dest, "stderr.txt"), "wb") as f:
            f.write(r.stderr[:200000])
        with open(os.path.join(dest, "stdout.txt"), "wb") as f:
            f.write(r.stdout[:200000])

    def stop(self):
        self.stopping = True
        with self.lock:
            for p in list(self.running):
                kill_group(p)


def materialize(case, d):
    """Writes a case's input files, empty folders (a folder named `ro` is made read-only; that
    only bites when not running as root) and symlinks into directory `d`."""
    for rel in case.dirs:
        os.makedirs(os.path.join(d, rel), exist_ok=True)
        if rel == "ro":
            os.chmod(os.path.join(d, rel), 0o555)
    for rel, data in case.files.items():
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    for rel, target in case.links.items():
        os.symlink(target, os.path.join(d, rel))


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def walk(d):
    for root, dirs, files in os.walk(d):
        for name in files:
            yield os.path.relpath(os.path.join(root, name), d)


def case_rng(seed, family, index):
    return random.Random("%d:%s:%d" % (seed, family, index))


# ----------------------------------------------------------------------------------------------
# Family 1: darknet .cfg
# ----------------------------------------------------------------------------------------------

def parse_cfg(text):
    """[(name, [(key, value)])] of a darknet cfg (comments and blank lines dropped)."""
    sections = []
    for raw in text.split("\n"):
        line = "".join(raw.split())
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            sections.append((line[1:-1].lower(), []))
        elif "=" in line and sections:
            k, v = line.split("=", 1)
            sections[-1][1].append((k.lower(), v))
    return sections


def render_cfg(sections):
    out = []
    for name, entries in sections:
        out.append("[%s]" % name)
        out.extend("%s=%s" % kv for kv in entries)
        out.append("")
    return "\n".join(out)


def set_key(section, key, value):
    entries = section[1]
    for i, (k, _) in enumerate(entries):
        if k == key:
            entries[i] = (k, value)
            return
    entries.append((key, value))


CFG_SNIPPETS = [
    "[route]\nlayers=-1000", "[route]\nlayers=0", "[route]\nlayers=-1,-1,-1,-1,-1,-1,-1,-1",
    "[route]\nlayers=", "[route]\nlayers=-1\ngroups=0", "[route]\nlayers=-1\ngroups=2\ngroup_id=5",
    "[route]\nlayers=-1\ngroups=-1", "[route]\nlayers=100", "[route]\nlayers=-1,2147483647",
    "[shortcut]\nfrom=-1", "[shortcut]\nfrom=-3\nactivation=linear", "[shortcut]\nfrom=-100",
    "[shortcut]\nfrom=0", "[upsample]\nstride=0", "[upsample]\nstride=-2", "[upsample]\nstride=1000",
    "[upsample]\nstride=65536", "[maxpool]\nsize=0\nstride=1", "[maxpool]\nsize=1000\nstride=1",
    "[maxpool]\nsize=2\nstride=0", "[maxpool]\nsize=2\nstride=-1", "[maxpool]\nsize=3\nstride=1\npadding=1000",
    "[maxpool]\nsize=2\nstride=2\npadding=-5", "[convolutional]\nfilters=0\nsize=1\nstride=1\nactivation=leaky",
    "[convolutional]\nfilters=16\nsize=0\nstride=1", "[convolutional]\nfilters=16\nsize=3\nstride=0",
    "[convolutional]\nfilters=16\nsize=3\nstride=1\npad=1\ngroups=2", "[convolutional]\nfilters=16\nsize=3\ndilation=2",
    "[convolutional]\nfilters=65536\nsize=1", "[convolutional]\nfilters=16\nsize=3\nactivation=mish",
    "[yolo]\nmask=0\nanchors=10,14\nclasses=0", "[yolo]\nmask=7\nanchors=10,14\nclasses=80",
    "[yolo]\nmask=0,1\nanchors=10\nclasses=80", "[yolo]\nmask=-1\nanchors=10,14\nclasses=80",
    "[yolo]\nmask=0\nanchors=0,0\nclasses=80", "[yolo]\nmask=0\nanchors=nan,inf\nclasses=80",
    "[yolo]\nmask=\nanchors=\nclasses=80", "[dropout]\nprobability=.5", "[reorg]\nstride=2", "[local]\nsize=3",
    "[crop]\ncrop_width=10", "[softmax]", "[net]\nwidth=416\nheight=416\nchannels=3", "[foo]\nbar=1",
    "[]", "[[convolutional]]", "[convolutional", "convolutional]", "=5", "novalue", "[cost]",
    "[scale_channels]\nfrom=-2", "[sam]\nfrom=-2", "[implicit_add]", "[avgpool]",
]

UNKNOWN_KEYS = ["foo=bar", "size2=3", "dilation=2", "groups=2", "stride_x=2", "stride_y=3",
                "antialiasing=1", "binary=1", "xnor=1", "new_coords=1", "weights_type=per_feature",
                "activation=mish", "activation=swish", "activation=", "activation=LEAKY", "flipped=1",
                "padding=1000", "pad=-1", "share_index=0", "batch_normalize=2", "batch_normalize=-1",
                "letter_box=1", "max=1000", "num=1000000", "classes=-5", "scale_x_y=nan", "scale_x_y=-1",
                "beta_nms=nan", "nms_kind=bogus", "mask=1,2,3,4,5,6,7,8,9", "anchors=1", "="]

# Keys whose change keeps every convolution's weight count: detect then reaches the network.
GEOMETRY_KEYS = {"convolutional": ["pad", "padding", "stride", "activation"],
                 "maxpool": ["size", "stride", "padding"], "upsample": ["stride"],
                 "yolo": ["mask", "anchors", "num", "scale_x_y", "classes"], "net": ["width", "height"],
                 "route": ["groups", "group_id"], "shortcut": ["from"]}


def mutate_cfg(rng, text, geometry_only):
    """One cfg mutant and its label."""
    sections = parse_cfg(text)
    lines = text.split("\n")
    if geometry_only and rng.random() < 0.75:
        ops = ["geometry"] * 6 + ["global"] * 3 + ["net-size"] * 2 + ["channels"]
    else:
        ops = (["flip"] * 2 + ["truncate"] * 2 + ["delete-lines", "duplicate-lines", "swap-lines"] * 2 +
               ["value"] * 6 + ["repeat-section"] * 3 + ["channels", "net-size", "unknown-key", "unknown-section",
                                                         "snippet", "snippet", "encoding", "long-line",
                                                         "drop-section", "global", "geometry", "list-value",
                                                         "upsample-bomb", "maxpool-chain"])
    op = rng.choice(ops)
    label = op
    if op == "flip":
        return flip_bytes(rng, text.encode()), "byte flips"
    if op == "truncate":
        out = truncate(rng, text.encode())
        return out, "truncated to %d bytes" % len(out)
    if op in ("delete-lines", "duplicate-lines", "swap-lines"):
        k = rng.choice([1, 1, 2, 5, 20])
        for _ in range(k):
            i = rng.randrange(len(lines))
            if op == "delete-lines":
                del lines[i]
            elif op == "duplicate-lines":
                lines.insert(i, lines[i])
            else:
                j = rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines).encode(), "%s x%d" % (op, k)
    if op == "encoding":
        kind = rng.choice(["crlf", "bom", "nul", "invalid-utf8", "tabs", "utf16", "cr-only", "trailing-comment"])
        if kind == "crlf":
            return text.replace("\n", "\r\n").encode(), "CRLF line endings"
        if kind == "bom":
            return b"\xef\xbb\xbf" + text.encode(), "UTF-8 BOM"
        if kind == "nul":
            b = bytearray(text.encode())
            b.insert(rng.randrange(len(b)), 0)
            return b, "NUL byte inserted"
        if kind == "invalid-utf8":
            b = bytearray(text.encode())
            b[rng.randrange(len(b)):0] = b"\xff\xfe\xc3"
            return b, "invalid UTF-8 inserted"
        if kind == "tabs":
            return text.replace("=", "\t=\t").encode(), "tabs around ="
        if kind == "utf16":
            return text.encode("utf-16"), "UTF-16 encoded"
        if kind == "cr-only":
            return text.replace("\n", "\r").encode(), "CR-only line endings"
        return "\n".join(l + " # c=1 [x]" if "=" in l else l for l in lines).encode(), "trailing comments"
    if op == "long-line":
        n = rng.choice([10000, 100000, 1000000])
        kind = rng.choice(["value", "key", "comment", "section"])
        i = rng.randrange(len(lines))
        lines.insert(i, {"value": "filters=" + "9" * n, "key": "k" * n + "=1", "comment": "#" + "x" * n,
                         "section": "[" + "s" * n + "]"}[kind])
        return "\n".join(lines).encode(), "%d-character %s line" % (n, kind)
    layer_idx = [i for i in range(1, len(sections))]
    if op == "value":
        cands = [(i, j) for i, (_, es) in enumerate(sections) for j in range(len(es))]
        i, j = rng.choice(cands)
        v = rng.choice(CFG_VALUES)
        sections[i][1][j] = (sections[i][1][j][0], v)
        label = "[%s]#%d %s=%r" % (sections[i][0], i, sections[i][1][j][0], v)
    elif op == "list-value":
        cands = [(i, j) for i, (_, es) in enumerate(sections) for j, (k, _) in enumerate(es)
                 if k in ("layers", "mask", "anchors", "steps", "scales")]
        i, j = rng.choice(cands)
        k, v = sections[i][1][j]
        parts = v.split(",")
        kind = rng.choice(["empty-item", "huge-item", "many-items", "negative", "drop", "nan"])
        if kind == "empty-item":
            parts.insert(rng.randrange(len(parts) + 1), "")
        elif kind == "huge-item":
            parts[rng.randrange(len(parts))] = rng.choice(["2147483647", "99999999999", "-2147483648"])
        elif kind == "many-items":
            parts = parts * rng.choice([10, 1000, 50000])
        elif kind == "negative":
            parts[rng.randrange(len(parts))] = "-" + str(rng.choice([1, 2, 5, 30, 1000]))
        elif kind == "drop":
            parts = parts[:-1]
        else:
            parts[rng.randrange(len(parts))] = rng.choice(["nan", "inf", "0", "-0", "1e-40"])
        sections[i][1][j] = (k, ",".join(parts))
        label = "[%s]#%d %s list: %s" % (sections[i][0], i, k, kind)
    elif op == "repeat-section":
        i = rng.choice(layer_idx)
        n = rng.choice([2, 3, 10, 100, 1000, 3000, 10000])
        sections[i + 1:i + 1] = [copy.deepcopy(sections[i]) for _ in range(n - 1)]
        label = "[%s]#%d repeated %d times" % (sections[i][0], i, n)
    elif op == "upsample-bomb":
        n = rng.choice([8, 16, 24, 31, 32, 40, 64])
        i = rng.choice(layer_idx)
        sections[i:i] = [("upsample", [("stride", "2")]) for _ in range(n)]
        label = "%d [upsample] stride=2 inserted at %d" % (n, i)
    elif op == "maxpool-chain":
        n = rng.choice([6, 9, 12, 20, 100])
        i = rng.choice(layer_idx[:6])
        sections[i:i] = [("maxpool", [("size", "2"), ("stride", "2")]) for _ in range(n)]
        label = "%d [maxpool] stride=2 inserted at %d" % (n, i)
    elif op == "channels":
        v = rng.choice(["1", "1", "2", "4", "0", "-3", "1000000", "65536"])
        set_key(sections[0], "channels", v)
        label = "[net] channels=%s" % v
    elif op == "net-size":
        key = rng.choice(["width", "height", "both"])
        v = rng.choice(["0", "1", "31", "32", "33", "64", "100", "417", "1024", "8192", "65536", "100000",
                        "-416", "2147483647", "4294967712"])
        for k in (["width", "height"] if key == "both" else [key]):
            set_key(sections[0], k, v)
        label = "[net] %s=%s" % (key, v)
    elif op == "unknown-key":
        i = rng.randrange(len(sections))
        k, v = rng.choice(UNKNOWN_KEYS).split("=", 1)
        sections[i][1].append((k, v))
        label = "[%s]#%d += %s=%s" % (sections[i][0], i, k, v)
    elif op == "unknown-section" or op == "snippet":
        snippet = rng.choice(CFG_SNIPPETS) if op == "snippet" else "[%s]\nx=1" % rng.choice(
            ["foo", "dropout", "reorg", "local", "crop", "softmax", "net", "NET", "Convolutional", "yolo3",
             "region", "detection", "gaussian_yolo", "conv_lstm", "connected"])
        i = rng.randrange(1, len(lines))
        # insert before a section header so that the snippet stands as its own section
        while i < len(lines) and not lines[i].startswith("["):
            i += 1
        lines[i:i] = snippet.split("\n") + [""]
        return "\n".join(lines).encode(), "inserted %r at line %d" % (snippet.replace("\n", "; "), i + 1)
    elif op == "drop-section":
        i = rng.choice(layer_idx + [0])
        label = "dropped [%s]#%d" % (sections[i][0], i)
        del sections[i]
    elif op == "global":
        kind = rng.choice(["pad=0", "pad=1", "stride=2", "stride=1", "size=1", "size=5", "activation=linear",
                           "activation=logistic", "activation=relu", "batch_normalize=0", "padding=3"])
        k, v = kind.split("=")
        target = {"pad": "convolutional", "size": rng.choice(["convolutional", "maxpool"]),
                  "stride": rng.choice(["convolutional", "maxpool"]), "activation": "convolutional",
                  "batch_normalize": "convolutional", "padding": "maxpool"}[k]
        for s in sections:
            if s[0] == target:
                set_key(s, k, v)
        label = "every [%s] %s" % (target, kind)
    if op == "geometry":
        cands = [(i, k) for i, (n, _) in enumerate(sections) for k in GEOMETRY_KEYS.get(n, [])]
        i, k = rng.choice(cands)
        v = rng.choice({"pad": ["0", "2", "-1", "1000"], "padding": ["0", "1", "2", "3", "7", "-1", "-2", "100", "1000"],
                        "stride": ["1", "2", "3", "4", "0", "-1", "13", "1000"], "size": ["1", "2", "3", "4", "0", "-1", "13", "14", "1000"],
                        "activation": ["linear", "relu", "logistic", "mish", "", "tanh"],
                        "mask": ["0,1,2", "6,7,8", "0", "", "-1", "0,0,0", "5,4,3", "0,1,2,3,4,5,6,7,8,9,10"],
                        "anchors": ["1,1,1,1,1,1", "0,0,0,0,0,0,0,0,0,0,0,0", "1e30,1e30,1e30,1e30,1e30,1e30,1,1,1,1,1,1",
                                    "10,14", "-10,-14,23,27,37,58,81,82,135,169,344,319", "nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan"],
                        "num": ["0", "3", "9", "-1", "1000"], "scale_x_y": ["0", "-1", "nan", "1e30", "1.05"],
                        "classes": ["0", "1", "79", "81", "-1", "1000000"], "width": ["32", "64", "96", "128", "33", "0", "8192"],
                        "height": ["32", "64", "96", "128", "33", "0", "8192"], "groups": ["2", "0", "3", "-1", "1000"],
                        "group_id": ["1", "-1", "5"], "from": ["-1", "-2", "-3", "-100", "0", "5"]}[k])
        set_key(sections[i], k, v)
        label = "[%s]#%d %s=%r" % (sections[i][0], i, k, v)
    return render_cfg(sections).encode(), label


def safe_mutate_cfg(rng, text, geometry_only):
    """mutate_cfg, falling back to byte flips when the text is too broken for the chosen change."""
    try:
        return mutate_cfg(rng, text, geometry_only)
    except (IndexError, ValueError, KeyError):
        return flip_bytes(rng, text.encode()), "byte flips (no place for the chosen change)"


def gen_cfg(rng, index, ctx):
    with_detect = index % 2 == 1
    data, label = safe_mutate_cfg(rng, ctx["cfg_text"], geometry_only=with_detect)
    if rng.random() < 0.15:          # a second mutation on top
        data2, label2 = safe_mutate_cfg(rng, bytes(data).decode("utf-8", "replace"), geometry_only=with_detect)
        data, label = data2, label + " + " + label2
    files = {"mutant.cfg": bytes(data)}
    base = "cfg-%04d" % index
    cases = [Case(base + "-info", "cfg", label, ["info", "mutant.cfg"], files)]
    if with_detect:
        cases.append(Case(base + "-detect", "cfg", label,
                          ["detect", "--cfg", "mutant.cfg", "--weights", WEIGHTS, COFFEE], files))
    return cases


# ----------------------------------------------------------------------------------------------
# Family 2: darknet .weights
# ----------------------------------------------------------------------------------------------

def weight_layout(text):
    """For the seed cfg: per convolution (index, filters, batch_normalize, weight count) in file order."""
    sections = parse_cfg(text)
    net = dict(sections[0][1])
    channels = int(net.get("channels", 3))
    out_c = []
    convs = []
    for idx, (name, entries) in enumerate(sections[1:]):
        e = dict(entries)
        c = out_c[-1] if out_c else channels
        if name == "convolutional":
            f, s = int(e["filters"]), int(e.get("size", 1))
            convs.append((idx, f, int(e.get("batch_normalize", 0)), f * c * s * s))
            c = f
        elif name == "route":
            refs = [int(x) for x in e["layers"].split(",")]
            c = sum(out_c[r if r >= 0 else idx + r] for r in refs)
        out_c.append(c)
    return convs


def gen_weights(rng, index, ctx):
    seed = ctx["weights"]
    b = bytearray(seed)       # one 35 MB copy per case
    header = 20               # major 0, minor 2: int64 seen
    convs = ctx["weight_layout"]
    op = rng.choice(["header"] * 4 + ["truncate"] * 2 + ["append"] * 2 + ["floats"] * 4 + ["layer-floats"] * 4 +
                    ["flip"] * 2 + ["shift", "tiny-file"])
    if op == "header":
        kind = rng.choice(["major", "minor", "revision", "seen", "ffffff7f", "both"])
        if kind == "ffffff7f":
            b[0:4] = b"\xff\xff\xff\x7f"
            label = "header: first 4 bytes ff ff ff 7f"
        elif kind == "both":
            ma, mi = rng.choice(INT_EDGES), rng.choice(INT_EDGES)
            struct.pack_into("<ii", b, 0, i32(ma), i32(mi))
            label = "header: major=%d minor=%d" % (i32(ma), i32(mi))
        elif kind == "seen":
            v = rng.choice([0, 2**63 - 1, 2**64 - 1, 2**32])
            struct.pack_into("<Q", b, 12, v)
            label = "header: seen=%d" % v
        else:
            off = {"major": 0, "minor": 4, "revision": 8}[kind]
            v = i32(rng.choice(INT_EDGES))
            struct.pack_into("<i", b, off, v)
            label = "header: %s=%d" % (kind, v)
    elif op == "truncate":
        n = rng.choice([0, 3, 15, 16, 19, 20, 24, len(b) // 2, len(b) - 1, len(b) - 4, len(b) - 3,
                        rng.randrange(len(b))])
        del b[n:]
        label = "truncated to %d bytes" % n
    elif op == "append":
        extra = rng.choice([1, 3, 4, 8, 12, 4000, 1 << 20])
        b += bytes(extra) if rng.random() < 0.5 else struct.pack("<f", float("nan")) * (extra // 4) + bytes(extra % 4)
        label = "appended %d bytes" % extra
    elif op == "floats":
        v = rng.choice(FLOAT_EDGES)
        n = rng.choice([1, 10, 1000, 100000])
        for _ in range(n):
            struct.pack_into("<f", b, header + 4 * rng.randrange((len(b) - header) // 4), v)
        label = "%d random payload floats = %r" % (n, v)
    elif op == "layer-floats":
        # Darknet layout per convolution: biases, [scales, means, variances], weights.
        pos = header
        target = rng.randrange(len(convs))
        for ci, (idx, f, bn, wc) in enumerate(convs):
            parts = [("biases", f)] + ([("scales", f), ("means", f), ("variances", f)] if bn else []) + [("weights", wc)]
            if ci == target:
                name, count = rng.choice(parts)
                start = pos + 4 * sum(c for n, c in parts[:parts.index((name, count))])
                v = rng.choice(FLOAT_EDGES + [-1e-5, -1.0])
                every = rng.choice([True, False])
                if every:
                    b[start:start + 4 * count] = struct.pack("<f", v) * count
                else:
                    struct.pack_into("<f", b, start + 4 * rng.randrange(count), v)
                label = "layer %d %s: %s = %r" % (idx, name, "all" if every else "one", v)
                break
            pos += 4 * sum(c for _, c in parts)
    elif op == "flip":
        where = rng.choice(["header", "payload"])
        b = flip_bytes(rng, b, start=0 if where == "header" else header, end=header if where == "header" else None)
        label = "byte flips in the " + where
    elif op == "shift":
        p = rng.randrange(header, len(b) - 8)
        n = rng.choice([1, 4, 8])
        del b[p:p + n]
        b += bytes(n)
        label = "%d bytes deleted at %d, zeros appended" % (n, p)
    else:
        b = bytearray(rng.choice([b"", bytes(16), bytes(20), b"\x00\x00\x00\x00\x02\x00\x00\x00", b"not weights\n",
                                  struct.pack("<iiiQ", 0, 2, 0, 0) + struct.pack("<f", 1.0) * 7]))
        label = "replaced by a %d-byte file" % len(b)
    files = {"mutant.weights": bytes(b)}
    if index % 4 == 3:
        return [Case("weights-%04d-info" % index, "weights", label, ["info", CFG, "--weights", "mutant.weights"], files)]
    return [Case("weights-%04d-detect" % index, "weights", label,
                 ["detect", "--cfg", CFG, "--weights", "mutant.weights", COFFEE], files)]


# ----------------------------------------------------------------------------------------------
# Family 3: SwiftYOLO .yolo model files
# ----------------------------------------------------------------------------------------------

MAGIC = b"\x89YOLO\r\n\x1a"
FNV_PRIME = 0x100000001B3
FNV_BASIS = 0xCBF29CE484222325
M64 = (1 << 64) - 1
CONV, MAXPOOL, UPSAMPLE, ROUTE, SHORTCUT, YOLO, YOLO_NEW_COORDS = range(7)   # kind 6: format 1.2
KIND_NAMES = ["conv", "maxpool", "upsample", "route", "shortcut", "yolo"]


def model_checksum(buf):
    """The model file checksum (ModelFile.checksum): FNV-1a 64 over little-endian u64 words in four
    interleaved lanes (lane l starts at basis ^ l), the checksum word (word 3) counted as zero, the
    four lane states folded by one more FNV-1a pass from the basis."""
    words = np.frombuffer(bytes(buf[:len(buf) // 8 * 8]), dtype="<u8").copy()
    if len(words) > 3:
        words[3] = 0
    lanes = []
    for lane in range(4):
        h = FNV_BASIS ^ lane
        for w in words[lane::4].tolist():
            h = ((h ^ w) * FNV_PRIME) & M64
        lanes.append(h)
    h = FNV_BASIS
    for lane in lanes:
        h = ((h ^ lane) * FNV_PRIME) & M64
    return h


def fix_checksum(buf):
    if len(buf) >= 32 and len(buf) % 8 == 0:
        struct.pack_into("<Q", buf, 24, model_checksum(buf))
    return buf


class Reader:
    def __init__(self, data, pos):
        self.data, self.pos = data, pos

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize("<" + fmt)
        return v


def parse_model(data):
    """Parses a .yolo file into a dict (the blobs are slices of `data`)."""
    hdr = struct.unpack_from("<HHIQQQQ", data, 8)
    m = {"major": hdr[0], "minor": hdr[1], "meta_len": hdr[6]}
    r = Reader(data, 64)
    m["input"] = [r.take("i"), r.take("i"), r.take("i")]
    layers = []
    for _ in range(r.take("I")):
        kind, line = r.take("B"), r.take("i")
        L = {"kind": kind, "line": line}
        if kind == CONV:
            L.update(filters=r.take("i"), size=r.take("i"), stride=r.take("i"), padding=r.take("i"),
                     bn=r.take("B"), act=r.take("B"))
        elif kind == MAXPOOL:
            L.update(size=r.take("i"), stride=r.take("i"), padding=r.take("i"))
        elif kind == UPSAMPLE:
            L.update(stride=r.take("i"), scale=r.take("f"))
        elif kind == ROUTE:
            L["sources"] = [r.take("i") for _ in range(r.take("I"))]
            L.update(groups=r.take("i"), group_id=r.take("i"))
        elif kind == SHORTCUT:
            L.update(source=r.take("i"), act=r.take("B"))
        elif kind in (YOLO, YOLO_NEW_COORDS):
            L["mask"] = [r.take("i") for _ in range(r.take("I"))]
            L["anchors"] = [r.take("f") for _ in range(r.take("I"))]
            L.update(classes=r.take("i"), scale_xy=r.take("f"))
        layers.append(L)
    m["layers"] = layers
    labels = []
    for _ in range(r.take("I")):
        n = r.take("I")
        labels.append(bytes(data[r.pos:r.pos + n]))
        r.pos += n
    m["labels"] = labels
    records = []
    for _ in range(r.take("I")):
        rec = {"layer": r.take("I"), "storage": r.take("B"), "bits": r.take("B"), "gran": r.take("B"),
               "reserved": r.take("B")}
        blobs = []
        for _ in range(4):
            off, length = r.take("Q"), r.take("Q")
            blobs.append(bytes(data[off:off + length]) if length else None)
        rec["blobs"] = blobs
        records.append(rec)
    m["records"] = records
    n = r.take("I")
    m["note"] = bytes(data[r.pos:r.pos + n])
    r.pos += n
    # Fields appended by minor versions: 1.1 the preferred scaling, 1.2 the suppression kind and beta.
    if m["minor"] >= 1:
        m["scaling"] = r.take("B")
    if m["minor"] >= 2:
        m["nms"] = (r.take("B"), r.take("f"))
    return m


class FieldWriter:
    """Little-endian writer that remembers where every named field went (for field mutations)."""

    def __init__(self):
        self.buf = bytearray()
        self.fields = []      # (name, offset, struct format)

    def put(self, fmt, value, name):
        self.fields.append((name, len(self.buf), fmt))
        self.buf += struct.pack("<" + fmt, value)

    def raw(self, data):
        self.buf += data


def encode_model(m, ref_hook=None):
    """Encodes the dict from parse_model as ModelFile.encode does (blobs 64-byte aligned, file padded
    to 64, checksum). `ref_hook(refs)` may change the blob references before they are written.
    Returns (bytearray, fields) with field offsets relative to the file start."""
    def metadata(refs):
        w = FieldWriter()
        for k, v in zip("chw", m["input"]):
            w.put("i", i32(v), "input." + k)
        w.put("I", len(m["layers"]), "layer count")
        for i, L in enumerate(m["layers"]):
            p = "layer[%d]." % i
            w.put("B", L["kind"] & 0xFF, p + "kind")
            w.put("i", i32(L["line"]), p + "line")
            kind = L["kind"]
            if kind == CONV:
                for k in ("filters", "size", "stride", "padding"):
                    w.put("i", i32(L[k]), p + k)
                w.put("B", L["bn"] & 0xFF, p + "bn")
                w.put("B", L["act"] & 0xFF, p + "act")
            elif kind == MAXPOOL:
                for k in ("size", "stride", "padding"):
                    w.put("i", i32(L[k]), p + k)
            elif kind == UPSAMPLE:
                w.put("i", i32(L["stride"]), p + "stride")
                w.put("f", L["scale"], p + "scale")
            elif kind == ROUTE:
                w.put("I", len(L["sources"]), p + "source count")
                for j, s in enumerate(L["sources"]):
                    w.put("i", i32(s), p + "source[%d]" % j)
                w.put("i", i32(L["groups"]), p + "groups")
                w.put("i", i32(L["group_id"]), p + "group_id")
            elif kind == SHORTCUT:
                w.put("i", i32(L["source"]), p + "from")
                w.put("B", L["act"] & 0xFF, p + "act")
            elif kind in (YOLO, YOLO_NEW_COORDS):
                w.put("I", len(L["mask"]), p + "mask count")
                for j, v in enumerate(L["mask"]):
                    w.put("i", i32(v), p + "mask[%d]" % j)
                w.put("I", len(L["anchors"]), p + "anchor count")
                for j, v in enumerate(L["anchors"]):
                    w.put("f", v, p + "anchor[%d]" % j)
                w.put("i", i32(L["classes"]), p + "classes")
                w.put("f", L["scale_xy"], p + "scale_xy")
        w.put("I", len(m["labels"]), "label count")
        for j, s in enumerate(m["labels"]):
            w.put("I", len(s), "label[%d] length" % j)
            w.raw(s)
        w.put("I", len(m["records"]), "tensor count")
        for j, rec in enumerate(m["records"]):
            p = "record[%d]." % j
            w.put("I", rec["layer"] & 0xFFFFFFFF, p + "layer")
            for k in ("storage", "bits", "gran", "reserved"):
                w.put("B", rec[k] & 0xFF, p + k)
            for s in range(4):
                off, length = refs[j][s]
                w.put("Q", off & M64, p + "blob%d offset" % s)
                w.put("Q", length & M64, p + "blob%d length" % s)
        w.put("I", len(m["note"]), "note length")
        w.raw(m["note"])
        if "scaling" in m:
            w.put("B", m["scaling"] & 0xFF, "preferred scaling")
        if "nms" in m:
            w.put("B", m["nms"][0] & 0xFF, "suppression kind")
            w.put("f", m["nms"][1], "beta_nms")
        return w

    up = lambda v: (v + 63) // 64 * 64
    dummy = [[(0, 0)] * 4 for _ in m["records"]]
    meta_len = len(metadata(dummy).buf)
    cursor = up(64 + meta_len)
    refs, placed = [], []
    for rec in m["records"]:
        rr = []
        for blob in rec["blobs"]:
            if blob is None:
                rr.append((0, 0))
            else:
                rr.append((cursor, len(blob)))
                placed.append((cursor, blob))
                cursor = up(cursor + len(blob))
        refs.append(rr)
    size = cursor
    if ref_hook:
        ref_hook(refs)
    w = metadata(refs)
    out = bytearray(size)
    out[0:8] = MAGIC
    struct.pack_into("<HHIQQQQ", out, 8, m.get("major", 1), m.get("minor", 0), 64, size, 0, 64, len(w.buf))
    out[64:64 + len(w.buf)] = w.buf
    for off, blob in placed:
        out[off:off + len(blob)] = blob
    fields = [("header.major", 8, "H"), ("header.minor", 10, "H"), ("header.header size", 12, "I"),
              ("header.file size", 16, "Q"), ("header.metadata offset", 32, "Q"), ("header.metadata length", 40, "Q"),
              ("header.reserved", 48, "Q")]
    fields += [(n, o + 64, f) for n, o, f in w.fields]
    return fix_checksum(out), fields


def conv_in_channels(m):
    """In-channels of every convolution (by layer index), or None when the description is not
    well-formed enough to say."""
    out, result = [], {}
    try:
        for i, L in enumerate(m["layers"]):
            c = out[-1] if out else m["input"][0]
            k = L["kind"]
            if k == CONV:
                result[i] = c
                c = L["filters"]
            elif k == ROUTE:
                if not L["sources"] or any(s < 0 or s >= i for s in L["sources"]) or L["groups"] <= 0:
                    return None
                c = sum(out[s] for s in L["sources"]) // L["groups"]
            elif k not in (MAXPOOL, UPSAMPLE, SHORTCUT, YOLO, YOLO_NEW_COORDS):
                return None
            out.append(c)
    except (KeyError, IndexError, TypeError):
        return None
    return result


def regenerate_blobs(rng, m):
    """Makes one tensor record per convolution, with blobs of exactly the sizes the description
    needs (keeping the seed's blobs where they already fit), so the file passes the tensor checks."""
    ins = conv_in_channels(m)
    if ins is None:
        return False
    old = {rec["layer"]: rec for rec in m["records"]}
    records, total = [], 0
    for idx, c in sorted(ins.items()):
        L = m["layers"][idx]
        f, s = L["filters"], L["size"]
        count = f * c * s * s
        if count <= 0 or count > 50_000_000 or f <= 0:
            return False
        total += 4 * count
        if total > 300_000_000:
            return False
        prev = old.get(idx)
        if prev and (prev["storage"] not in (0, 1) or (prev["storage"] == 1 and prev["bits"] not in (4, 6, 8))
                     or prev["gran"] not in (0, 1)):
            return False
        storage = prev["storage"] if prev else 0
        bits = prev["bits"] if prev and storage == 1 else 8
        gran = prev["gran"] if prev and storage == 1 else 0
        if storage == 1:
            packed = (count * bits + 7) // 8
            scale_n = f if gran == 1 else 1
            want = [packed, 4 * f, 4 * (1 << bits), 4 * scale_n]
        else:
            want = [4 * count, 4 * f, 0, 0]
        blobs = []
        for slot, n in enumerate(want):
            if n == 0:
                blobs.append(None)
            elif prev and prev["blobs"][slot] is not None and len(prev["blobs"][slot]) == n:
                blobs.append(prev["blobs"][slot])
            elif storage == 1 and slot == 0:
                blobs.append(np.random.default_rng(rng.randrange(1 << 30)).integers(0, 256, n, dtype=np.uint8).tobytes())
            elif storage == 1 and slot == 2:
                blobs.append(np.linspace(-1, 1, 1 << bits, dtype="<f4").tobytes())
            elif storage == 1 and slot == 3:
                blobs.append(np.full(n // 4, 0.05, dtype="<f4").tobytes())
            elif slot == 1:
                blobs.append(np.zeros(f, dtype="<f4").tobytes())
            else:
                blobs.append((np.random.default_rng(rng.randrange(1 << 30)).standard_normal(count) * 0.05)
                             .astype("<f4").tobytes())
        records.append({"layer": idx, "storage": storage, "bits": bits if storage == 1 else 0,
                        "gran": gran, "reserved": 0, "blobs": blobs})
    m["records"] = records
    return True


def random_layer(rng, index):
    kind = rng.randrange(6)
    L = {"kind": kind, "line": rng.randrange(200)}
    if kind == CONV:
        L.update(filters=rng.choice([1, 16, 32, 255]), size=rng.choice([1, 3]), stride=1, padding=rng.choice([0, 1]),
                 bn=1, act=1)
    elif kind == MAXPOOL:
        L.update(size=2, stride=rng.choice([1, 2]), padding=rng.choice([0, 1]))
    elif kind == UPSAMPLE:
        L.update(stride=2, scale=1.0)
    elif kind == ROUTE:
        L.update(sources=[max(0, index - rng.choice([1, 2, 5]))], groups=1, group_id=0)
    elif kind == SHORTCUT:
        L.update(source=max(0, index - rng.choice([1, 2, 3])), act=0)
    else:
        L.update(mask=[0, 1, 2], anchors=[10.0, 14.0, 23.0, 27.0, 37.0, 58.0], classes=80, scale_xy=1.0)
    return L


def shift_refs(m, at, delta):
    """Keeps route/shortcut references pointing at the same layers after inserting (delta=1) or
    removing (delta=-1) the layer at `at`."""
    for L in m["layers"]:
        if L["kind"] == ROUTE:
            L["sources"] = [s + delta if s >= at else s for s in L["sources"]]
        elif L["kind"] == SHORTCUT and L["source"] >= at:
            L["source"] += delta


STRUCT_FIELDS = {
    CONV: {"filters": "int", "size": "int", "stride": "int", "padding": "int", "bn": "u8", "act": "u8"},
    MAXPOOL: {"size": "int", "stride": "int", "padding": "int"},
    UPSAMPLE: {"stride": "int", "scale": "float"},
    ROUTE: {"sources": "list-int", "groups": "int", "group_id": "int"},
    SHORTCUT: {"source": "int", "act": "u8"},
    YOLO: {"mask": "list-int", "anchors": "list-float", "classes": "int", "scale_xy": "float"},
}
# Values that are valid, so that a consistent mutant reaches the geometry and the forward pass.
SMALL_VALUES = {"size": [1, 2, 3, 4, 5, 7], "stride": [1, 2, 3, 4], "padding": [0, 1, 2, 3, 5, 16],
                "filters": [1, 8, 15, 16, 17, 255, 256], "groups": [1, 2, 3, 4], "group_id": [0, 1, 2]}


def mutate_model_struct(rng, m):
    """One structural change of the parsed model; returns its label."""
    layers = m["layers"]
    op = rng.choice(["field"] * 8 + ["input"] * 2 + ["insert", "remove", "swap", "duplicate", "labels", "labels",
                                                      "record", "record", "blob", "blob", "note", "version"])
    if op == "field":
        i = rng.randrange(len(layers))
        L = layers[i]
        name, typ = rng.choice(list(STRUCT_FIELDS[L["kind"]].items()))
        if typ == "int":
            v = rng.choice(SMALL_VALUES[name]) if name in SMALL_VALUES and rng.random() < 0.5 else pick_int(rng)
            if name == "source":
                v = rng.choice([i - 1, i - 2, i - 3, 0, i, i + 1, -1, i - 5])
            L[name] = v
        elif typ == "u8":
            L[name] = rng.choice([0, 1, 2, 3, 4, 5, 255])
            v = L[name]
        elif typ == "float":
            L[name] = v = rng.choice(FLOAT_EDGES + [2.0, 4.0])
        elif typ == "list-int":
            lst = L[name]
            kind = rng.choice(["value", "empty", "long", "self", "forward"])
            if kind == "value" and lst:
                lst[rng.randrange(len(lst))] = pick_int(rng) if rng.random() < 0.5 else rng.randrange(max(i, 1))
            elif kind == "empty":
                lst.clear()
            elif kind == "long":
                lst.extend([lst[-1] if lst else 0] * rng.choice([1, 5, 100, 10000]))
            elif kind == "self":
                lst.append(i)
            else:
                lst.append(i + 1)
            v = "%s (%d items)" % (kind, len(lst))
        else:   # list-float
            lst = L[name]
            kind = rng.choice(["value", "empty", "odd", "long"])
            if kind == "value" and lst:
                lst[rng.randrange(len(lst))] = rng.choice(FLOAT_EDGES)
            elif kind == "empty":
                lst.clear()
            elif kind == "odd":
                lst.append(1.0)
            else:
                lst.extend([5.0, 5.0] * rng.choice([3, 100, 10000]))
            v = "%s (%d items)" % (kind, len(lst))
        return "layer %d [%s] %s = %s" % (i, KIND_NAMES[L["kind"]], name, v)
    if op == "input":
        k = rng.randrange(3)
        v = rng.choice([0, -1, 1, 2, 4, 31, 32, 33, 64, 96, 100, 417, 1024, 65536, 65537, 2**31 - 1])
        if k == 0:
            v = rng.choice([0, 1, 2, 4, 64, 65536, 65537, -3])
        m["input"][k] = v
        return "input %s = %d" % ("chw"[k], v)
    if op == "insert":
        at = rng.randrange(len(layers) + 1)
        L = random_layer(rng, at)
        shift_refs(m, at, 1)
        layers.insert(at, L)
        return "inserted a [%s] layer at %d" % (KIND_NAMES[L["kind"]], at)
    if op == "remove":
        at = rng.randrange(len(layers))
        kind = layers[at]["kind"]
        del layers[at]
        shift_refs(m, at, -1)
        return "removed layer %d [%s]" % (at, KIND_NAMES[kind])
    if op == "swap":
        a, b = rng.randrange(len(layers)), rng.randrange(len(layers))
        layers[a], layers[b] = layers[b], layers[a]
        return "swapped layers %d and %d" % (a, b)
    if op == "duplicate":
        at = rng.randrange(len(layers))
        n = rng.choice([1, 2, 10, 1000])
        for _ in range(n):
            shift_refs(m, at + 1, 1)
            layers.insert(at + 1, copy.deepcopy(layers[at]))
        return "layer %d [%s] duplicated %d times" % (at, KIND_NAMES[layers[at]["kind"]], n)
    if op == "labels":
        kind = rng.choice(["none", "fewer", "more", "invalid-utf8", "empty", "huge", "newline", "control"])
        labels = m["labels"]
        if kind == "none":
            labels.clear()
        elif kind == "fewer":
            del labels[-1]
        elif kind == "more":
            labels.append(b"extra")
        elif kind == "invalid-utf8":
            labels[rng.randrange(len(labels))] = b"\xff\xfe\xc3"
        elif kind == "empty":
            labels[rng.randrange(len(labels))] = b""
        elif kind == "huge":
            labels[rng.randrange(len(labels))] = b"x" * rng.choice([10000, 1000000])
        elif kind == "newline":
            for j in range(len(labels)):
                labels[j] = labels[j] + b"\nFAKE LINE"
        else:
            for j in range(len(labels)):
                labels[j] = b"\x1b[31m" + labels[j] + b"\x00\r"
        return "labels: " + kind
    if op == "record":
        j = rng.randrange(len(m["records"]))
        rec = m["records"][j]
        k = rng.choice(["layer", "storage", "bits", "gran", "reserved"])
        rec[k] = {"layer": rng.choice([0, 1, 2, rec["layer"] + 1, 2**32 - 1]), "storage": rng.choice([0, 1, 2, 255]),
                  "bits": rng.choice([0, 1, 4, 6, 7, 8, 16, 255]), "gran": rng.choice([0, 1, 2, 255]),
                  "reserved": rng.choice([1, 255])}[k]
        return "record %d %s = %d" % (j, k, rec[k])
    if op == "blob":
        j = rng.randrange(len(m["records"]))
        rec = m["records"][j]
        slots = [s for s in range(4) if rec["blobs"][s] is not None]
        s = rng.choice(slots)
        blob = bytearray(rec["blobs"][s])
        kind = rng.choice(["nan", "inf", "huge", "negative", "all-ff", "shorter", "longer", "absent"])
        if kind in ("nan", "inf", "huge", "negative"):
            v = {"nan": float("nan"), "inf": float("inf"), "huge": 1e30, "negative": -1.0}[kind]
            if rng.random() < 0.5:
                blob[:] = struct.pack("<f", v) * (len(blob) // 4) + bytes(len(blob) % 4)
            else:
                struct.pack_into("<f", blob, 4 * rng.randrange(max(1, len(blob) // 4)), v)
        elif kind == "all-ff":
            blob[:] = b"\xff" * len(blob)
        elif kind == "shorter":
            del blob[-4:]
        elif kind == "longer":
            blob += bytes(4)
        rec["blobs"][s] = None if kind == "absent" else bytes(blob)
        return "record %d blob %d (%s): %s" % (j, s, ["weights/codes", "biases", "table", "scales"][s], kind)
    if op == "note":
        m["note"] = rng.choice([b"", b"\xff\xfe", b"n" * 1000000, b"\n\n\n"])
        return "note of %d bytes" % len(m["note"])
    m["minor"] = rng.choice([1, 2, 65535])
    if rng.random() < 0.5:
        m["note"] += b"trailing"
    return "minor version %d" % m["minor"]


def gen_model(rng, index, ctx):
    seed = ctx["model"]
    op = rng.choice(["raw"] * 2 + ["raw-fixed"] * 2 + ["field"] * 3 + ["struct"] * 4 + ["consistent"] * 5)
    if op == "raw":
        b, label = generic_bytes(rng, seed)
        label = "raw, checksum not fixed: " + label
    elif op == "raw-fixed":
        kind = rng.choice(["flip-meta", "flip-meta", "truncate", "append", "flip-blob"])
        b = bytearray(seed)
        meta_end = 64 + ctx["model_meta_len"]
        if kind == "flip-meta":
            b = flip_bytes(rng, b, start=8, end=meta_end)
        elif kind == "flip-blob":
            b = flip_bytes(rng, b, start=meta_end, count=rng.choice([1, 100, 10000]))
        elif kind == "truncate":
            n = rng.choice([64, 128, meta_end // 64 * 64, len(b) // 2 // 64 * 64, len(b) - 64])
            del b[n:]
            struct.pack_into("<Q", b, 16, len(b))
        else:
            b += bytes(rng.choice([64, 128, 4096]))
            struct.pack_into("<Q", b, 16, len(b))
        fix_checksum(b)
        label = "raw %s, size and checksum fixed" % kind
    elif op == "field":
        # One encoded field overwritten in place (any field of header, description, labels,
        # tensor table or note), then the checksum recomputed.
        b = bytearray(seed)
        name, off, fmt = rng.choice(ctx["model_fields"])
        if fmt == "f":
            v = rng.choice(FLOAT_EDGES)
        elif fmt == "B":
            v = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 255, rng.randrange(256)])
        elif fmt == "H":
            v = rng.choice([0, 2, 65535])
        elif fmt == "Q":
            v = rng.choice([0, 1, 63, 64, 65, 2**32, 2**63, M64, len(seed), len(seed) - 64, len(seed) + 64,
                            struct.unpack_from("<Q", seed, off)[0] + rng.choice([-64, -1, 1, 64])]) & M64
        elif fmt == "I":
            v = rng.choice(INT_EDGES + [struct.unpack_from("<I", seed, off)[0] + rng.choice([-1, 1])]) & 0xFFFFFFFF
        else:
            v = i32(rng.choice(INT_EDGES))
        struct.pack_into("<" + fmt, b, off, v)
        fix_checksum(b)
        label = "field %s = %r (checksum fixed)" % (name, v)
    else:
        m = copy.deepcopy(ctx["model_parsed"])
        labels = [mutate_model_struct(rng, m)]
        if rng.random() < 0.2:
            labels.append(mutate_model_struct(rng, m))
        label = "; ".join(labels)
        if op == "consistent":
            # also fix what follows from the change: head filters and label count for a class
            # count change, and blobs of the right size for every convolution
            for i, L in enumerate(m["layers"]):
                if L["kind"] in (YOLO, YOLO_NEW_COORDS) and i > 0 and m["layers"][i - 1]["kind"] == CONV and 0 < L["classes"] < 100000 \
                        and 0 < len(L["mask"]) < 100:
                    m["layers"][i - 1]["filters"] = len(L["mask"]) * (L["classes"] + 5)
            classes = [L["classes"] for L in m["layers"] if L["kind"] in (YOLO, YOLO_NEW_COORDS)]
            if classes and len(m["labels"]) not in (0, classes[0]) and "labels" not in label:
                m["labels"] = [b"class %d" % k for k in range(classes[0])] if classes[0] < 100000 else []
            ok = regenerate_blobs(rng, m)
            label += " (blobs regenerated)" if ok else " (blobs kept)"
        else:
            label += " (checksum fixed)"
        b, _ = encode_model(m)
    files = {"mutant.yolo": bytes(b)}
    detect = ["detect", "--model", "mutant.yolo", COFFEE]
    if index % 3 == 2:
        detect[1:1] = ["--residency", "codes"]
    return [Case("model-%04d-detect" % index, "model", label, detect, files),
            Case("model-%04d-info" % index, "model", label, ["info", "mutant.yolo"], files)]


# ----------------------------------------------------------------------------------------------
# Family 4: .npy
# ----------------------------------------------------------------------------------------------

def npy_bytes(header_text, payload, version=1, length=None):
    """A .npy file with the given header text (padded to 64 as numpy does), payload and version."""
    pre = 10 if version == 1 else 12
    text = header_text
    text += " " * ((64 - (pre + len(text) + 1) % 64) % 64) + "\n"
    raw = text.encode("latin-1")
    n = len(raw) if length is None else length
    head = b"\x93NUMPY" + bytes([version, 0]) + (struct.pack("<H", n & 0xFFFF) if version == 1 else struct.pack("<I", n & 0xFFFFFFFF))
    return head + raw + payload


def npy_header(descr="<f4", fortran="False", shape="(1, 3, 416, 416)"):
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def gen_npy(rng, index, ctx):
    base = ctx["npy_payload"]           # float32 (1,3,416,416) in [0,1]
    op = rng.choice(["shape-consistent"] * 5 + ["shape-mismatch"] * 4 + ["dtype"] * 3 + ["fortran", "version"] +
                    ["header-length"] * 3 + ["truncate"] * 2 + ["append", "values", "values", "flip", "header-text"] * 1)
    argv_extra = []
    if op == "shape-consistent":
        dims = rng.choice([(1, 3, 32, 32), (1, 3, 64, 96), (1, 3, 1, 1), (1, 3, 2, 2), (1, 3, 7, 5), (1, 3, 31, 31),
                           (1, 3, 33, 33), (1, 3, 100, 100), (1, 3, 417, 417), (1, 3, 416, 33), (1, 3, 16, 416),
                           (1, 1, 416, 416), (1, 2, 64, 64), (1, 4, 64, 64), (1, 100, 32, 32), (3, 416, 416),
                           (416, 416), (1024,), (0,), (1, 3, 0, 416), (1, 0, 32, 32), (1, 3, 1, 2048),
                           (1, 3, 2048, 1), (1, 3, 608, 608), (2, 3, 32, 32), (1, 1, 1, 1), (1,)])
        n = int(np.prod(dims)) if dims else 0
        payload = np.random.default_rng(index).random(n, dtype=np.float32).astype("<f4").tobytes()
        data = npy_bytes(npy_header(shape=str(tuple(dims))), payload)
        label = "shape %s with a matching payload" % (dims,)
    elif op == "shape-mismatch":
        shape = rng.choice(["(1, 3, 100000, 100000)", "(1, 3, 2147483648, 2147483648)", "(1, 3, 4611686018427387904, 4)",
                            "(1, 3, 9223372036854775807, 9223372036854775807)", "(1, 3, 99999999999999999999, 1)",
                            "(1, 3, -416, 416)", "(1, -3, 416, 416)", "(1, 3, 416)", "(1, 3, 416, 416, 1)",
                            "(1, 3, 416.0, 416)", "(1, 3, 4e2, 416)", "()", "(,)", "(1, 3, , 416)", "(1 3 416 416)",
                            "[1, 3, 416, 416]", "(1, 3, 0x1a0, 416)", "(1, 3, 416, 415)", "(1, 3, 416, 417)",
                            "(1, 6, 416, 416)", "(1, 3, 208, 208)", "(1, 3, 416, 416,)", "(1,3,416,416)",
                            "( 1 , 3 , 416 , 416 )", "(1, 3, +416, 416)", "(1, 3, 416, 416", "(1, 3, 3074457345618258603, 2)"])
        data = npy_bytes(npy_header(shape=shape), base)
        label = "shape %s, payload for (1, 3, 416, 416)" % shape
    elif op == "dtype":
        descr = rng.choice(["<f8", ">f4", "|u1", "<f2", "<i4", "float32", "<f4 ", " <f4", "<F4", "", "<c8", "|b1",
                            "O", "<U4", "V4", "<f4\x00"])
        data = npy_bytes(npy_header(descr=descr), base)
        label = "descr %r" % descr
    elif op == "fortran":
        v = rng.choice(["True", "1", "0", "false", "None", "'False'"])
        data = npy_bytes(npy_header(fortran=v), base)
        label = "fortran_order %s" % v
    elif op == "version":
        v = rng.choice([0, 2, 3, 4, 255])
        if v in (2, 3):
            data = npy_bytes(npy_header(), base, version=v)
        else:
            data = bytearray(npy_bytes(npy_header(), base))
            data[6] = v
        label = "version byte %d" % v
    elif op == "header-length":
        v = rng.choice([0, 1, 10, 100, 117, 119, 65535]) if rng.random() < 0.6 else None
        if v is None:
            version = rng.choice([2, 3])
            v = rng.choice([0, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 1 << 24])
            data = npy_bytes(npy_header(), base, version=version, length=v)
            label = "v%d header length %d" % (version, v)
        else:
            data = npy_bytes(npy_header(), base, length=v)
            label = "header length %d" % v
    elif op == "truncate":
        full = npy_bytes(npy_header(), base)
        n = rng.choice([0, 5, 6, 8, 9, 10, 11, 12, 60, 127, 128, 129, len(full) - 1, len(full) - 4, len(full) // 2])
        data = full[:n]
        label = "truncated to %d bytes" % n
    elif op == "append":
        n = rng.choice([1, 3, 4, 4096])
        data = npy_bytes(npy_header(), base) + bytes(n)
        label = "%d bytes appended" % n
    elif op == "values":
        v = rng.choice(FLOAT_EDGES)
        arr = np.frombuffer(base, dtype="<f4").copy()
        every = rng.random() < 0.5
        if every:
            arr[:] = v
        else:
            arr[rng.randrange(arr.size)] = v
        data = npy_bytes(npy_header(), arr.tobytes())
        label = "%s payload value(s) = %r" % ("all" if every else "one", v)
    elif op == "header-text":
        kind = rng.choice(["non-ascii", "huge", "dup-keys", "descr-in-string", "newlines", "no-shape", "nul"])
        text = {"non-ascii": npy_header() + "\xe9\xff",
                "huge": npy_header() + " " * rng.choice([65000, 1000000]),
                "dup-keys": "{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 416, 416), }",
                "descr-in-string": "{'descr': '<f8', 'x': \"'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 2, 2)\", 'shape': (1, 3, 416, 416), }",
                "newlines": npy_header().replace(", ", ",\n"),
                "no-shape": "{'descr': '<f4', 'fortran_order': False, }",
                "nul": npy_header().replace("'shape'", "'sh\x00ape'")}[kind]
        if kind == "huge" and len(text) > 65000:
            data = npy_bytes(text, base, version=2)
        else:
            data = npy_bytes(text, base)
        label = "header text: " + kind
    else:
        data = flip_bytes(rng, npy_bytes(npy_header(), base), end=128)
        label = "byte flips in the header"
    if rng.random() < 0.1:
        argv_extra = rng.choice([["--layer", "0"], ["--layer", "15"], ["--layer", "-1"], ["--layer", "100"],
                                 ["--size", "64x64"], ["--memory"]])
        label += " + " + " ".join(argv_extra)
    return [Case("npy-%04d" % index, "npy", label,
                 ["forward", "--model", MODEL, "--input", "input.npy", "--out", "out"] + argv_extra,
                 {"input.npy": bytes(data)})]


# ----------------------------------------------------------------------------------------------
# Family 5: CLI flags
# ----------------------------------------------------------------------------------------------

SIZES = ["8192x8192", "100000x100000", "0x0", "-416x-416", "416x-1", "416", "x", "416x416x3", "31x31", "32x32",
         "33x33", "1x1", "416x0", "4294967328x32", "9223372036854775807x32", "auto", "AUTO", " 416x416",
         "416x416 ", "", "nan", "1e3x1e3", "\u0664\u0661\u0666x\u0664\u0661\u0666", "64x8192", "8192x32", "32x65536",
         "416X416", "0x416", "-0x-0", "3.5x416", "416x416,416x416", "65536x65536", "96x32"]
CONF = ["1.5", "-0.1", "0", "1", "nan", "inf", "-inf", "", "abc", "1e-45", "1e308", "0x1p-2", "-0", "1e400"]
INTS = ["0", "-1", "1", "9223372036854775807", "9223372036854775808", "99999999999999999999", "", "abc",
        "2147483648", "1.5", "-9223372036854775808"]
LONG = "a" * 100000


def cli_atoms():
    """(subcommand, extra args, files, env, label) tuples: each one odd value on a working base."""
    A = []
    files_names = {"empty.names": b"", "one.names": b"person\n", "many.names": b"x\n" * 1000000,
                   "nul.names": b"per\x00son\ncup\n" * 40, "crlf.names": open(NAMES, "rb").read().replace(b"\n", b"\r\n"),
                   "invalid.names": b"\xff\xfe\n" * 80, "long.names": (b"y" * 100000 + b"\n") * 80}
    # detect
    for s in SIZES:
        A.append(("detect", ["--size", s], {}, {}, "detect --size %r" % s))
    for v in CONF:
        A.append(("detect", ["--conf", v], {}, {}, "detect --conf %r" % v))
    for v in ["0", "1", "-1", "2", "nan", "", "inf"]:
        A.append(("detect", ["--iou", v], {}, {}, "detect --iou %r" % v))
    for v in ["", ",", "999", "-1", "80", "79", "person,,cup", "nonexistent", "PERSON", "0,0,0", "9" * 30,
              "person," + "x" * 100000, " person", "0x1"]:
        A.append(("detect", ["--classes", v], {}, {}, "detect --classes %r" % v[:40]))
    for name, data in files_names.items():
        A.append(("detect", ["--model", MODEL, "--names", name], {name: data}, {}, "detect --model --names %s" % name))
        A.append(("detect", ["--names", name, "--classes", "1"], {name: data}, {}, "detect --names %s --classes 1" % name))
    A.append(("detect", ["--model", MODEL, "--names", NAMES], {}, {}, "detect --model with --names coco.names"))
    A.append(("detect", ["--names", "nonexistent.names"], {}, {}, "detect --names nonexistent"))
    A.append(("detect", ["--names", "."], {}, {}, "detect --names (a directory)"))
    for v in INTS:
        A.append(("detect", ["--max-det", v], {}, {}, "detect --max-det %r" % v))
    for v in ["0", "-1", "1", "3", "64", "1000", "2147483648", "", "1,2"]:
        A.append(("detect", ["--threads", v], {}, {}, "detect --threads %r" % v))
    for v in ["0,0,0,0", "1,1,1,1", "nan,0,1,1", "-1,-1,3,3", "0.5", "", "0,0,1,1,1", "0.999,0.999,0.001,0.001",
              "inf,0,1,1", "0,0,1e-30,1e-30", "1e308,0,1,1", "a,b,c,d", "0.5,0,0.5,1"]:
        A.append(("detect", ["--roi", v], {}, {}, "detect --roi %r" % v))
    for flag, vals in [("--scale", ["bogus", "FIT", ""]), ("--format", ["xml", "", "JSON"]),
                       ("--algorithm", ["bogus", "", "winograd4", "winograd2", "im2col"]),
                       ("--residency", ["bogus", "codes", "expanded", ""]),
                       ("--kernel", ["avx512", "portable", "avx2", "bogus", "", "auto"])]:
        for v in vals:
            A.append(("detect", [flag, v], {}, {}, "detect %s %r" % (flag, v)))
    for alg in ["winograd4", "winograd2", "im2col"]:
        for s in ["32x32", "64x32", "96x96", "33x33"]:
            A.append(("detect", ["--algorithm", alg, "--size", s], {}, {}, "detect --algorithm %s --size %s" % (alg, s)))
    for k in ["portable", "avx2"]:
        A.append(("detect", ["--kernel", k, "--size", "32x32"], {}, {}, "detect --kernel %s --size 32x32" % k))
    A.append(("detect", ["--residency", "codes", "--size", "32x64"], {}, {}, "detect --residency codes --size 32x64"))
    A.append(("detect", ["--save", "nonexistent/deep/dir"], {}, {}, "detect --save into a missing nested dir"))
    A.append(("detect", ["--save", "afile"], {"afile": b"x"}, {}, "detect --save onto a file"))
    A.append(("detect", ["--save", ""], {}, {}, "detect --save ''"))
    A.append(("detect", ["--save", "out", "--size", "32x32"], {}, {}, "detect --save out --size 32x32"))
    A.append(("detect", ["--save", "ro"], {}, {}, "detect --save into a read-only dir"))   # made read-only below
    A.append(("detect", ["--full-decode", "--save", "out"], {}, {}, "detect --full-decode --save out"))
    A.append(("detect", ["--agnostic", "--agnostic"], {}, {}, "detect --agnostic twice"))
    for u in [["--bogus"], ["-x"], ["--size="], ["---"], ["--"], ["-"], ["--size"], ["--conf"], ["--conf", "0.5", "--conf", "0.6"],
              ["--model"], ["--help", "--bogus"], ["-h"], ["--version"]]:
        A.append(("detect", u, {}, {}, "detect %s" % " ".join(u)))
    A.append(("detect-noimage", [], {}, {}, "detect with no image"))
    A.append(("detect-noimage", [""], {}, {}, "detect ''"))
    A.append(("detect-noimage", [LONG], {}, {}, "detect with a 100000-character path"))
    A.append(("detect-noimage", ["a/" * 3000 + "x.png"], {}, {}, "detect with a 6000-character nested path"))
    A.append(("detect-noimage", ["emptydir"], {}, {}, "detect on an empty folder"))
    A.append(("detect-noimage", ["textdir"], {"textdir/a.txt": b"x", "textdir/b.png": b"not a png"}, {}, "detect on a folder with junk"))
    A.append(("detect-noimage", [COFFEE] * 12, {}, {}, "detect the same image 12 times"))
    A.append(("detect-noimage", ["nonexistent.png", COFFEE], {}, {}, "detect a missing and a good image"))
    A.append(("detect-noimage", ["/dev/null"], {}, {}, "detect /dev/null"))
    A.append(("detect-noimage", ["/proc/self/status"], {}, {}, "detect /proc/self/status"))
    A.append(("detect-noimage", ["link.png"], {}, {}, "detect a dangling symlink"))   # made below
    for model_args, label in [(["--cfg", CFG, "--model", MODEL], "--cfg with --model"),
                              (["--weights", WEIGHTS], "--weights only"), (["--cfg", CFG], "--cfg only"),
                              (["--cfg", NAMES], "--cfg coco.names"), (["--model", CFG], "--model a cfg"),
                              (["--model", COFFEE], "--model a png"), (["--weights", MODEL], "--weights a .yolo"),
                              (["--model", WEIGHTS], "--model a .weights"), (["--model", ""], "--model ''"),
                              (["--cfg", "", "--weights", ""], "--cfg '' --weights ''"),
                              (["--model", "/dev/zero"], "--model /dev/zero"), (["--cfg", "/dev/zero"], "--cfg /dev/zero"),
                              (["--model", "."], "--model a directory"), (["--model", LONG], "--model 100000-char path")]:
        A.append(("detect", model_args, {}, {}, "detect " + label))
    for env in [{"YOLO_KERNEL": "bogus"}, {"YOLO_KERNEL": ""}, {"YOLO_KERNEL": "avx512"}, {"YOLO_KERNEL": "portable"},
                {"OPENBLAS_CORETYPE": "bogus"}, {"OPENBLAS_NUM_THREADS": "0"}, {"HOME": "/nonexistent"}]:
        A.append(("detect", [], {}, env, "detect with %s" % env))
    # bench
    for s in ["8192x8192", "100000x100000", "0x0", "33x33", "32x32", "-32x32", "auto", ""]:
        A.append(("bench", ["--size", s], {}, {}, "bench --size %r" % s))
    for v in ["0", "-1", "1,,2", "1,0", "1000", "65536", "a", "", ",", "2147483648"]:
        A.append(("bench", ["--threads", v], {}, {}, "bench --threads %r" % v))
    for flag, vals in [("--runs", ["0", "-1", "", "9223372036854775808"]), ("--warmup", ["-1", "", "x"]),
                       ("--format", ["bogus", "csv", "json", ""]), ("--algorithm", ["bogus", "winograd4", "winograd2"])]:
        for v in vals:
            A.append(("bench", [flag, v], {}, {}, "bench %s %r" % (flag, v)))
    for img, files, label in [("nonexistent.png", {}, "missing"), ("bad.png", {"bad.png": b"\x89PNG\r\n\x1a\nxx"}, "corrupt"),
                              (".", {}, "a directory"), ("", {}, "''")]:
        A.append(("bench", ["--layers", "--image", img], files, {}, "bench --layers --image %s" % label))
    for svg, label in [("nodir/x.svg", "in a missing dir"), (".", "a directory"), ("out.svg", "plain"), ("", "''")]:
        A.append(("bench", ["--svg", svg], {}, {}, "bench --svg %s" % label))
    # eval
    for flag, vals in [("--limit", ["0", "-1", "9223372036854775807", ""]), ("--conf", ["-1", "2", "nan", ""]),
                       ("--iou", ["nan", "-1", "2"]), ("--size", ["0x0", "33x33", "8192x8192", "100000x100000"]),
                       ("--category-map", ["bogus", "names", "coco80"]), ("--format", ["bogus", "json"]),
                       ("--exif", ["bogus", "apply"]), ("--scale", ["bogus", "crop"])]:
        for v in vals:
            A.append(("eval-images", [flag, v], {}, {}, "eval --images %s %r" % (flag, v)))
    for ann, res, files, label in [
            ("nonexistent.json", None, {}, "missing annotations"), (".", None, {}, "annotations a directory"),
            ("", None, {}, "annotations ''"), (COFFEE, None, {}, "annotations a png"),
            ("RES", None, {}, "annotations = a results file"), ("ANN", "ANN", {}, "results = the annotations file"),
            ("ANN", "nonexistent.json", {}, "missing results"), ("ANN", ".", {}, "results a directory"),
            ("ANN", "", {}, "results ''"), ("ANN", "/dev/null", {}, "results /dev/null"),
            ("empty.json", "RES", {"empty.json": b""}, "empty annotations file"),
            ("ANN", "empty.json", {"empty.json": b""}, "empty results file")]:
        args = ["--annotations", ann.replace("ANN", os.path.join(EVAL_FIXTURES, "crowd.annotations.json"))
                .replace("RES", os.path.join(EVAL_FIXTURES, "crowd.results.json"))]
        if res is not None:
            args += ["--results", res.replace("ANN", os.path.join(EVAL_FIXTURES, "crowd.annotations.json"))
                     .replace("RES", os.path.join(EVAL_FIXTURES, "crowd.results.json"))]
        A.append(("eval-bare", args, files, {}, "eval " + label))
    A.append(("eval-bare", ["--annotations", os.path.join(EVAL_FIXTURES, "crowd.annotations.json")], {}, {},
              "eval without --results or --images"))
    A.append(("eval-images", ["--per-class"], {}, {}, "eval --images --per-class"))
    A.append(("eval-bare", ["--annotations", "ann.json", "--images", "nonexistent", "--results", "out.json"],
              {"ann.json": open(os.path.join(EVAL_FIXTURES, "crowd.annotations.json"), "rb").read()}, {},
              "eval --images missing folder"))
    A.append(("eval-bare", ["--annotations", "ann.json", "--images", COFFEE, "--results", "out.json"],
              {"ann.json": open(os.path.join(EVAL_FIXTURES, "crowd.annotations.json"), "rb").read()}, {},
              "eval --images a file"))
    A.append(("eval-images-results", ["--results", "nodir/out.json"], {}, {}, "eval --images --results in a missing dir"))
    A.append(("eval-images-results", ["--results", "."], {}, {}, "eval --images --results a directory"))
    # track-object and eval-sot (a two-frame folder of the coffee photo; eval-sot adds a ground truth)
    png = open(COFFEE, "rb").read()
    other = open(os.path.join(REPO, "Samples/astronaut.png"), "rb").read()
    clip = {"clip/img/0001.png": png, "clip/img/0002.png": png}
    for v in ["0,0,0,0", "1,1,1,1", "10,10,1,1", "-100,-100,5,5", "10000,10,5,5", "nan,0,5,5", "inf,0,5,5",
              "1e308,1e308,1e308,1e308", "10,10,-5,-5", "a,b,c,d", "", "1,2,3", "1,2,3,4,5", "100,20,300,250",
              "599,399,2,2", "0,0,600,400", "-1e308,0,1e308,400", " 1, 2, 30, 40", "1,,3,4"]:
        A.append(("track-object", ["--box", v], clip, {}, "track-object --box %r" % v))
    for flag, vals in [("--level", ["bogus", "", "FAST", "fast", "accurate"]), ("--format", ["xml", "", "jsonl", "JSON"]),
                       ("--save", ["nonexistent/deep/x.mp4", "", "out.mp4", "."]),
                       ("--from-detection", ["", "unicorn", "cup", " "])]:
        for v in vals:
            A.append(("track-object", ["--box", "100,20,300,250", flag, v] if flag != "--from-detection" else [flag, v, "--model", MODEL],
                      clip, {}, "track-object %s %r" % (flag, v)))
    A.append(("track-object", ["--from-detection", "cup", "--box", "1,1,9,9"], clip, {}, "track-object --box and --from-detection"))
    A.append(("track-object", ["--box", "100,20,300,250"], dict(clip, **{"clip/img/0003.png": other}), {},
              "track-object frames of two sizes"))
    A.append(("track-object", ["--box", "100,20,300,250"], {"clip/img/0001.png": png, "clip/img/0002.png": b"\x89PNG\r\n"}, {},
              "track-object a damaged second frame"))
    for src, files, label in [("emptydir", {"emptydir/notes.txt": b"x"}, "a folder without images"), ("missing.mp4", {}, "missing"),
                              (COFFEE, {}, "a png as the video"), ("", {}, "''"), ("/dev/null", {}, "/dev/null")]:
        A.append(("track-object-src", [src, "--box", "1,1,9,9"], files, {}, "track-object source %s" % label))
    seq = {"seq/img/0001.png": png, "seq/img/0002.png": png, "seq/groundtruth.txt": b"100,20,300,250\n101,20,300,250\n"}
    for truth, label in [(b"", "empty"), (b"1,2,3\n", "three numbers"), (b"nan,0,5,5\n1,1,1,1\n", "NaN"),
                         (b"10000,10,5,5\n", "outside"), (b"0,0,0,0\n", "zero"), (b"\xff\xfe", "not UTF-8"),
                         (b"1,1,1,1\n" * 100000, "100000 lines")]:
        A.append(("eval-sot", [], dict(seq, **{"seq/groundtruth.txt": truth}), {}, "eval-sot ground truth %s" % label))
    for flag, vals in [("--level", ["bogus", ""]), ("--format", ["xml", ""]), ("--results", ["afile", "", "nodir/deep"])]:
        for v in vals:
            A.append(("eval-sot", [flag, v], dict(seq, afile=b"x"), {}, "eval-sot %s %r" % (flag, v)))
    A.append(("eval-sot", [], {"seq/img/0001.png": png}, {}, "eval-sot without groundtruth.txt"))
    A.append(("eval-sot", [], {"seq/groundtruth.txt": b"1,1,5,5\n"}, {}, "eval-sot without images"))
    # convert (--quantize none unless stated: fast)
    for flag, vals in [("--quantize", ["lut3", "", "LUT8", "float"]), ("--lut", ["bogus", ""]),
                       ("--method", ["bogus", ""]), ("--refine-rounds", ["-1", "2147483648", "abc", ""]),
                       ("--match-iou", ["nan", "-1", "2"])]:
        for v in vals:
            A.append(("convert", [flag, v], {}, {}, "convert %s %r" % (flag, v)))
    for flag in ["--keep-float", "--lut8-layers", "--lut6-layers"]:
        for v in ["none", "last", "heads", "999", "-1", "", "first,first", ",".join(map(str, range(23))), "13", "a", "0,,1"]:
            A.append(("convert-lut", [flag, v], {}, {}, "convert lut4 %s %r" % (flag, v[:30])))
    for v in ["0", "31", "-32", "mirror,mirror", "99999", "32", "", "mirror-", "64-mirror,bogus"]:
        A.append(("convert-lut", ["--calibrate", COFFEE, "--calibration-views", v], {}, {}, "convert --calibration-views %r" % v))
    for cal, files, label in [("nonexistent.png", {}, "missing"), ("bad.png", {"bad.png": b"\x89PNG\r\n\x1a\n"}, "corrupt"),
                              ("emptydir", {}, "an empty dir"), ("bad.npy", {"bad.npy": npy_bytes(npy_header(shape="(1, 1, 8, 8)"), bytes(256))}, "npy 1x1x8x8"),
                              ("nan.npy", {"nan.npy": npy_bytes(npy_header(shape="(1, 3, 32, 32)"), struct.pack("<f", float("nan")) * 3072)}, "npy of NaN")]:
        A.append(("convert-lut", ["--calibrate", cal], files, {}, "convert --calibrate %s" % label))
    for rep, label in [("nonexistent.png", "missing"), ("emptydir", "an empty dir")]:
        A.append(("convert", ["--report", rep], {}, {}, "convert --report %s" % label))
    for out, files, label in [(".", {}, "a directory"), ("nodir/x.yolo", {}, "in a missing dir"), ("", {}, "''"),
                              (".yolo", {}, "'.yolo'"), ("ro/x.yolo", {}, "in a read-only dir"),
                              ("exists.yolo", {"exists.yolo": b"old"}, "over an existing file")]:
        A.append(("convert-out", ["--output", out], files, {}, "convert --output %s" % label))
    A.append(("convert-out", ["--output", "out.yolo", "--model", MODEL], {}, {}, "convert --model (re-convert the lut8 model)"))
    A.append(("convert-out", ["--output", "out.yolo", "--model", MODEL, "--quantize", "none"], {}, {}, "convert --model lut8 to float"))
    # forward
    for v in ["-1", "23", "24", "1000", "2147483648", "abc", ""]:
        A.append(("forward", ["--layer", v], {}, {}, "forward --layer %r" % v))
    A.append(("forward", ["--layer", "0", "--layer", "0", "--layer", "0"], {}, {}, "forward --layer 0 three times"))
    for s in ["0x0", "8192x8192", "33x33", "32x32", "100000x100000"]:
        A.append(("forward", ["--size", s], {}, {}, "forward --size %s" % s))
    for inp, files, label in [("nonexistent.npy", {}, "missing"), ("", {}, "''"), (".", {}, "a directory"),
                              ("small.npy", {"small.npy": npy_bytes(npy_header(shape="(1, 3, 32, 32)"), bytes(12288))}, "npy 32x32"),
                              ("x.npy", {"x.npy": open(COFFEE, "rb").read()}, "a png named .npy"),
                              ("x.png", {"x.png": npy_bytes(npy_header(shape="(1, 3, 32, 32)"), bytes(12288))}, "an npy named .png")]:
        A.append(("forward-noinput", ["--input", inp, "--out", "out"], files, {}, "forward --input %s" % label))
    for outd, files, label in [("afile", {"afile": b"x"}, "a file"), ("", {}, "''"), ("a/b/c/d", {}, "nested missing"),
                               ("ro", {}, "read-only dir")]:
        A.append(("forward-noout", ["--input", COFFEE, "--out", outd], files, {}, "forward --out %s" % label))
    A.append(("forward", ["--memory"], {}, {}, "forward --memory"))
    # info
    for args, label in [([], "no args"), (["nonexistent.cfg"], "missing"), ([""], "''"), ([COFFEE], "a png"),
                        ([NAMES], "coco.names"), ([WEIGHTS], "a .weights"), ([CFG, "--size", "0x0"], "--size 0x0"),
                        ([CFG, "--size", "8192x8192"], "--size 8192x8192"), ([CFG, "--size", "100000x100000"], "--size 100000x100000"),
                        ([CFG, "--size", "65536x65536"], "--size 65536x65536"), ([CFG, "--size", "2147483648x32"], "--size 2^31x32"),
                        ([CFG, "--size", "1048576x1048576"], "--size 2^20 square"), ([CFG, "--size", "33x33"], "--size 33x33"),
                        (["--kernels"], "--kernels"), ([MODEL, "--weights", WEIGHTS], ".yolo with --weights"),
                        ([CFG, "--weights", MODEL], "--weights a .yolo"), ([MODEL, "--size", "32x32"], ".yolo --size 32x32"),
                        ([MODEL, "--size", "100000x100000"], ".yolo --size 100000x100000"), (["."], "a directory"),
                        (["/dev/zero"], "/dev/zero"), ([LONG], "a 100000-char path")]:
        A.append(("info", args, {}, {}, "info " + label))
    for args, label in [(["help", "detect"], "help detect"), (["help", "bogus"], "help bogus"), ([], "no subcommand"),
                        (["bogus"], "unknown subcommand"), (["--version"], "--version"), (["compare"], "compare without args"),
                        (["compare", MODEL, MODEL, "--images", COFFEE], "compare the model with itself"),
                        (["compare", MODEL, CFG], "compare model with a cfg")]:
        A.append(("raw", args, {}, {}, label))
    # Round-robin across subcommands, so that any --cases prefix covers all of them.
    groups = {}
    for a in A:
        groups.setdefault(a[0].split("-")[0], []).append(a)
    ordered = []
    while any(groups.values()):
        for g in list(groups):
            if groups[g]:
                ordered.append(groups[g].pop(0))
    return ordered


def cli_case_argv(kind, extra):
    """Base command for an atom kind, with the odd arguments added."""
    ann = os.path.join(EVAL_FIXTURES, "crowd.annotations.json")
    res = os.path.join(EVAL_FIXTURES, "crowd.results.json")
    if kind == "detect":
        return ["detect"] + extra + [COFFEE]
    if kind == "detect-noimage":
        return ["detect"] + extra
    if kind == "bench":
        return ["bench", "--runs", "1", "--warmup", "0", "--threads", "1"] + extra
    if kind == "eval-bare":
        return ["eval"] + extra
    if kind == "eval":
        return ["eval", "--annotations", ann, "--results", res] + extra
    if kind in ("eval-images", "eval-images-results"):
        base = ["eval", "--annotations", "images.json", "--images", "imgs"]
        return base + (["--results", "out.json"] if kind == "eval-images" else []) + extra
    if kind == "convert":
        return ["convert", "--output", "out.yolo", "--quantize", "none"] + extra
    if kind == "convert-lut":
        return ["convert", "--output", "out.yolo", "--quantize", "lut4", "--refine-rounds", "0"] + extra
    if kind == "convert-out":
        return ["convert", "--quantize", "none"] + extra
    if kind == "forward":
        return ["forward", "--input", COFFEE, "--out", "out"] + extra
    if kind in ("forward-noinput", "forward-noout"):
        return ["forward"] + extra
    if kind == "info":
        return ["info"] + extra
    if kind == "track-object":
        return ["track-object", "clip"] + extra
    if kind == "track-object-src":
        return ["track-object"] + extra
    if kind == "eval-sot":
        return ["eval-sot", "seq"] + extra
    return extra


def eval_images_files():
    """A one-image COCO annotation file and its image folder for `eval --images`."""
    ann = {"images": [{"id": 1, "file_name": "coffee.png", "width": 600, "height": 400}],
           "annotations": [{"id": 1, "image_id": 1, "category_id": 47, "bbox": [150, 20, 278, 289], "area": 80342,
                            "iscrowd": 0}],
           "categories": [{"id": 47, "name": "cup"}, {"id": 1, "name": "person"}]}
    return {"images.json": json.dumps(ann).encode(), "imgs/coffee.png": open(COFFEE, "rb").read()}


def gen_cli(rng, index, ctx):
    atoms = ctx["cli_atoms"]
    if index < len(atoms):
        kind, extra, files, env, label = atoms[index]
        picked = [atoms[index]]
    else:
        # A random combination of 2-3 atoms of the same base command.
        kind = rng.choice(sorted({a[0] for a in atoms if a[0] in ("detect", "bench", "forward", "eval-images", "convert")}))
        same = [a for a in atoms if a[0] == kind and a[1] and not a[1][0].startswith("--help") and a[1][0] != "--version"]
        picked = rng.sample(same, rng.choice([2, 2, 3]))
        extra, files, env = [], {}, {}
        for a in picked:
            extra += a[1]
            files.update(a[2])
            env.update(a[3])
        label = " + ".join(a[4] for a in picked)
    files = dict(files)
    dirs = []
    if kind.startswith("eval-images"):
        files.update(eval_images_files())
    argv = cli_case_argv(kind, list(extra))
    for a in argv:
        if a in ("emptydir", "ro", "ro/x.yolo"):
            dirs.append(a.split("/")[0])
    links = {"link.png": "nonexistent-target.png"} if "link.png" in argv else {}
    # A calibrated conversion legitimately takes 10-25 s: give it 4x the timeout.
    timeout = 4 * TIMEOUT[0] if "--calibrate" in argv else 0.0
    return [Case("cli-%04d" % index, "cli", label, argv, files, dirs=sorted(set(dirs)), env=dict(env), links=links,
                 timeout=timeout)]


# ----------------------------------------------------------------------------------------------
# Family 6: JPEG / PNG
# ----------------------------------------------------------------------------------------------

def jpeg_segments(d):
    """[(marker, offset of FF, length field)] up to and including SOS."""
    segs, i = [], 2
    while i + 4 <= len(d):
        if d[i] != 0xFF:
            break
        m = d[i + 1]
        if m == 0xFF:
            i += 1
            continue
        if m in (0xD8, 0x01) or 0xD0 <= m <= 0xD7:
            i += 2
            continue
        if m == 0xD9:
            break
        length = struct.unpack_from(">H", d, i + 2)[0]
        segs.append((m, i, length))
        if m == 0xDA:
            break
        i += 2 + length
    return segs


def exif_entry(d):
    """(tiff start, endian, IFD0 offset in file, orientation entry offset or None) of the EXIF APP1."""
    for m, off, length in jpeg_segments(d):
        if m == 0xE1 and d[off + 4:off + 10] == b"Exif\0\0":
            t = off + 10
            e = "<" if d[t:t + 2] == b"II" else ">"
            ifd = t + struct.unpack_from(e + "I", d, t + 4)[0]
            n = struct.unpack_from(e + "H", d, ifd)[0]
            for k in range(n):
                ent = ifd + 2 + 12 * k
                if struct.unpack_from(e + "H", d, ent)[0] == 0x0112:
                    return t, e, ifd, ent
            return t, e, ifd, None
    return None


def exif_app1(orientation, endian="<"):
    tiff = (b"II" if endian == "<" else b"MM") + struct.pack(endian + "HI", 42, 8)
    tiff += struct.pack(endian + "H", 1) + struct.pack(endian + "HHI", 0x0112, 3, 1)
    tiff += struct.pack(endian + "H", orientation & 0xFFFF) + b"\0\0" + struct.pack(endian + "I", 0)
    payload = b"Exif\0\0" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def mutate_jpeg(rng, d):
    d = bytearray(d)
    segs = jpeg_segments(d)
    sof = [s for s in segs if s[0] in (0xC0, 0xC1, 0xC2)]
    ops = ["sof-size", "sof-size", "sof-components", "sof-precision", "sof-sampling", "sof-qtable", "segment-length",
           "remove-segment", "duplicate-segment", "dri", "dht-counts", "sos", "exif-orientation", "exif-orientation",
           "exif-ifd", "exif-insert", "exif-insert", "entropy-flip", "no-eoi", "progressive-spectral"]
    op = rng.choice(ops)
    ex = exif_entry(d)
    if op.startswith("sof") and not sof:
        op = "entropy-flip"
    if op == "sof-size":
        m, off, _ = sof[0]
        h = rng.choice([0, 1, 2, 7, 8, 9, 16, 17, 255, 4096, 8192, 16383, 16384, 32767, 32768, 65535])
        w = rng.choice([0, 1, 2, 7, 8, 9, 16, 17, 255, 4096, 8192, 16383, 16384, 32767, 32768, 65535])
        which = rng.choice(["h", "w", "both"])
        if which in ("h", "both"):
            struct.pack_into(">H", d, off + 5, h)
        if which in ("w", "both"):
            struct.pack_into(">H", d, off + 7, w)
        return d, "SOF %s set (h=%d w=%d)" % (which, h, w)
    if op == "sof-components":
        m, off, _ = sof[0]
        v = rng.choice([0, 1, 2, 4, 5, 255])
        d[off + 9] = v
        return d, "SOF component count %d" % v
    if op == "sof-precision":
        v = rng.choice([0, 1, 12, 16, 255])
        d[sof[0][1] + 4] = v
        return d, "SOF precision %d" % v
    if op == "sof-sampling":
        m, off, _ = sof[0]
        n = d[off + 9]
        k = rng.randrange(max(n, 1))
        v = rng.choice([0x00, 0x11, 0x44, 0x41, 0x14, 0xFF, 0x05, 0x50, 0x22, 0x88])
        d[off + 10 + 3 * k + 1] = v
        return d, "SOF component %d sampling 0x%02x" % (k, v)
    if op == "sof-qtable":
        m, off, _ = sof[0]
        v = rng.choice([4, 15, 255, 3])
        d[off + 10 + 2] = v
        return d, "SOF quantization table id %d" % v
    if op == "segment-length":
        m, off, length = rng.choice(segs)
        v = rng.choice([0, 1, 2, length - 1, length + 1, 65535])
        struct.pack_into(">H", d, off + 2, max(0, min(v, 65535)))
        return d, "segment FF%02X length %d" % (m, v)
    if op == "remove-segment":
        m, off, length = rng.choice(segs)
        del d[off:off + 2 + length]
        return d, "segment FF%02X removed" % m
    if op == "duplicate-segment":
        m, off, length = rng.choice(segs)
        d[off:off] = d[off:off + 2 + length]
        return d, "segment FF%02X duplicated" % m
    if op == "dri":
        v = rng.choice([0, 1, 2, 65535, 7])
        at = segs[-1][1]
        d[at:at] = b"\xff\xdd\x00\x04" + struct.pack(">H", v)
        return d, "restart interval %d inserted" % v
    if op == "dht-counts":
        dht = [s for s in segs if s[0] == 0xC4]
        if not dht:
            return flip_bytes(rng, d), "byte flips"
        m, off, length = rng.choice(dht)
        v = rng.choice([255, 0, 16])
        for k in range(16):
            d[off + 5 + k] = v if rng.random() < 0.5 else d[off + 5 + k]
        return d, "DHT code counts set to %d" % v
    if op == "sos":
        sos = [s for s in segs if s[0] == 0xDA]
        if not sos:
            return flip_bytes(rng, d), "byte flips"
        m, off, length = sos[0]
        k = rng.choice(["count", "table", "component"])
        if k == "count":
            d[off + 4] = rng.choice([0, 2, 4, 255])
        elif k == "table":
            d[off + 6] = rng.choice([0x44, 0xFF, 0x33, 0x04])
        else:
            d[off + 5] = rng.choice([0, 9, 255])
        return d, "SOS %s changed" % k
    if op == "progressive-spectral":
        sos = [s for s in segs if s[0] == 0xDA]
        if not sos:
            return flip_bytes(rng, d), "byte flips"
        m, off, length = sos[0]
        end = off + 2 + length
        d[end - 3] = rng.choice([0, 63, 64, 255])
        d[end - 2] = rng.choice([0, 63, 64, 255])
        d[end - 1] = rng.choice([0x00, 0xFF, 0x0D, 0x10])
        return d, "SOS Ss/Se/AhAl = %d/%d/0x%02x" % (d[end - 3], d[end - 2], d[end - 1])
    if op == "exif-orientation":
        v = rng.choice([0, 9, 255, 65535, 2, 3, 4, 5, 6, 7, 8, 256 + 6])
        if ex and ex[3] is not None:
            t, e, ifd, ent = ex
            k = rng.choice(["value", "type", "count"])
            if k == "value":
                struct.pack_into(e + "H", d, ent + 8, v)
                return d, "EXIF orientation %d" % v
            if k == "type":
                tv = rng.choice([0, 1, 4, 9, 12, 255])
                struct.pack_into(e + "H", d, ent + 2, tv)
                return d, "EXIF orientation type %d" % tv
            cv = rng.choice([0, 2, 65535, 0xFFFFFFFF])
            struct.pack_into(e + "I", d, ent + 4, cv)
            return d, "EXIF orientation count %d" % cv
        op = "exif-insert"
    if op == "exif-ifd":
        if ex:
            t, e, ifd, ent = ex
            k = rng.choice(["entries", "offset", "byteorder", "magic42"])
            if k == "entries":
                v = rng.choice([0, 65535, 100])
                struct.pack_into(e + "H", d, ifd, v)
            elif k == "offset":
                v = rng.choice([0, 0xFFFFFFFF, 7, 0x7FFFFFF0, 1])
                struct.pack_into(e + "I", d, t + 4, v)
            elif k == "byteorder":
                d[t:t + 2] = b"MM" if e == "<" else b"II"
                v = "swapped"
            else:
                v = 0
                struct.pack_into(e + "H", d, t + 2, 0)
            return d, "EXIF IFD %s = %s" % (k, v)
        op = "exif-insert"
    if op == "exif-insert":
        v = rng.choice([5, 6, 7, 8, 0, 9, 65535])
        seg = bytearray(exif_app1(v, rng.choice(["<", ">"])))
        if rng.random() < 0.3:
            struct.pack_into(">H", seg, 2, rng.choice([2, 8, 14]))   # APP1 shorter than its EXIF
        d[2:2] = seg
        extra = ""
        if sof and rng.random() < 0.5:
            off = sof[0][1] + len(seg)
            struct.pack_into(">H", d, off + 5, rng.choice([1, 16384, 65535]))
            extra = " + odd SOF height"
        return d, "EXIF APP1 with orientation %d inserted%s" % (v, extra)
    if op == "no-eoi":
        if d[-2:] == b"\xff\xd9":
            del d[-2:]
        return d, "EOI removed"
    start = segs[-1][1] + 2 + segs[-1][2] if segs else 2
    return flip_bytes(rng, d, start=start), "entropy data byte flips"


def png_chunks(d):
    """[(offset, length, type)] of a PNG's chunks."""
    out, i = [], 8
    while i + 8 <= len(d):
        length = struct.unpack_from(">I", d, i)[0]
        out.append((i, length, bytes(d[i + 4:i + 8])))
        i += 12 + length
    return out


def png_chunk(ctype, data):
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(ctype + data) & 0xFFFFFFFF)


def rebuild_png(chunks):
    return b"\x89PNG\r\n\x1a\n" + b"".join(png_chunk(t, c) for t, c in chunks)


def mutate_png(rng, d):
    chunks = [(t, bytes(d[o + 8:o + 8 + n])) for o, n, t in png_chunks(d)]
    ihdr = bytearray(chunks[0][1])
    op = rng.choice(["ihdr-size"] * 3 + ["ihdr-depth", "ihdr-color", "ihdr-interlace", "ihdr-other", "chunk-length",
                                         "crc", "idat-raw", "idat-raw", "idat-split", "idat-empty", "drop-chunk",
                                         "dup-ihdr", "plte", "trns", "bomb", "idat-garbage", "exif-chunk"])
    if op == "ihdr-size":
        vals = [0, 1, 2, 7, 8, 65535, 65536, 100000, 1 << 24, 2**31 - 1, 2**31, 2**32 - 1]
        which = rng.choice(["w", "h", "both"])
        w, h = rng.choice(vals), rng.choice(vals)
        if which in ("w", "both"):
            struct.pack_into(">I", ihdr, 0, w)
        if which in ("h", "both"):
            struct.pack_into(">I", ihdr, 4, h)
        chunks[0] = (b"IHDR", bytes(ihdr))
        return rebuild_png(chunks), "IHDR %s (w=%d h=%d), CRC fixed" % (which, w, h)
    if op in ("ihdr-depth", "ihdr-color", "ihdr-interlace", "ihdr-other"):
        k = {"ihdr-depth": 8, "ihdr-color": 9, "ihdr-interlace": 12, "ihdr-other": rng.choice([10, 11])}[op]
        v = rng.choice({8: [0, 1, 2, 3, 4, 5, 7, 8, 16, 32, 255], 9: [0, 1, 2, 3, 4, 5, 6, 7, 255],
                        12: [0, 1, 2, 255]}.get(k, [1, 255]))
        ihdr[k] = v
        chunks[0] = (b"IHDR", bytes(ihdr))
        return rebuild_png(chunks), "IHDR byte %d = %d, CRC fixed" % (k, v)
    if op == "chunk-length":
        b = bytearray(d)
        o, n, t = rng.choice(png_chunks(d))
        v = rng.choice([0, 1, n - 1, n + 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF])
        struct.pack_into(">I", b, o, v & 0xFFFFFFFF)
        return b, "%s length %d" % (t.decode("latin-1"), v)
    if op == "crc":
        b = bytearray(d)
        o, n, t = rng.choice(png_chunks(d))
        b[o + 8 + n] ^= 0xFF
        return b, "%s CRC broken" % t.decode("latin-1")
    idat = b"".join(c for t, c in chunks if t == b"IDAT")
    others_before = [(t, c) for t, c in chunks if t not in (b"IDAT", b"IEND")]
    try:
        raw = bytearray(zlib.decompress(idat))
    except zlib.error:
        raw = bytearray()
    if op == "idat-raw" and raw:
        k = rng.choice(["filter-byte", "shorter", "longer", "all-ff", "empty"])
        w, h, depth, color = struct.unpack(">IIBB", bytes(ihdr[:10]))
        if k == "filter-byte":
            bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(color, 1) * max(depth, 8) // 8
            stride = 1 + (w * {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(color, 1) * depth + 7) // 8
            row = rng.randrange(max(1, min(h, len(raw) // max(stride, 1))))
            raw[row * stride] = rng.choice([5, 6, 127, 255])
            label = "IDAT row %d filter byte %d" % (row, raw[row * stride])
        elif k == "shorter":
            del raw[rng.randrange(len(raw)):]
            label = "IDAT raw data cut to %d bytes" % len(raw)
        elif k == "longer":
            raw += bytes(rng.choice([1, 100, 100000]))
            label = "IDAT raw data extended"
        elif k == "all-ff":
            raw[:] = b"\xff" * len(raw)
            label = "IDAT raw data all 0xff"
        else:
            raw = bytearray()
            label = "IDAT raw data empty"
        return rebuild_png(others_before + [(b"IDAT", zlib.compress(bytes(raw))), (b"IEND", b"")]), label + ", recompressed"
    if op == "idat-split":
        comp = zlib.compress(bytes(raw)) if raw else idat
        n = rng.choice([1, 2, 7])
        parts = [(b"IDAT", comp[i:i + n]) for i in range(0, len(comp), n)]
        return rebuild_png(others_before + parts[:200000] + [(b"IEND", b"")]), "IDAT split into %d-byte chunks" % n
    if op == "idat-empty":
        return rebuild_png(others_before + [(b"IDAT", b""), (b"IEND", b"")]), "empty IDAT"
    if op == "idat-garbage":
        return rebuild_png(others_before + [(b"IDAT", bytes(rng.randrange(256) for _ in range(200))), (b"IEND", b"")]), \
            "IDAT of random bytes"
    if op == "drop-chunk":
        t = rng.choice(sorted({t for t, _ in chunks}))
        return rebuild_png([(tt, c) for tt, c in chunks if tt != t]), "%s dropped" % t.decode()
    if op == "dup-ihdr":
        ihdr2 = bytearray(ihdr)
        struct.pack_into(">II", ihdr2, 0, 1, 1)
        return rebuild_png([chunks[0]] + [(b"IHDR", bytes(ihdr2))] + chunks[1:]), "second IHDR (1x1)"
    if op == "plte":
        n = rng.choice([0, 1, 257, 256 * 3 + 1])
        data = bytes(3 * n) if n != 256 * 3 + 1 else bytes(n)
        ch = [(t, c) for t, c in chunks if t != b"PLTE"]
        ihdr[9] = 3
        ihdr[8] = rng.choice([8, 4, 1])
        ch[0] = (b"IHDR", bytes(ihdr))
        return rebuild_png(ch[:1] + [(b"PLTE", data)] + ch[1:]), "palette colour type with a %d-entry PLTE" % n
    if op == "trns":
        data = bytes(rng.choice([0, 1, 2, 3, 7, 300]))
        ch = [(t, c) for t, c in chunks if t != b"tRNS"]
        at = next(i for i, (t, _) in enumerate(ch) if t == b"IDAT")
        return rebuild_png(ch[:at] + [(b"tRNS", data)] + ch[at:]), "tRNS of %d bytes" % len(data)
    if op == "exif-chunk":
        orient = rng.choice([6, 8, 0, 65535])
        ex = exif_app1(orient)[10:]
        at = next(i for i, (t, _) in enumerate(chunks) if t == b"IDAT")
        return rebuild_png(chunks[:at] + [(b"eXIf", ex)] + chunks[at:]), "eXIf chunk with orientation %d" % orient
    # bomb: a large image whose IDAT compresses to almost nothing
    w, h = rng.choice([(10000, 10000), (16384, 6103), (50000, 2000), (100001, 1000), (1, 100000000), (10001, 10000)])
    color, depth = rng.choice([(0, 1), (0, 8), (2, 8), (6, 16)])
    stride = 1 + (w * {0: 1, 2: 3, 6: 4}[color] * depth + 7) // 8
    comp = zlib.compressobj(6)
    body = bytearray()
    total, block = stride * h, bytes(1 << 20)      # all-zero rows: filter 0, black pixels
    for _ in range(total // len(block)):
        body += comp.compress(block)
    body += comp.compress(bytes(total % len(block))) + comp.flush()
    hdr = struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, 0)
    return rebuild_png([(b"IHDR", hdr), (b"IDAT", bytes(body)), (b"IEND", b"")]), \
        "decompression bomb %dx%d colour %d depth %d" % (w, h, color, depth)


def gen_image(rng, index, ctx):
    seeds = ctx["image_seeds"]
    name, data = rng.choice(seeds)
    is_png = data[:4] == b"\x89PNG"
    def aware(d):
        """Format-aware mutation; byte flips when the input is too broken to parse."""
        try:
            return (mutate_png if is_png else mutate_jpeg)(rng, d)
        except (struct.error, IndexError, ValueError, StopIteration, zlib.error):
            return flip_bytes(rng, d), "byte flips (unparsable for a format-aware mutation)"
    r = rng.random()
    if r < 0.3:
        out, label = generic_bytes(rng, data, start=2 if rng.random() < 0.8 else 0)
    else:
        out, label = aware(data)
    if rng.random() < 0.1:
        out2, label2 = aware(bytes(out)) if r >= 0.3 else generic_bytes(rng, out)
        out, label = out2, label + " + " + label2
    ext = ".png" if is_png else ".jpg"
    if rng.random() < 0.05:
        ext = ".jpg" if is_png else ".png"
        label += " (wrong extension)"
    fname = "mutant" + ext
    argv = ["detect"]
    if index % 4 == 3:
        argv += ["--save", "out"]
    if index % 5 == 4:
        argv += ["--full-decode"]
    argv.append(fname)
    return [Case("image-%04d" % index, "image", "%s: %s" % (name, label), argv, {fname: bytes(out)})]


# ----------------------------------------------------------------------------------------------
# Family 7: COCO annotations / results JSON
# ----------------------------------------------------------------------------------------------

JSON_VALUES = [10**400, -10**400, 2**63, 2**63 - 1, -2**63 - 1, 2**64, 1e308, -1e308, 1e-320, -1, 0, 0.5, -0.0,
               float("nan"), float("inf"), float("-inf"), None, "", "x", "1", "\u0000", True, False, [], {}, [1],
               [0, 0, 0, 0], [1, 2, 3], [[]], {"id": 1}, "__DEEP__", "__LONG__", 2**31, 2**32 + 1, -2**31 - 1]


def json_paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from json_paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from json_paths(v, path + (i,))


def json_get(node, path):
    for p in path:
        node = node[p]
    return node


def mutate_json(rng, doc, results):
    """Mutates a parsed COCO document in place (or returns a replacement); returns (doc, label)."""
    paths = list(json_paths(doc))
    op = rng.choice(["value"] * 6 + ["delete-key"] * 3 + ["bbox", "bbox", "dup-id", "dangling", "empty", "many",
                                                           "wrap", "extra-key", "score"])
    if op == "value":
        path = rng.choice(paths[1:]) if len(paths) > 1 else ()
        v = copy.deepcopy(rng.choice(JSON_VALUES))
        if not path:
            return v, "document replaced by %r" % (v,)
        json_get(doc, path[:-1])[path[-1]] = v
        return doc, "%s = %s" % (render_path(path), short(v))
    if op == "delete-key":
        dict_paths = [p for p in paths if isinstance(json_get(doc, p), dict) and json_get(doc, p)]
        if not dict_paths:
            return doc, "no change"
        p = rng.choice(dict_paths)
        key = rng.choice(sorted(json_get(doc, p)))
        del json_get(doc, p)[key]
        return doc, "deleted %s" % render_path(p + (key,))
    if op == "bbox":
        bb = [p for p in paths if p and p[-1] == "bbox"]
        if not bb:
            return doc, "no bbox"
        p = rng.choice(bb)
        v = rng.choice([[], [1, 2, 3], [1, 2, 3, 4, 5], [0, 0, -10, -10], [0, 0, 0, 0], [1e308, 1e308, 1e308, 1e308],
                        [float("nan")] * 4, [-1e308, 0, 1e308, 1], ["1", "2", "3", "4"], [None] * 4, [0, 0, 1e-320, 1e-320],
                        [2**63, 2**63, 1, 1]])
        json_get(doc, p[:-1])["bbox"] = v
        return doc, "%s = %s" % (render_path(p), short(v))
    if op == "score" and results and isinstance(doc, list) and doc:
        v = rng.choice([float("nan"), -1, 2, 1e308, None, "0.5", float("inf")])
        for r in doc if rng.random() < 0.5 else [rng.choice(doc)]:
            if isinstance(r, dict):
                r["score"] = v
        return doc, "score = %s" % short(v)
    if op == "dup-id" and not results and isinstance(doc, dict):
        sec = rng.choice(["images", "annotations", "categories"])
        if doc.get(sec):
            doc[sec].append(copy.deepcopy(doc[sec][0]))
            return doc, "duplicate entry in %s" % sec
    if op == "dangling":
        ids = [p for p in paths if p and p[-1] in ("image_id", "category_id", "id")]
        if ids:
            p = rng.choice(ids)
            v = rng.choice([999999, -1, 0, 2**62])
            json_get(doc, p[:-1])[p[-1]] = v
            return doc, "%s = %d" % (render_path(p), v)
    if op == "empty":
        if isinstance(doc, dict):
            sec = rng.choice(sorted(doc))
            doc[sec] = rng.choice([[], {}, None])
            return doc, "%s emptied" % sec
        return [], "empty results"
    if op == "many":
        lst = doc if isinstance(doc, list) else doc.get(rng.choice(["annotations", "images"]))
        if isinstance(lst, list) and lst:
            n = rng.choice([1000, 20000, 100000])
            proto = lst[0]
            for k in range(n):
                e = copy.deepcopy(proto)
                if isinstance(e, dict) and "id" in e and not results:
                    e["id"] = 1000000 + k
                lst.append(e)
            return doc, "%d copies of the first entry" % n
    if op == "wrap":
        return rng.choice([{"results": doc}, [doc], {}, "string", 5]), "document wrapped/replaced"
    if op == "extra-key":
        dict_paths = [p for p in paths if isinstance(json_get(doc, p), dict)]
        if dict_paths:
            p = rng.choice(dict_paths)
            json_get(doc, p)["unexpected_" + rng.choice(["a", "segmentation", "id"])] = rng.choice(JSON_VALUES[:10])
            return doc, "extra key in %s" % render_path(p)
    return doc, "no change (%s n/a)" % op


def render_path(path):
    return "".join("[%d]" % p if isinstance(p, int) else ("." + p if i else p) for i, p in enumerate(path)) or "<root>"


def short(v):
    s = json.dumps(v) if not isinstance(v, str) or not v.startswith("__") else v
    return s if len(s) < 60 else s[:57] + "..."


def dump_json(rng, doc):
    text = json.dumps(doc)   # writes NaN/Infinity for non-finite floats: not strict JSON, on purpose
    depth = rng.choice([100, 1000, 10000, 100000])
    text = text.replace('"__DEEP__"', "[" * depth + "]" * depth)
    text = text.replace('"__LONG__"', '"' + "L" * 1000000 + '"')
    return text.encode()


def gen_coco(rng, index, ctx):
    pairs = ctx["coco_pairs"]
    name, ann_bytes, res_bytes = rng.choice(pairs)
    target = rng.choice(["annotations", "annotations", "results", "results", "both"])
    raw = rng.random() < 0.2
    ann, res = ann_bytes, res_bytes
    labels = []
    for which in (["annotations", "results"] if target == "both" else [target]):
        src = ann if which == "annotations" else res
        if raw:
            kind = rng.choice(["flip", "truncate", "bom", "utf16", "invalid-utf8", "trailing"])
            if kind == "flip":
                out = bytes(flip_bytes(rng, src))
            elif kind == "truncate":
                out = bytes(truncate(rng, src))
            elif kind == "bom":
                out = b"\xef\xbb\xbf" + src
            elif kind == "utf16":
                out = src.decode().encode("utf-16")
            elif kind == "invalid-utf8":
                out = src.replace(b'"', b'"\xff', 1)
            else:
                out = src + b" garbage"
            label = "%s: raw %s" % (which, kind)
        else:
            doc, label = mutate_json(rng, json.loads(src), which == "results")
            out = dump_json(rng, doc)
            label = "%s: %s" % (which, label)
        labels.append(label)
        if which == "annotations":
            ann = out
        else:
            res = out
    label = "%s; %s" % (name, "; ".join(labels))
    files = {"ann.json": ann, "res.json": res}
    argv = ["eval", "--annotations", "ann.json", "--results", "res.json"]
    if index % 10 == 9:
        # run the model: annotations naming images of a small folder (file names mutated too)
        doc_images = [{"id": 1, "file_name": "coffee.png", "width": 600, "height": 400},
                      {"id": 2, "file_name": rng.choice(["missing.png", "../coffee.png", "", "/dev/null", "imgs",
                                                         "bad.png", "camera.png", "coffee.png", "x" * 5000]),
                       "width": rng.choice([512, 0, -1, 10**12]), "height": 512}]
        a = {"images": doc_images,
             "annotations": [{"id": 1, "image_id": 1, "category_id": 47, "bbox": [150, 20, 278, 289], "area": 80342,
                              "iscrowd": 0}],
             "categories": [{"id": 47, "name": "cup"}]}
        if rng.random() < 0.5:
            a, l2 = mutate_json(rng, a, False)
            label += "; images run: " + l2
        files = {"ann.json": dump_json(rng, a), "imgs/coffee.png": open(COFFEE, "rb").read(),
                 "imgs/camera.png": open(SAMPLES[1], "rb").read(), "imgs/bad.png": b"\x89PNG\r\n\x1a\n\0\0"}
        argv = ["eval", "--annotations", "ann.json", "--images", "imgs", "--results", "out.json",
                "--limit", rng.choice(["1", "2", "5"])]
        label = "eval --images; " + label
    elif rng.random() < 0.2:
        argv += rng.choice([["--per-class"], ["--format", "json"], ["--per-class", "--format", "json"]])
    return [Case("coco-%04d" % index, "coco", label, argv, files)]


# ----------------------------------------------------------------------------------------------
# Seeds and the main loop
# ----------------------------------------------------------------------------------------------

def load_context(families):
    ctx = {}
    if "cfg" in families or "weights" in families:
        ctx["cfg_text"] = open(CFG).read()
        ctx["weight_layout"] = weight_layout(ctx["cfg_text"])
    if "weights" in families:
        ctx["weights"] = open(WEIGHTS, "rb").read()
    if "model" in families:
        data = open(MODEL, "rb").read()
        ctx["model"] = data
        ctx["model_meta_len"] = struct.unpack_from("<Q", data, 40)[0]
        m = parse_model(data)
        ctx["model_parsed"] = m
        again, fields = encode_model(m)
        if bytes(again) != data:
            sys.exit("fuzz-mutate: re-encoding %s does not give the same bytes; the format changed?" % MODEL)
        ctx["model_fields"] = fields
    if "npy" in families:
        ctx["npy_payload"] = np.random.default_rng(1).random((1, 3, 416, 416), dtype=np.float32).astype("<f4").tobytes()
    if "cli" in families:
        ctx["cli_atoms"] = cli_atoms()
    if "image" in families:
        seeds = [(os.path.basename(p), open(p, "rb").read()) for p in SAMPLES]
        for n in sorted(os.listdir(IMAGE_FIXTURES)):
            if n.endswith((".jpg", ".png")):
                seeds.append((n, open(os.path.join(IMAGE_FIXTURES, n), "rb").read()))
        ctx["image_seeds"] = seeds
    if "onnx" in families:
        ctx["onnx_seeds"] = [(os.path.basename(p), open(p, "rb").read()) for p in ONNX_SEEDS]
    if "coco" in families:
        pairs = []
        for n in sorted(os.listdir(EVAL_FIXTURES)):
            if n.endswith(".annotations.json"):
                stem = n[:-len(".annotations.json")]
                r = os.path.join(EVAL_FIXTURES, stem + ".results.json")
                if os.path.exists(r):
                    pairs.append((stem, open(os.path.join(EVAL_FIXTURES, n), "rb").read(), open(r, "rb").read()))
        ctx["coco_pairs"] = pairs
    return ctx


def onnx_varints(data):
    """Offsets of protobuf length prefixes (a tag byte with wire type 2 followed by a varint) in `data`."""
    spots = []
    for i in range(len(data) - 2):
        if data[i] & 7 == 2 and 1 <= data[i] >> 3 <= 25 and data[i + 1] < 0x80:
            spots.append(i + 1)
    return spots


def gen_onnx(rng, index, ctx):
    """ONNX protobuf mutants of the fuzz seed and the unit-test graph: generic byte mutations, lengths and
    varints set to edge values (huge, zero, off by one, 10-byte varints), and edits of known fields."""
    name, base = rng.choice(ctx["onnx_seeds"])
    op = rng.choice(["bytes"] * 4 + ["length"] * 4 + ["varint"] * 2 + ["replace"] * 3)
    data = bytearray(base)
    if op == "bytes":
        out, label = generic_bytes(rng, bytes(data))
        data = bytearray(out)
    elif op == "length":
        spot = rng.choice(onnx_varints(data))
        value = rng.choice([0, 1, 0x7F, data[spot] + 1, max(0, data[spot] - 1)])
        data[spot] = value & 0x7F
        label = "length prefix at %d set to %d" % (spot, value & 0x7F)
    elif op == "varint":
        spot = rng.choice(onnx_varints(data))
        huge = rng.choice([b"\xff\xff\xff\xff\x0f", b"\xff" * 9 + b"\x01", b"\xff" * 10 + b"\x01", b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00"])
        data[spot:spot + 1] = huge
        label = "length prefix at %d replaced by a %d-byte varint" % (spot, len(huge))
    else:
        pairs = [(b"Conv", b"Conz"), (b"Split", b"Spliu"), (b"MaxPool", b"MinPool"), (b"Resize", b"Rescue"),
                 (b"kernel_shape", b"kernel_shapf"), (b"nearest", b"linear\x00"), (b"Concat", b"Concau"),
                 (b"Sigmoid", b"Sigmoie"), (b"pads", b"padz"), (b"names", b"namez"), (b"imgsz", b"imgsy")]
        old, new = rng.choice(pairs)
        at = data.find(old)
        if at >= 0:
            data[at:at + len(old)] = new[:len(old)].ljust(len(old), b"x")
        label = "%s renamed" % old.decode()
    return [Case("onnx-%04d" % index, "onnx", "%s: %s" % (name, label),
                 ["convert", "--onnx", "model.onnx", "-o", "out.yolo"], files={"model.onnx": bytes(data)})]


GENERATORS = {"cfg": gen_cfg, "weights": gen_weights, "model": gen_model, "npy": gen_npy, "cli": gen_cli,
              "image": gen_image, "coco": gen_coco, "onnx": gen_onnx}


def make_cases(family, index, seed, ctx):
    return GENERATORS[family](case_rng(seed, family, index), index, ctx)


def parse_counts(text, families):
    counts = {f: 300 for f in families}
    default = None
    for part in text.split(","):
        part = part.strip()
        if "=" in part:
            k, v = part.split("=", 1)
            if k not in FAMILIES:
                sys.exit("fuzz-mutate: unknown family %r in --cases" % k)
            counts[k] = int(v)
        elif part:
            default = int(part)
    if default is not None:
        for f in families:
            if f + "=" not in text:
                counts[f] = default
    return counts


def case_stream(families, counts, seed, ctx):
    for fam in families:
        for i in range(counts[fam]):
            yield from make_cases(fam, i, seed, ctx)


def table(results, families, counts):
    cols = ["family", "inputs", "runs", "ok", "error", "bad-error", "crash", "hang", "flagged"]
    rows = []
    for fam in families:
        rs = [r for r in results if r.case.family == fam]
        c = {k: sum(1 for r in rs if r.cls == k) for k in ("ok", "error", "bad-error", "crash", "hang")}
        rows.append([fam, counts[fam], len(rs), c["ok"], c["error"], c["bad-error"], c["crash"], c["hang"],
                     sum(1 for r in rs if r.flags)])
    tot = ["total", sum(r[1] for r in rows)] + [sum(r[k] for r in rows) for k in range(2, len(cols))]
    rows.append(tot)
    widths = [max(len(str(x)) for x in [c] + [r[i] for r in rows]) for i, c in enumerate(cols)]
    lines = ["  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(cols, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def report(results, families, counts, wall, args):
    out = ["fuzz-mutate: %s (run as %s; %s)" % (args.yolo_original, args.yolo, binary_info(args.yolo)),
           "seed %d, jobs %d, timeout %gs, memory limit %s MB, wall time %.0f s (%.1f min)"
           % (args.seed, args.jobs, args.timeout, args.mem_limit_mb or "no", wall, wall / 60), "",
           table(results, families, counts), ""]
    bad = [r for r in results if r.cls in ("crash", "hang")]
    sigs = {}
    for r in bad:
        sigs.setdefault((r.cls, r.signature), []).append(r)
    out.append("Distinct crash/hang signatures (%d):" % len(sigs))
    for (cls, sig), rs in sorted(sigs.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        fams = sorted({r.case.family for r in rs})
        first = rs[0]
        out.append("  [%s] x%d (%s) %s" % (cls, len(rs), ",".join(fams), sig))
        out.append("      e.g. %s: %s" % (first.case.id, first.case.label[:150]))
        out.append("      repro: %s" % getattr(first, "repro", ""))
    badmsgs = {}
    for r in results:
        if r.cls == "bad-error":
            badmsgs.setdefault(re.sub(r"\d+", "#", r.message)[:100], []).append(r)
    if badmsgs:
        out.append("")
        out.append("bad-error kinds (%d):" % len(badmsgs))
        for k, rs in sorted(badmsgs.items(), key=lambda kv: -len(kv[1])):
            out.append("  x%d %s   e.g. %s (%s)" % (len(rs), rs[0].message[:160], rs[0].case.id, rs[0].case.label[:80]))
    flagged = {}
    for r in results:
        for f in r.flags:
            flagged.setdefault(f.split(":")[0], []).append(r)
    if flagged:
        out.append("")
        out.append("Flags:")
        for k, rs in sorted(flagged.items()):
            ex = rs[0]
            detail = [f for f in ex.flags if f.startswith(k)][0]
            out.append("  %s x%d, e.g. %s [%s] %s (%s)" % (k, len(rs), ex.case.id, ex.cls, detail[:120], ex.case.label[:80]))
    return "\n".join(out)


def snapshot_binary(yolo, out):
    """Copies the binary to OUT/snapshot/bin/yolo, so that a rebuild during a long run does not mix
    two builds. OUT/snapshot/Weights links to the repository's Weights folder: the CLI finds its
    default model and darknet files from the executable's path."""
    snap = os.path.join(out, "snapshot")
    os.makedirs(os.path.join(snap, "bin"), exist_ok=True)
    dest = os.path.join(snap, "bin", "yolo")
    tmp = dest + ".new"
    shutil.copy2(yolo, tmp)
    os.replace(tmp, dest)
    link = os.path.join(snap, "Weights")
    if not os.path.islink(link):
        os.symlink(os.path.join(REPO, "Weights"), link)
    return dest


def binary_info(path):
    import hashlib
    h = hashlib.sha256(open(path, "rb").read()).hexdigest()[:16]
    st = os.stat(path)
    return "sha256 %s…, %d bytes, built %s" % (h, st.st_size, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.st_mtime)))


def replay(args, ctx):
    status = 0
    for cid in args.replay.split(","):
        m = re.match(r"^(\w+)-(\d+)(?:-(\w+))?$", cid)
        if not m or m.group(1) not in GENERATORS:
            sys.exit("fuzz-mutate: bad case id %r" % cid)
        cases = [c for c in make_cases(m.group(1), int(m.group(2)), args.seed, ctx) if c.id == cid or not m.group(3)]
        runner = Runner(args)
        for c in cases:
            r = runner.run(c)
            print("%s: %s (rc %s, %.2f s) %s" % (c.id, r.cls, r.rc, r.seconds, r.signature or r.message))
            print("  mutation:", c.label)
            print("  command: ", " ".join(shlex.quote(a) for a in [args.yolo] + c.argv))
            if r.flags:
                print("  flags:   ", r.flags)
            if hasattr(r, "repro"):
                print("  saved:   ", r.repro)
            sys.stdout.write(r.stderr.decode("utf-8", "replace")[-4000:])
            status |= r.cls in ("crash", "hang")
    return 1 if status else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the comment at the top of this script for the families, the classes and the output "
                                        "layout. The cli family has about 410 distinct single-flag cases (round-robin "
                                        "across subcommands); >= 90 cases is enough there.")
    ap.add_argument("--yolo", default=os.path.join(REPO, ".build/release/yolo"), help="the yolo binary")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated subset of: " + ",".join(FAMILIES))
    ap.add_argument("--cases", default="300", help="mutants per family: N, or N,family=M,... (default 300)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds before a run counts as a hang (default 20)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel runs (default 2)")
    ap.add_argument("--out", default="/tmp/fuzz-mutate-out", help="output directory (default /tmp/fuzz-mutate-out)")
    ap.add_argument("--workdir", default=None, help="where the per-case temporary directories go (default: system temp)")
    ap.add_argument("--mem-limit-mb", type=int, default=8192, help="address-space limit per run, 0 for none (default 8192)")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run --yolo in place instead of a copy taken at start (OUT/snapshot)")
    ap.add_argument("--replay", help="run only these case ids (comma-separated, e.g. model-0042-detect) and show their output")
    args = ap.parse_args()
    args.yolo = os.path.abspath(args.yolo)
    if not os.access(args.yolo, os.X_OK):
        sys.exit("fuzz-mutate: %s is not an executable (build with `swift build -c release`)" % args.yolo)
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    for f in families:
        if f not in FAMILIES:
            sys.exit("fuzz-mutate: unknown family %r (known: %s)" % (f, ", ".join(FAMILIES)))
    os.makedirs(args.out, exist_ok=True)
    TIMEOUT[0] = args.timeout
    args.yolo_original = args.yolo
    if not args.no_snapshot:
        args.yolo = snapshot_binary(args.yolo, args.out)
    if args.replay:
        fams = sorted({cid.split("-")[0] for cid in args.replay.split(",")})
        return replay(args, load_context(fams))
    counts = parse_counts(args.cases, families)
    ctx = load_context(families)
    shutil.rmtree(os.path.join(args.out, "crashes"), ignore_errors=True)
    runner = Runner(args)
    results = []
    t0 = time.monotonic()
    done = {f: 0 for f in families}
    last_print = [0.0]
    log = open(os.path.join(args.out, "results.jsonl"), "w")

    def record(r):
        if r is None:
            return
        results.append(r)
        done[r.case.family] += 1
        log.write(json.dumps({"id": r.case.id, "family": r.case.family, "class": r.cls, "rc": r.rc,
                              "seconds": round(r.seconds, 3), "message": r.message[:2000], "signature": r.signature,
                              "flags": r.flags, "mutation": r.case.label,
                              "argv": r.case.argv if sum(map(len, r.case.argv)) < 5000 else r.case.argv[:1],
                              "repro": getattr(r, "repro", "")}) + "\n")
        log.flush()
        if r.cls in ("crash", "hang"):
            print("  %-5s %-22s %s   [%s]" % (r.cls, r.case.id, r.signature[:110], r.case.label[:70]), flush=True)
        now = time.monotonic()
        if now - last_print[0] > 30:
            last_print[0] = now
            print("  ... %.0f s: %s" % (now - t0, ", ".join("%s %d" % (f, n) for f, n in done.items())), flush=True)

    pending = set()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for case in case_stream(families, counts, args.seed, ctx):
                while len(pending) >= args.jobs * 2:
                    finished, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    for f in finished:
                        pending.discard(f)
                        record(f.result())
                pending.add(pool.submit(runner.run, case))
            for f in concurrent.futures.as_completed(list(pending)):
                record(f.result())
    except KeyboardInterrupt:
        runner.stop()
        print("fuzz-mutate: interrupted; reporting what ran", file=sys.stderr)
    wall = time.monotonic() - t0
    log.close()
    text = report(results, families, counts, wall, args)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "reproducers.txt"), "w") as f:
        for r in results:
            if r.cls in ("crash", "hang"):
                f.write("%s\t%s\t%s\t%s\n" % (r.case.id, r.cls, r.signature, getattr(r, "repro", "")))
    print()
    print(text)
    print("\nresults: %s/results.jsonl, summary.txt, reproducers.txt, crashes/" % args.out)
    return 1 if any(r.cls in ("crash", "hang") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
