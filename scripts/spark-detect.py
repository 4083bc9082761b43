#!/usr/bin/env python3
"""Batch detection over many images with Apache Spark: the image paths are spread over executors, each
partition is piped (RDD.pipe) into `yolo detect --files-from - --format jsonl`, and the JSONL records are merged
back in input order into one file (written to a temporary file, then renamed).

    python3 scripts/spark-detect.py IMAGES_DIR_OR_LIST --out results.jsonl [--master local[2]]
        [--partitions N] [--yolo .build/release/yolo] [-- extra yolo detect options, e.g. --conf 0.3]

IMAGES_DIR_OR_LIST: a folder (walked for .jpg/.jpeg/.png, sorted) or a text file with one path per line.
Needs pyspark (pip install pyspark==4.3.0; scripts/spark-setup.sh makes a venv) and Java 17
(Debian: openjdk-17-jre-headless).

Each executor task runs `yolo` with one forward-pass thread (--threads 1): Spark's parallelism is the number
of tasks running at once (local[2]: two), so two-thread passes would only compete for the same cores.

On a real cluster (--master spark://host:7077 or yarn) the same binary runs unchanged; what changes:
  * the image paths must be readable on every executor (shared storage: NFS, a mounted bucket), or the
    partitions must carry the bytes instead of paths;
  * `yolo` and its model must be on every executor at the same path (--yolo), e.g. installed by the
    node image, or shipped with --files / --archives and named relative to the task's working directory;
    the converted model is found through $SWIFTYOLO_MODEL (set it with spark.executorEnv.SWIFTYOLO_MODEL);
  * --out is written by the driver, after `collect()`: for millions of images write per partition with
    `saveAsTextFile` instead and merge afterwards.
"""
import argparse
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def image_paths(source: str) -> list[str]:
    path = Path(source)
    if path.is_dir():
        found = [p for p in path.rglob("*") if p.suffix.lower() in {".jpg", ".jpeg", ".png"}]
        return sorted(str(p.resolve()) for p in found)
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("images")
    parser.add_argument("--out", required=True)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=0, help="default: 4 per executor core")
    parser.add_argument("--yolo", default=str(ROOT / ".build/release/yolo"))
    parser.add_argument("yolo_args", nargs="*", help="extra `yolo detect` options (after --)")
    args = parser.parse_args()

    from pyspark import SparkConf, SparkContext  # imported late: --help works without pyspark

    paths = image_paths(args.images)
    if not paths:
        print(f"spark-detect: {args.images}: no images", file=sys.stderr)
        return 1
    conf = SparkConf().setMaster(args.master).setAppName("yolo-detect")
    conf.set("spark.ui.enabled", "false")
    sc = SparkContext(conf=conf)
    sc.setLogLevel("ERROR")
    try:
        partitions = args.partitions or max(1, sc.defaultParallelism * 4)
        command = [args.yolo, "detect", "--files-from", "-", "--format", "jsonl", "--threads", "1", *args.yolo_args]
        lines = sc.parallelize(paths, numSlices=min(partitions, len(paths))).pipe(shlex.join(command), checkCode=False).collect()
    finally:
        sc.stop()

    records = {}
    for line in lines:
        record = json.loads(line)
        records[record["image"]] = line
    missing = [p for p in paths if p not in records]
    out = Path(args.out)
    fd, temporary = tempfile.mkstemp(dir=out.parent if str(out.parent) else ".", prefix=f".{out.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        for p in paths:
            if p in records:
                handle.write(records[p] + "\n")
    os.replace(temporary, out)
    print(f"spark-detect: {len(records)} of {len(paths)} images -> {out}", file=sys.stderr)
    if missing:
        print(f"spark-detect: {len(missing)} image(s) failed (see the executors' stderr), e.g. {missing[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
