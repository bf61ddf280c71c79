#!/bin/bash
# Bad `rdma link add` input gets a clear error and leaks nothing.
# timeout: 120
. "$(dirname "$0")/lib.sh"

expect_fail() { # what, cmd...
	local what=$1
	shift
	if out=$("$@" 2>&1); then
		die "$what: succeeded but should fail"
	fi
	echo "$what: $out"
}

net_setup
modprobe softrnic

expect_fail "unknown netdev" rdma link add bad0 type roce netdev nosuchdev
expect_fail "loopback is not Ethernet" rdma link add bad1 type roce netdev lo
ip link add srdummy type dummy 2>/dev/null && {
	# A dummy device is ARPHRD_ETHER: accepted, then removed with it.
	rdma link add dm0 type roce netdev srdummy || die "dummy Ethernet netdev"
	ip link delete srdummy
	retry_until 20 sh -c '! rdma dev show dm0 >/dev/null 2>&1'
}
ip link add srtun type ipip local 10.0.0.1 remote 10.0.0.2 2>/dev/null && {
	expect_fail "ipip tunnel is not Ethernet" rdma link add bad2 type iwarp netdev srtun
	ip link delete srtun
}

rdma link add roce0 type roce netdev sr0 || die "add roce0"
expect_fail "duplicate name" rdma link add roce0 type roce netdev sr0
expect_fail "duplicate name, other type" rdma link add roce0 type iwarp netdev sr0
expect_fail "second roce device on sr0" rdma link add roce9 type roce netdev sr0
rdma link add iw0 type iwarp netdev sr0 || die "iwarp next to roce on sr0"
expect_fail "second iwarp device on sr0" rdma link add iw9 type iwarp netdev sr0
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev sr0 && {
	expect_fail "name of an rxe device" rdma link add rxe0 type roce netdev sr1
	rdma link delete rxe0
}
modprobe -r rdma_rxe

# The CLI reports the same errors readably.
out=$(softrnic add bad3 roce nosuchdev 2>&1) && die "softrnic add accepted a missing netdev"
echo "softrnic add: $out"
grep -qi "nosuchdev" <<<"$out" || die "CLI error does not name the netdev"
out=$(softrnic add roce0 roce sr0 2>&1) && die "softrnic add accepted a duplicate"
echo "softrnic add dup: $out"
out=$(softrnic add x0 ethernet sr0 2>&1) && die "softrnic add accepted a bad type"
echo "softrnic add bad type: $out"

devs=$(rdma dev show | grep -cE 'bad|roce9|iw9')
assert_eq "$devs" "0" "no half-created devices"
rdma link delete roce0
rdma link delete iw0
rmmod softrnic || die "rmmod after bad input: reference leaked"
net_teardown
echo "bad input OK"
