#!/bin/bash
# Receiver Not Ready (softrnic-rcsem --cases rnr, tests/vm/progs/rc_semantics.cpp):
# a SEND with no receive posted, the responder's min_rnr_timer 40.96 ms.
# rnr_retry 0..6: IBV_WC_RNR_RETRY_EXC_ERR after rnr_retry + 1 RNR NAKs
# (both devices' counters), not sooner than rnr_retry timer periods, the
# WRITE behind it flushed and never executed, the responder still RTS.
# rnr_retry 7 (infinite): a receive posted 0.6 s late completes the SEND
# with the right bytes.  The budget is per message: with rnr_retry 2,
# three SENDs in a row that each meet an RNR NAK all complete.  The
# rnr_naks_{sent,rcvd} counters of
# `rdma statistic` must move by the same amounts.
#   softrnic -> softrnic, rxe -> softrnic, softrnic -> rxe.
# timeout: 180
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"
have_softrnic || skip "softrnic.ko not built"
. "$(dirname "$0")/roce/rcsem.sh"

roce_pair_up

# stat WHERE DEV NAME: a port counter from `rdma statistic` (empty if none)
stat() {
	local pfx=$1
	$pfx rdma statistic show link "$2/1" 2>/dev/null |
		awk -v n="$3" '{ for (i = 3; i < NF; i += 2) if ($i == n) print $(i + 1) }'
}

rcvd0=$(stat "" roce0 rnr_naks_rcvd)
sent1=$(stat in_peer roce1 rnr_naks_sent)
[ -n "$rcvd0" ] && [ -n "$sent1" ] || die "no rnr_naks_rcvd / rnr_naks_sent counters"
rcsem_pass soft-soft peer roce1 roce0 --cases rnr
# rnr_retry 0..6: 1 + 2 + .. + 7 = 28 RNR NAKs, at least 2 while waiting
# with rnr_retry 7, 3 for rnr-retry-per-message
d_rcvd=$(($(stat "" roce0 rnr_naks_rcvd) - rcvd0))
d_sent=$(($(stat in_peer roce1 rnr_naks_sent) - sent1))
log "rdma statistic: roce0 rnr_naks_rcvd +$d_rcvd, roce1 rnr_naks_sent +$d_sent"
[ "$d_rcvd" -ge 30 ] && [ "$d_sent" = "$d_rcvd" ] ||
	die "rdma statistic: RNR NAK counters moved by $d_rcvd received, $d_sent sent (>= 30, equal)"

rdma link delete roce0 || die "delete roce0"
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
wait_gid g rxe0 "$GID4_0"
rcsem_pass rxe-to-soft peer roce1 rxe0 --cases rnr --rxe-requester
rcsem_pass soft-to-rxe init rxe0 roce1 --cases rnr --rxe-responder

rdma link delete rxe0
in_peer rdma link delete roce1 || die "delete roce1"
modprobe -r rdma_rxe
net_teardown
echo "roce_rnr OK"
