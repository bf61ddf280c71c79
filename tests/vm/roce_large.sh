#!/bin/bash
# 2 GiB messages softrnic <-> softrnic (softrnic-rcsem --cases large, see
# tests/vm/progs/rc_semantics.cpp): one RDMA WRITE, one RDMA READ and one
# SEND of 2^31 bytes (max_msg_sz; rdma_rxe stops at 8 MiB, so no rxe
# here), each end's buffer a small memfd mapped again and again (the
# server's 2 GiB MR is 2 MiB of memory, the client's 32 SGEs all cover the
# same 64 MiB = 1 MiB mapped 64 times), checked by content, byte_len and
# both QPs staying RTS.  In a 2 GiB VM, at MTU 9000 (4096-byte packets).
# Under TCG each takes 60-85 s (~30 MB/s), so CI (tests/vm/SUITE) runs the
# WRITE only; SOFTRNIC_LARGE_CASES=large runs all three (seen passing:
# 227 s), e.g. SOFTRNIC_LARGE_CASES=large scripts/vm/run-suite tests/vm/roce_large.sh
# CI also runs read-psn-span: a 2 GiB READ at path MTU 256 is 2^23 PSNs,
# more than a requester may have outstanding; it must fail at once with
# a local length error, where it used to hang with no completion.
# timeout: 700
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"
have_softrnic || skip "softrnic.ko not built"
. "$(dirname "$0")/roce/rcsem.sh"

roce_pair_up
# 4096-byte packets: a quarter of the per-packet work of MTU 1500's 1024
"$IP" link set sr0 mtu 9000 && in_peer "$IP" link set sr1 mtu 9000 || die "mtu 9000"
mtu4k() { ibv_devinfo -d roce0 | grep -q "active_mtu:.*4096" &&
	in_peer ibv_devinfo -d roce1 | grep -q "active_mtu:.*4096"; }
retry_until 10 mtu4k
cases=${SOFTRNIC_LARGE_CASES:-large-write,read-psn-span}
RCSEM_TIMEOUT=650 rcsem_pass large peer roce1 roce0 --cases "$cases"
grep -h "2 GiB in" /tmp/large.cli | sed 's/^/    /' >&2
in_peer rdma link delete roce1 || die "delete roce1"
rdma link delete roce0 || die "delete roce0"
net_teardown
echo "roce_large OK"
