#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Memory-object tests in the VM: scripts/vm/run -- tests/kmod/memory/run-in-vm.sh
# (after make -C tests/kmod/memory).  Exit 0 iff everything passed and the
# kernel log stayed clean.
R=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=scripts/vm/lib.sh
. "$R/scripts/vm/lib.sh"
KO=$R/build/kmod-memory/softrnic_mtest.ko
UV=$R/build/mem_uverbs
P=/sys/module/softrnic_mtest/parameters/run
fail=0
bad() { echo "FAIL: $*"; fail=1; }

[ -f "$KO" ] && [ -x "$UV" ] || { echo "run make -C tests/kmod/memory first"; exit 2; }
# insmod does not resolve dependencies: load what softrnic.ko would pull in.
modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel || exit 2
insmod "$KO" || exit 2
ip link add mt0 type veth peer name mt1
ip addr add 10.9.0.1/24 dev mt0
ip link set mt0 up; ip link set mt1 up
rdma link add mtr0 type roce netdev mt0 || bad "add roce"
rdma link add mtw0 type iwarp netdev mt1 || bad "add iwarp"
for _ in $(seq 50); do	# wait for ib_core to add the IPv4 GID
	grep -qs ffff:0a09 /sys/class/infiniband/mtr0/ports/1/gids/* && break
	sleep 0.1
done

for d in mtr0 mtw0; do
	echo "$d" > $P || bad "kernel test on $d did not run"
	dmesg | grep -q "memtest: $d: [0-9]* passed, 0 failed" || bad "kernel test on $d"
	"$UV" $d | grep -v '^dev ' || bad "uverbs test on $d"
done
"$UV" mtr0 rlimit || bad "rlimit test"

hold() {
	"$UV" "$1" hold >"/tmp/hold.$1" 2>&1 &
	echo $!
	for _ in $(seq 100); do grep -qs holding "/tmp/hold.$1" && return; sleep 0.05; done
}
# kill -9 with objects held: everything freed.
p=$(hold mtr0)
kill -9 "$p"; wait "$p" 2>/dev/null
[ -z "$(rdma resource show mr | grep -w mtr0)" ] || bad "MRs left after kill"
# Link deletion and module unload while processes hold objects.
p=$(hold mtr0); q=$(hold mtw0)
rdma link del mtr0 || bad "del roce"
rdma link del mtw0 || bad "del iwarp"
kill -9 "$p" "$q"; wait 2>/dev/null
rdma link add mtr1 type roce netdev mt0 || bad "re-add"
p=$(hold mtr1)
rmmod softrnic_mtest || bad "rmmod with a live device"
kill -9 "$p"; wait 2>/dev/null
ip link del mt0

dmesg | grep -E "memtest:"
# What the harness counts as a splat (scripts/vm/lib.sh).  Not a bare
# "leak": the debug kernel's boot says "kmemleak: Kernel memory leak
# detector initialized"; kmemleak's reports are guest-suite's business.
if dmesg | grep -E -- "$VM_SPLAT_RE"; then
	bad "kernel log"
fi
[ $fail = 0 ] && echo "memory tests: PASS" || echo "memory tests: FAIL"
exit $fail
