#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Checks the built provider plugin without any RDMA device:
#   - it is a plain module (no SONAME) that exports only the direct verbs
#     of softrnicdv.h, versioned SOFTRNICDV_1.0;
#   - it has an ELF constructor (its only way to register);
#   - every libibverbs symbol it needs is versioned IBVERBS_PRIVATE_<N> or
#     IBVERBS_1.x, and the dynamic linker resolves all of them (dlopen probe);
#   - loading it prints nothing.
# usage: module_smoke.sh <libsoftrnic-rdmavN.so> <N> <dlopen_probe>
set -eu
so=$1
pabi=$2
probe=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$so" ] || fail "$so not built"
for tool in readelf objdump nm; do
	command -v $tool >/dev/null || fail "$tool (binutils) missing"
done

dyn=$(readelf -d "$so")
echo "$dyn" | grep -q '(SONAME)' && fail "module has a SONAME"
echo "$dyn" | grep -q 'Shared library: \[libibverbs.so.1\]' || fail "does not link libibverbs.so.1"
echo "$dyn" | grep -q '(INIT_ARRAY)' || fail "no ELF constructor (INIT_ARRAY)"

exported=$(nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $2, $3 }')
[ "$exported" = "T softrnicdv_wr_flush" ] || fail "module exports: $exported (want softrnicdv_wr_flush only)"
objdump -T "$so" | grep -q 'SOFTRNICDV_1.0 *softrnicdv_wr_flush$' ||
	fail "softrnicdv_wr_flush is not versioned SOFTRNICDV_1.0"

syms=$(objdump -T "$so")
verbs_versions=$(echo "$syms" | awk '/\*UND\*/ { for (i = 1; i <= NF; i++) if ($i ~ /^\(?IBVERBS_/) print $i }' |
	tr -d '()' | sort -u)
[ -n "$verbs_versions" ] || fail "no libibverbs symbols referenced?"
for v in $verbs_versions; do
	case "$v" in
	IBVERBS_PRIVATE_"$pabi" | IBVERBS_1.*) ;;
	*) fail "needs libibverbs symbol version $v" ;;
	esac
done
echo "$syms" | grep -q "verbs_register_driver_$pabi" || fail "does not call verbs_register_driver_$pabi"

out=$("$probe" "$so" 2>&1) || fail "dlopen: $out"
[ "$out" = "loaded" ] || fail "loading printed: $out"

echo "ok: $(basename "$so") needs $(echo $verbs_versions | tr ' ' ','), exports softrnicdv_wr_flush@SOFTRNICDV_1.0 only, loads cleanly"
