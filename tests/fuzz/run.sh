#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build the RoCEv2 parser fuzzer and run it for a bounded time.
# Usage: tests/fuzz/run.sh [SECONDS]        (default 60)
# Exits non-zero if the build fails or the fuzzer finds a crash, a leak,
# a sanitizer report or a broken invariant; the crashing input is left in
# $BUILD/fuzz/ (BUILD defaults to build/).  New corpus entries go to
# $BUILD/fuzz/corpus, never into tests/fuzz/corpus (the committed seeds).
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$root/build}/fuzz
mkdir -p "$out/corpus"

make -s -C "$root/tests/fuzz" BUILD="$out"

# Only the fuzzer's own summary, last lines of any crash report.
log=$out/fuzz_roce_parse.log
if "$out/fuzz_roce_parse" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-max_len=4200 -print_final_stats=1 -artifact_prefix="$out/" \
	"$out/corpus" "$root/tests/fuzz/corpus" >"$log" 2>&1; then
	grep -E '^(Done|stat::number_of_executed_units)' "$log" || tail -2 "$log"
	echo "fuzz_roce_parse: no crash in ${secs}s"
else
	rc=$?
	tail -40 "$log"
	echo "fuzz_roce_parse: FAILED (exit $rc), see $log and $out/crash-*"
	exit 1
fi
