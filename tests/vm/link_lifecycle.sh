#!/bin/bash
# rdma link add/show/delete of both device types on both ends of a veth
# pair (sr0 in the initial namespace, sr1 in netns "peer"); the module is
# loaded on demand by `rdma link add` through MODULE_ALIAS_RDMA_LINK.
# timeout: 120
. "$(dirname "$0")/lib.sh"

net_setup
rmmod softrnic 2>/dev/null

rdma link add roce0 type roce netdev sr0 || die "roce0 on sr0"
grep -q '^softrnic ' /proc/modules || die "module was not autoloaded"
rdma link add iw0 type iwarp netdev sr0 || die "iw0 on sr0"
in_peer rdma link add roce1 type roce netdev sr1 || die "roce1 on sr1 (peer ns)"
in_peer rdma link add iw1 type iwarp netdev sr1 || die "iw1 on sr1 (peer ns)"

links=$(rdma link show)
echo "$links"
for l in roce0/1 iw0/1 roce1/1 iw1/1; do
	grep -q "link $l " <<<"$links" || die "rdma link show lacks $l"
done
grep -q "link roce0/1 .*netdev sr0" <<<"$links" || die "roce0 not bound to sr0"
# The kernel names a port's netdev only to callers in the netdev's namespace.
in_peer rdma link show roce1/1 | grep -q "netdev sr1" || die "roce1 not bound to sr1"

# The devices are visible from the peer namespace too (shared rdma netns mode).
in_peer rdma dev show | grep -q roce1 || die "roce1 not visible in peer"

# sysfs says which node type each is.
assert_eq "$(cat /sys/class/infiniband/roce0/node_type)" "1: CA" "roce0 node_type"
assert_eq "$(cat /sys/class/infiniband/iw0/node_type)" "4: RNIC" "iw0 node_type"

rdma link delete roce0 || die "delete roce0"
rdma link delete iw0 || die "delete iw0"
rdma link delete roce1 || die "delete roce1"
rdma link delete iw1 || die "delete iw1"
[ -z "$(rdma link show | grep -E 'roce[01]|iw[01]')" ] || die "links left behind"
ls /sys/class/infiniband | grep -qE 'roce|iw' && die "sysfs entries left behind"

rmmod softrnic || die "rmmod after deleting every device"
net_teardown
echo "link lifecycle OK"
