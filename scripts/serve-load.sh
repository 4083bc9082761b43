#!/usr/bin/env bash
# Load test of `yolo serve` on loopback (issue 16's bars), with hey (Debian's package) as the client:
#   1. the in-process baseline: `yolo bench-serve` with the server's slots and 4 clients, no HTTP;
#   2. the server under hey at concurrency 1, 4 and 32, DURATION seconds each: requests/s, p50/p99,
#      status codes (below saturation every answer must be 200; above it only 200 and 429);
#   3. RSS of the server over REQUESTS requests (after 1,000 to warm up): first, last, min and max;
#   4. hostile clients (issue 37), one attack at a time for ATTACK_SECONDS each (scripts/serve-attack.py):
#      /healthz within 100 ms and detections within 2x their unloaded latency while each runs, no 5xx;
#   5. SIGTERM: the server must exit 0.
# Usage: scripts/serve-load.sh [IMAGE] (default: Samples/chelsea.png scaled to a 640×480 JPEG).
# Environment: DURATION (120), REQUESTS (20000), ATTACK_SECONDS (35: past the 30 s body timeout),
# ATTACKS_ONLY (1: skip 1 to 3), PORT (18090), SERVE_ARGS (extra `yolo serve` flags).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh hey
DURATION=${DURATION:-120}
REQUESTS=${REQUESTS:-20000}
ATTACK_SECONDS=${ATTACK_SECONDS:-35}
ATTACKS_ONLY=${ATTACKS_ONLY:-0}
PORT=${PORT:-18090}
YOLO=${YOLO:-.build/release/yolo}
[[ -x $YOLO ]] || swift build -c release --product yolo
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
image=${1:-$work/chelsea-640x480.jpg}
if [[ -z ${1:-} ]]; then
  ffmpeg -loglevel error -i Samples/chelsea.png -vf scale=640:480 -q:v 3 "$image"
fi
url="http://127.0.0.1:$PORT/v1/detect"
slots=$(nproc)
grep -m1 'model name' /proc/cpuinfo | sed 's/^.*: /cpu: /'
echo "cpu family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/^.*: //'), model $(grep -m1 '^model' /proc/cpuinfo | sed 's/^.*: //'); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"

if [[ $ATTACKS_ONLY != 1 ]]; then
  echo "== in-process: $slots slot(s) x 1 thread, 4 clients, ${DURATION}s"
  # shellcheck disable=SC2086
  "$YOLO" bench-serve "$image" --clients 4 --seconds "$DURATION"
fi

# shellcheck disable=SC2086
"$YOLO" serve --port "$PORT" --log-level warning ${SERVE_ARGS:-} 2>"$work/serve.log" &
server=$!
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
rss() { awk '/VmRSS/ {print $2}' "/proc/$server/status"; }

run_hey() { # concurrency, then hey's own flags
  local c=$1; shift
  hey "$@" -c "$c" -m POST -T image/jpeg -D "$image" "$url" >"$work/hey.txt"
  local rps p50 p99 codes
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/hey.txt")
  p50=$(awk '/ 50% in / {print $3 * 1000}' "$work/hey.txt")
  p99=$(awk '/ 99% in / {print $3 * 1000}' "$work/hey.txt")
  codes=$(awk '/Status code distribution/ {on=1; next} on && /\[/ {printf "%s%s", sep, $0; sep=","} on && /^$/ {on=0}' "$work/hey.txt" | tr -s ' ')
  echo "concurrency $c: $rps req/s, p50 $p50 ms, p99 $p99 ms, status:$codes"
  if grep -q "Error distribution" "$work/hey.txt"; then sed -n '/Error distribution/,$p' "$work/hey.txt"; fi
}

if [[ $ATTACKS_ONLY != 1 ]]; then
  echo "== yolo serve under hey, ${DURATION}s per concurrency (server: $slots slot(s) x 1 thread, queue $((4 * slots)))"
  for c in 1 4 32; do run_hey "$c" -z "${DURATION}s"; done

  echo "== RSS over $REQUESTS requests (concurrency 8)"
  run_hey 8 -n 1000 >/dev/null
  first=$(rss)
  : >"$work/rss"
  ( while kill -0 "$server" 2>/dev/null; do rss >>"$work/rss"; sleep 2; done ) &
  sampler=$!
  run_hey 8 -n "$REQUESTS"
  kill $sampler 2>/dev/null || true
  last=$(rss)
  sort -n "$work/rss" | awk -v first="$first" -v last="$last" 'NR==1 {min=$1} {max=$1} END {
    printf "RSS after 1000 requests %d kB, after %s more %d kB (%+.1f %%); sampled min %d kB, max %d kB\n", first, ENVIRON["REQUESTS"], last, 100 * (last - first) / first, min, max }'
fi

echo "== hostile clients, ${ATTACK_SECONDS}s each (scripts/serve-attack.py)"
# A 36 MP 16-bit RGBA PNG (flat, so 0.4 MB): about 550 MB to decode and prepare at fit.
ffmpeg -loglevel error -f lavfi -i color=c=0x336699:s=7360x4912 -frames:v 1 -pix_fmt rgba64be "$work/36mp-rgba16.png"
attacks=0
python3 scripts/serve-attack.py --port "$PORT" --pid "$server" --image "$image" --png36 "$work/36mp-rgba16.png" \
  --seconds "$ATTACK_SECONDS" || attacks=$?

kill -TERM "$server"
wait "$server" && echo "SIGTERM: exit status 0" || echo "SIGTERM: exit status $?"
server=
grep -E "error|critical" "$work/serve.log" || true
exit "$attacks"
