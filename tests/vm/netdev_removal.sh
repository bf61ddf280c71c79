#!/bin/bash
# Deleting the netdev removes the devices bound to it, on both ends and in
# any namespace; so does deleting the namespace that holds it.
# timeout: 120
. "$(dirname "$0")/lib.sh"

gone() { ! rdma dev show "$1" >/dev/null 2>&1; }

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
in_peer rdma link add roce1 type roce netdev sr1 || die "add roce1"
in_peer rdma link add iw1 type iwarp netdev sr1 || die "add iw1"

ip link delete sr0   # takes sr1 with it
retry_until 20 gone roce0
retry_until 20 gone iw0
retry_until 20 gone roce1
retry_until 20 gone iw1
net_teardown

# Namespace removal destroys its veth end; the device goes with it.
net_setup
in_peer rdma link add roce1 type roce netdev sr1 || die "add roce1 (2)"
rdma link add roce0 type roce netdev sr0 || die "add roce0 (2)"
ip netns delete peer
retry_until 20 gone roce1
retry_until 20 gone roce0
net_teardown

# A VLAN netdev on top of the veth works like any Ethernet netdev.
net_setup
ip link add link sr0 name sr0.5 type vlan id 5
ip link set sr0.5 up
rdma link add rv0 type roce netdev sr0.5 || die "roce on a VLAN netdev"
ip link delete sr0.5
retry_until 20 gone rv0
net_teardown

rmmod softrnic || die "rmmod: a device or reference was left behind"
echo "netdev removal OK"
