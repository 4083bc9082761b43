#!/usr/bin/env bash
# Builds the fuzz package and runs each libFuzzer target for a while on a scratch copy of its seed corpus.
#
#   Fuzz/run.sh [SECONDS] [TARGET...]        SECONDS per target (default 60); targets default to all
#
# Prints, per target, the executions reached, exec/s and any crash / leak / timeout / OOM artifact (with the
# top frames of its stack), copies artifacts and logs to $FUZZ_FINDINGS/<target>/ and exits 1 when anything
# was found (2 on a build or usage error). The committed corpus under Fuzz/Corpus is only read.
#
# Environment:
#   FUZZ_CONFIG=debug|release   build configuration (default debug; release is untried so far)
#   FUZZ_KEEP_GOING=1           libFuzzer fork mode: keep fuzzing after a finding and collect them all
#                               (default: stop at the first finding, as CI wants)
#   FUZZ_FINDINGS=DIR           where artifacts and logs are kept (default /tmp/fuzz-findings)
#   FUZZ_WORK=DIR               scratch parent directory (default $TMPDIR or /tmp)
#   FUZZ_NO_BUILD=1             use the binaries already built
#   FUZZ_ARGS="..."             extra libFuzzer flags (e.g. -max_len=65536, -jobs is not supported here)
#
# From a Makefile:   fuzz: ; Fuzz/run.sh $(FUZZ_SECONDS)
# In CI:             Fuzz/run.sh 15   (.ci/run)
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
all_targets=(fuzz-cfg fuzz-weights fuzz-model fuzz-image fuzz-coco fuzz-npy fuzz-onnx)

seconds="${1:-60}"
[[ $# -gt 0 ]] && shift
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || (( seconds < 1 )); then
    echo "usage: $0 [SECONDS] [TARGET...]   (targets: ${all_targets[*]})" >&2
    exit 2
fi
targets=("$@")
(( ${#targets[@]} == 0 )) && targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
    [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "run.sh: unknown target '$t' (${all_targets[*]})" >&2; exit 2; }
done

config="${FUZZ_CONFIG:-debug}"
findings="${FUZZ_FINDINGS:-/tmp/fuzz-findings}"
work_parent="${FUZZ_WORK:-${TMPDIR:-/tmp}}"

# The Swift runtime's crash backtracer would symbolicate in a helper process for every crash (slow, and it
# has been seen to hang on a libFuzzer crash); ASan's own report already carries the stack.
export SWIFT_BACKTRACE=enable=no
# One BLAS thread: the targets run one input at a time and fork mode must not oversubscribe 2 cores.
export OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1:detect_stack_use_after_return=0}"
# A leak inside the toolchain's Foundation is suppressed (lsan.supp says which and why).
export LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
symbolizer="$(command -v llvm-symbolizer || true)"
[[ -z "$symbolizer" && -x "$(dirname "$(command -v swiftc)")/llvm-symbolizer" ]] && symbolizer="$(dirname "$(command -v swiftc)")/llvm-symbolizer"
[[ -n "$symbolizer" ]] && export ASAN_SYMBOLIZER_PATH="$symbolizer"

# --sanitize=fuzzer tells SwiftPM it links libFuzzer's main (no entry-point renaming of executables);
# the single combined -sanitize=fuzzer,address must come last: swiftc keeps only the last -sanitize= flag,
# so `--sanitize=fuzzer --sanitize=address` would build with ASan but no coverage.
build=(swift build -c "$config" --package-path "$here" --sanitize=fuzzer
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)
if [[ -z "${FUZZ_NO_BUILD:-}" ]]; then
    echo "== building: ${build[*]}"
    start=$SECONDS
    build_log="$(mktemp "$work_parent/fuzz-build.XXXXXX")"
    if ! "${build[@]}" >"$build_log" 2>&1; then
        grep -v "Cannot export local symbol" "$build_log" | tail -40 >&2
        echo "run.sh: build failed (full log: $build_log)" >&2
        exit 2
    fi
    rm -f "$build_log"
    echo "== built in $((SECONDS - start)) s"
fi
bin_dir="$(swift build -c "$config" --package-path "$here" --show-bin-path 2>/dev/null)"

mkdir -p "$findings"
status=0
summary=()
for target in "${targets[@]}"; do
    binary="$bin_dir/$target"
    [[ -x "$binary" ]] || { echo "run.sh: $binary is missing (build first)" >&2; exit 2; }
    scratch="$(mktemp -d "$work_parent/$target.XXXXXX")"
    mkdir -p "$scratch/corpus" "$scratch/artifacts"
    [[ -d "$here/Corpus/$target" ]] && cp -R "$here/Corpus/$target/." "$scratch/corpus/"
    flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -detect_leaks=1
           -print_final_stats=1 -artifact_prefix="$scratch/artifacts/" -max_len=65536)
    [[ -f "$here/Dictionaries/$target.dict" ]] && flags+=(-dict="$here/Dictionaries/$target.dict")
    [[ -n "${FUZZ_KEEP_GOING:-}" ]] && flags+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    # shellcheck disable=SC2206
    flags+=(${FUZZ_ARGS:-})
    log="$scratch/fuzz.log"
    echo "== $target: ${seconds} s"
    (cd "$scratch" && "$binary" "${flags[@]}" "$scratch/corpus" >"$log" 2>&1)
    rc=$?

    # Executions and speed: the final stats (single process) or the last status line (fork mode).
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
    if [[ -z "$execs" ]]; then
        last="$(grep -E '^#[0-9]+' "$log" | tail -1)"
        execs="$(sed -E 's/^#([0-9]+).*/\1/' <<<"$last")"
        # Fork mode: the status line's exec/s is the last child's; report the average over the run.
        [[ -n "$execs" ]] && rate=$(( execs / seconds ))
    fi
    cov="$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)"

    mapfile -t artifacts < <(find "$scratch/artifacts" -maxdepth 1 -type f \
        \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
    line="$target: ${execs:-?} execs, ${rate:-?} exec/s, ${cov:-no coverage line}"
    if (( ${#artifacts[@]} > 0 )) || { (( rc != 0 )) && [[ -z "${FUZZ_KEEP_GOING:-}" ]]; }; then
        status=1
        keep="$findings/$target"
        mkdir -p "$keep"
        cp "$log" "$keep/fuzz-$(date +%Y%m%d-%H%M%S).log"
        line+=", exit $rc, ${#artifacts[@]} artifact(s)"
        for artifact in "${artifacts[@]}"; do
            cp "$artifact" "$keep/"
            kept="$keep/$(basename "$artifact")"
            # Re-run the artifact once for its message and top frames in this project's sources.
            trace="$(cd "$scratch" && timeout 60 "$binary" -timeout=10 -rss_limit_mb=2048 "$artifact" 2>&1 || true)"
            printf '%s\n' "$trace" > "$kept.trace"
            message="$(grep -m1 -E 'Fatal error|runtime failure|ERROR: AddressSanitizer|ERROR: LeakSanitizer|ERROR: libFuzzer|Precondition failed|out-of-memory|timeout' <<<"$trace" | cut -c1-200)"
            frames="$(grep -E '^ *#[0-9]+ .* in .*(/Sources/|/Fuzz/)' <<<"$trace" | head -3 \
                      | sed -E 's/^ *(#[0-9]+) 0x[0-9a-f]+ in /\1 /; s/ \(.*BuildId.*//' | cut -c1-220)"
            line+=$'\n'"    $kept"$'\n'"      ${message:-<no message>}"
            [[ -n "$frames" ]] && line+=$'\n'"$(sed 's/^/      /' <<<"$frames")"
        done
    fi
    echo "$line"
    summary+=("$line")
    rm -rf "$scratch"
done

echo
echo "== summary (${seconds} s per target, $config build)"
printf '%s\n' "${summary[@]}"
if (( status != 0 )); then
    echo "== findings kept in $findings"
fi
exit $status
