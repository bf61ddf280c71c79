#!/bin/bash
# The softrnic CLI: list, add, del.
# timeout: 120
. "$(dirname "$0")/lib.sh"

net_setup
modprobe softrnic
softrnic add roce0 roce sr0 || die "softrnic add roce0"
softrnic add iw0 iwarp sr0 || die "softrnic add iw0"
out=$(softrnic list)
echo "$out"
grep -E '^roce0\s+roce\s+sr0\s+ACTIVE\s+fe80:' <<<"$out" || die "roce0 row"
grep -E '^iw0\s+iwarp\s+sr0\s+ACTIVE\s+' <<<"$out" | grep -q uverbs || die "iw0 row"
rdma link show | grep -q 'roce0/1' || die "rdma does not see what softrnic added"
# Only our devices, unless --all.
modprobe rdma_rxe && rdma link add rxe0 type rxe netdev sr0 && {
	softrnic list | grep -q rxe0 && die "list shows rxe0 without --all"
	softrnic list --all | grep -q rxe0 || die "list --all lacks rxe0"
	rdma link delete rxe0
	modprobe -r rdma_rxe
}
softrnic del roce0 || die "softrnic del roce0"
softrnic del iw0 || die "softrnic del iw0"
out=$(softrnic del roce0 2>&1) && die "deleting a missing device succeeded"
echo "$out"
softrnic list | grep -q roce0 && die "roce0 still listed"
net_teardown
echo "tool OK"
