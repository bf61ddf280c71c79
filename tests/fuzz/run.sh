#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build the protocol fuzzers and run each for a bounded time.
# Usage: tests/fuzz/run.sh [SECONDS [TARGET...]]   (default 60, all targets)
#   fuzz_roce_parse    RoCEv2 parser, seeds in tests/fuzz/corpus
#   fuzz_iwarp_stream  MPA stream receiver and DDP/RDMAP parser, seeds in
#                      tests/fuzz/corpus-iwarp
# Exits non-zero if the build fails or a fuzzer finds a crash, a leak, a
# sanitizer report or a broken invariant; the crashing input is left in
# $BUILD/fuzz/ (BUILD defaults to build/).  New corpus entries go to
# $BUILD/fuzz/corpus-TARGET, never into the committed seeds.
set -eu
secs=${1:-60}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${BUILD:-$root/build}/fuzz
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_roce_parse fuzz_iwarp_stream)

make -s -C "$root/tests/fuzz" BUILD="$out"

seeds_of() {
	case $1 in
	fuzz_roce_parse) echo "$root/tests/fuzz/corpus" ;;
	fuzz_iwarp_stream) echo "$root/tests/fuzz/corpus-iwarp" ;;
	*) echo "run.sh: unknown target $1" >&2; exit 2 ;;
	esac
}

rc=0
for t in "${targets[@]}"; do
	seeds=$(seeds_of "$t")
	mkdir -p "$out/corpus-$t"
	# Only the fuzzer's own summary, last lines of any crash report.
	log=$out/$t.log
	if "$out/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=4200 -print_final_stats=1 -artifact_prefix="$out/$t-" \
		"$out/corpus-$t" "$seeds" >"$log" 2>&1; then
		grep -E '^(Done|stat::number_of_executed_units)' "$log" || tail -2 "$log"
		echo "$t: no crash in ${secs}s"
	else
		tail -40 "$log"
		echo "$t: FAILED, see $log and $out/$t-crash-*"
		rc=1
	fi
done
exit $rc
