#!/bin/bash
# softrnic and rdma_rxe on the same netdev at once.
# timeout: 120
. "$(dirname "$0")/lib.sh"

net_setup
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
rdma link add roce0 type roce netdev sr0 || die "add roce0 next to rxe0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0 next to rxe0"
out=$(ibv_devices)
echo "$out"
for d in rxe0 roce0 iw0; do grep -q "$d" <<<"$out" || die "$d missing"; done
ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE || die "rxe0 broken by softrnic"
ibv_devinfo -d roce0 | grep -q PORT_ACTIVE || die "roce0 broken by rxe"
# Each provider claims only its own device.
ibv_devinfo -d roce0 2>&1 | grep -qi "no userspace" && die "roce0 unclaimed"
rdma link delete roce0
rdma link delete iw0
rdma link delete rxe0
modprobe -r rdma_rxe
net_teardown
echo "coexist OK"
