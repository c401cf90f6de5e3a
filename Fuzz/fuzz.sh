#!/usr/bin/env bash
# `make fuzz`: builds the fuzz package (Fuzz/, libFuzzer + AddressSanitizer) into .build-fuzz/, generates
# the seed corpora, runs each harness for FUZZ_SECONDS and prints one line per harness: executions,
# executions per second, coverage (libFuzzer's cov: edges and ft: features), peak RSS and crashes.
# Exits 1 when any harness crashed (the input is saved in .build-fuzz/crashes/<harness>/), 2 when the
# build fails.
#
# Usage: Fuzz/fuzz.sh [HARNESS...]   (default: all; names without the fuzz- prefix)
# Environment: FUZZ_SECONDS (60 each), SWIFT (swift), KTV (a ktv binary for simulated replay seeds,
# default .build/release/ktv, skipped when missing), FUZZ_ARGS (more libFuzzer flags), FUZZ_SMOKE=1
# (start from the seeds alone, not the corpus earlier runs grew, so the run takes a bounded time).
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SECONDS_EACH=${FUZZ_SECONDS:-60}
OUT=.build-fuzz
HARNESSES=("$@")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(lyrics roundtrip replay pitchtrack audio reference score)

# Per harness: the largest input, and the time after which one input counts as a hang (a debug build
# with AddressSanitizer runs Swift code 10-50 times slower than release; these leave room for that).
max_len() { case $1 in audio) echo 131072 ;; *) echo 65536 ;; esac; }
timeout_s() { case $1 in audio) echo 60 ;; *) echo 30 ;; esac; }

# SwiftPM keeps the main package's list of source files from the first build of $OUT: a file added
# since is "not in scope" there. When the list changed, the build state starts afresh (the corpora,
# crashes and logs stay).
sources=$(find Sources -name '*.swift' | sort | sha1sum | cut -c1-16)
if [ -f "$OUT/sources.stamp" ] && [ "$(cat "$OUT/sources.stamp")" != "$sources" ]; then
    echo "fuzz: the main package's source files changed; rebuilding $OUT from scratch (corpora kept)"
    find "$OUT" -mindepth 1 -maxdepth 1 ! -name corpus ! -name crashes ! -name logs -exec rm -rf {} +
fi
mkdir -p "$OUT"
echo "$sources" > "$OUT/sources.stamp"
echo "fuzz: building the fuzz package (debug, -sanitize=fuzzer,address) into $OUT/ (log: $OUT/build.log)"
start=$(date +%s)
# Plain --sanitize=fuzzer links libFuzzer but leaves the Swift code uninstrumented: -Xswiftc adds the
# coverage and ASan instrumentation. -parse-as-library: libFuzzer has the main function.
if ! "$SWIFT" build --package-path Fuzz --scratch-path "$OUT" -c debug --sanitize=fuzzer \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library > "$OUT/build.log" 2>&1; then
    grep -v 'ld.gold: warning: Cannot export local symbol' "$OUT/build.log" | tail -n 40
    echo "fuzz: the build failed"
    exit 2
fi
echo "fuzz: built in $(( $(date +%s) - start )) s"
Fuzz/seeds.sh "$OUT/seeds" "${KTV:-.build/release/ktv}"

crashed=0
summary=()
for h in "${HARNESSES[@]}"; do
    bin="$OUT/debug/fuzz-$h"
    [ -x "$bin" ] || { echo "fuzz: no harness fuzz-$h"; exit 2; }
    corpus="$OUT/corpus/$h"
    if [ "${FUZZ_SMOKE:-0}" = 1 ]; then corpus="$OUT/smoke-corpus/$h"; rm -rf "$corpus"; fi
    mkdir -p "$corpus" "$OUT/crashes/$h" "$OUT/logs"
    log="$OUT/logs/$h.log"
    echo "fuzz: fuzz-$h for ${SECONDS_EACH} s (log: $log)"
    # SWIFT_BACKTRACE=enable=no: otherwise Swift's backtracer can hold the pipe for minutes after a
    # crash. detect_leaks=0: the Swift runtime's one-time allocations are not leaks worth failing on.
    # The corpus folder comes first: libFuzzer adds what it finds there, so later runs start further on.
    # shellcheck disable=SC2086
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 timeout --kill-after=30 $((SECONDS_EACH + 300)) \
        "$bin" -max_total_time="$SECONDS_EACH" -print_final_stats=1 -rss_limit_mb=2048 \
        -max_len="$(max_len "$h")" -timeout="$(timeout_s "$h")" \
        -artifact_prefix="$OUT/crashes/$h/" ${FUZZ_ARGS:-} \
        "$corpus" "$OUT/seeds/$h" > "$log" 2>&1
    rc=$?
    final_stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
    last=$(grep -E '^#[0-9]+[[:space:]].*cov: ' "$log" | tail -n 1)
    cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<< "$last")
    ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<< "$last")
    corp=$(sed -n 's/.*corp: \([0-9]*\).*/\1/p' <<< "$last")
    artifacts=$(grep -c 'Test unit written to' "$log")
    if [ "$rc" -ne 0 ] && [ "$artifacts" -eq 0 ]; then artifacts=1; fi   # died without saving its input
    line=$(printf 'fuzz-%-11s %7s execs  %5s exec/s  cov %5s  ft %6s  corpus %5s  peak rss %5s MB  crashes %s' \
        "$h" "$(final_stat number_of_executed_units)" "$(final_stat average_exec_per_sec)" "${cov:-?}" "${ft:-?}" \
        "${corp:-?}" "$(final_stat peak_rss_mb)" "$artifacts")
    echo "$line"
    summary+=("$line")
    if [ "$artifacts" -gt 0 ]; then
        crashed=1
        grep -E 'Fatal error|ERROR: (AddressSanitizer|libFuzzer)|^SUMMARY|Test unit written to' "$log" | head -n 8 | sed 's/^/    /'
        echo "    full log: $log; reproduce: SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 $bin FILE"
    fi
done

echo "== fuzz summary (${SECONDS_EACH} s each)"
printf '%s\n' "${summary[@]}"
if [ "$crashed" -ne 0 ]; then
    echo "fuzz: crashes found; inputs in $OUT/crashes/. Minimize one with: $OUT/debug/fuzz-HARNESS -minimize_crash=1 -max_total_time=60 FILE,"
    echo "then save it in fixtures/fuzz/HARNESS/ (the regression tests run every file there)"
    exit 1
fi
