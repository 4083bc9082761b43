#!/usr/bin/env bash
# Java 17 (Debian) and a venv with pyspark 4.3.0 for scripts/spark-detect.py; idempotent.
# Usage: bash scripts/spark-setup.sh [VENV]   (default .build/spark-venv); then VENV/bin/python scripts/spark-detect.py ...
set -euo pipefail
venv=${1:-.build/spark-venv}
if ! command -v java >/dev/null 2>&1; then
  sudo=(); if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import pyspark, sys; sys.exit(pyspark.__version__ != "4.3.0")' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q pyspark==4.3.0
fi
echo "spark-setup: $("$venv/bin/python" -c 'import pyspark; print("pyspark", pyspark.__version__)'), $(java -version 2>&1 | head -1)"
