#!/usr/bin/env bash
# Installs the Debian packages SwiftYOLO needs, only those that are missing.
# Uses sudo only when not running as root. Safe to run again: does nothing when all are present.
# Extra package names as arguments are installed too (scripts/serve-load.sh asks for hey this way).
set -euo pipefail
# KissFFT (libkissfft-dev) for the object trackers' FFTs.
# FFmpeg's libraries (5.1 on Debian 12) for the YOLOVideo target, and the ffmpeg command the video tests
# use to make their clips.
packages=(libopenblas-dev liblapacke-dev libturbojpeg0-dev libpng-dev zlib1g-dev libkissfft-dev pkg-config python3-pip
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libavdevice-dev ffmpeg "$@")
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# python3-pip is only needed when python3 has no pip of its own (e.g. a pyenv python already has one).
if python3 -m pip --version >/dev/null 2>&1; then
  missing=("${missing[@]/python3-pip}")
fi
read -r -a missing <<<"${missing[*]:-}"
if ((${#missing[@]} == 0)); then
  exit 0
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
echo "install-deps: apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
