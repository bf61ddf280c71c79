#!/bin/bash
# RFC 7306 on softrnic's iWARP wire (Documentation/wire-iwarp.md):
# build/userspace/softrnic-iwarp-ext (tests/vm/progs/iwarp_ext.c) checks
# SEND/WRITE_WITH_IMM and FetchAdd/CmpSwap byte for byte over rdma_cm,
# READs and atomics interleaved beyond the ORD, and the completion status
# of a misaligned atomic and of one with a bad rkey (each TERMINATEs the
# connection).  ib_atomic_bw -R (both atomics, 16 outstanding) and
# ib_atomic_lat -R.  Then against siw, which has no RFC 7306: the
# connection comes up without it, SEND_WITH_IMM fails locally with
# IBV_WC_LOC_QP_OP_ERR and siw receives nothing, ib_atomic_bw fails, and
# rping -V still runs both ways.
# iw0 on sr0 (10.0.0.1), iw1 / siw1 on sr1 in netns peer (10.0.0.2).
# timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/iwarp/lib.sh"

EXT=$SOFTRNIC_ROOT/build/userspace/softrnic-iwarp-ext
have_softrnic || skip "softrnic.ko not built"
[ -x "$EXT" ] || skip "softrnic-iwarp-ext not built (make userspace)"
if ! command -v rping >/dev/null || ! command -v ib_atomic_bw >/dev/null; then
	skip "rdmacm-utils / perftest not installed"
fi
iwarp_pair_up
OUT=/tmp/iw7306

listening() { in_peer rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*:$1\b"; }
stat_of() { in_peer rdma statistic show link "$1/1" | grep -o "$2 [0-9]*" | cut -d' ' -f2; }

ibv_devinfo -v -d iw0 | grep -q 'atomic_cap:.*ATOMIC_HCA' || die "iw0: atomic_cap is not HCA"

# ext MODE [SERVER_MODE]: one softrnic-iwarp-ext pair, server on 10.0.0.2
ext() {
	in_peer timeout 60 "$EXT" -s 10.0.0.2 "${2:-align}" >"$OUT.srv" 2>&1 &
	local spid=$! rc=0
	retry_until 10 listening 7471
	timeout 60 "$EXT" 10.0.0.2 "$1" || rc=1
	wait $spid || rc=1
	cat "$OUT.srv"
	[ $rc = 0 ] || die "softrnic-iwarp-ext $1 failed"
}

log "softrnic <-> softrnic"
ext align
ext rkey
[ "$(stat_of iw1 atomics_executed)" -ge 16 ] || die "atomics not counted"
[ "$(stat_of iw1 terminates_sent)" -ge 2 ] || die "the TERMINATEs not counted"

# perf PORT SERVER_DEV CLIENT_DEV TOOL ARGS...: a perftest pair over rdma_cm
perf() {
	local port=$1 sdev=$2 cdev=$3 tool=$4 rc=0
	shift 4
	in_peer timeout 120 "$tool" -R -d "$sdev" -p "$port" "$@" >"$OUT.srv" 2>&1 &
	local spid=$!
	retry_until 10 listening "$port"
	timeout 120 "$tool" -R -d "$cdev" -p "$port" "$@" 10.0.0.2 >"$OUT.cli" 2>&1 || rc=1
	wait $spid || rc=1
	return $rc
}
for a in FETCH_AND_ADD CMP_AND_SWAP; do
	perf 18515 iw1 iw0 ib_atomic_bw -n 1000 -o 16 -A "$a" ||
		{ cat "$OUT.cli" "$OUT.srv"; die "ib_atomic_bw $a"; }
done
perf 18516 iw1 iw0 ib_atomic_lat -n 500 || { cat "$OUT.cli" "$OUT.srv"; die "ib_atomic_lat"; }

log "softrnic -> siw (no RFC 7306)"
in_peer rdma link delete iw1 || die "delete iw1"
siw_add siw1 sr1 "$PEER_NS" || die "siw_add siw1"
ext none none
perf 18517 siw1 iw0 ib_atomic_bw -n 10 && die "ib_atomic_bw against siw succeeded"
grep -q 'status' "$OUT.cli" || { cat "$OUT.cli"; die "ib_atomic_bw against siw: no completion error"; }

in_peer rping -s -a 10.0.0.2 -p 7481 -C 20 -S 2000 -V >"$OUT.srv" 2>&1 &
spid=$!
retry_until 10 listening 7481
timeout 60 rping -c -a 10.0.0.2 -p 7481 -C 20 -S 2000 -V || die "rping iw0 -> siw1"
wait $spid || { cat "$OUT.srv"; die "rping server on siw1"; }
timeout 60 rping -s -a 10.0.0.1 -p 7482 -C 20 -S 2000 -V >"$OUT.srv" 2>&1 &
spid=$!
retry_until 10 sh -c "rdma resource show cm_id 2>/dev/null | grep -q 'state LISTEN .*:7482\b'"
in_peer timeout 60 rping -c -a 10.0.0.1 -p 7482 -C 20 -S 2000 -V || die "rping siw1 -> iw0"
wait $spid || { cat "$OUT.srv"; die "rping server on iw0"; }

in_peer rdma link delete siw1 || die "delete siw1"
rdma link delete iw0 || die "delete iw0"
net_teardown
echo "iwarp_rfc7306 OK"
