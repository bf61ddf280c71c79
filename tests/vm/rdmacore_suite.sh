#!/bin/bash
# rdma-core's own test suite (rdma-core 44's tests/, shipped by Debian's
# python3-pyverbs in /usr/share/doc/rdma-core/tests) against one softrnic
# RoCE device with both ends of every connection on it and the default
# GID, as `run_tests.py --dev roce0` would run it, but one test module per
# python process under a time limit (rdmacore_suite.py).  Passes only with
# no failure, no error, and no skip of a feature the device claims in its
# attributes; prints the counts and every skip reason.
# Runs on the virtio-net topology: the device then has a parent whose
# net/ lists the netdev, which the rdmacm tests look for (on a veth they
# skip with "doesn't have net interface").
# vm-nics: virtio
# timeout: 600
export SOFTRNIC_VM_NICS=virtio
. "$(dirname "$0")/lib.sh"

[ -d /usr/share/doc/rdma-core/tests ] ||
	skip "no /usr/share/doc/rdma-core/tests (python3-pyverbs not installed)"
[ "${RDMACORE_RXE:-0}" = 1 ] || have_softrnic || skip "softrnic.ko not built"

# RDMACORE_RXE=1: the same run on rdma_rxe, to compare by hand
# (scripts/vm/run -e RDMACORE_RXE=1 -- tests/vm/rdmacore_suite.sh).
dev=roce0
[ "${RDMACORE_RXE:-0}" = 1 ] && dev=rxe0

net_setup
# Linux 6.1's rdma_rxe holds UDP 4791 in init_net while loaded.
modprobe -r rdma_rxe 2>/dev/null
if [ $dev = rxe0 ]; then
	modprobe rdma_rxe && rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
else
	load_softrnic || die "modprobe softrnic"
	rdma link add roce0 type roce netdev sr0 || die "add roce0"
fi
retry_until 10 grep -q ACTIVE /sys/class/infiniband/$dev/ports/1/state
# The rdmacm tests look the interface up there; without it they skip.
[ $dev = rxe0 ] || [ -e /sys/class/infiniband/$dev/device/net/sr0 ] ||
	die "$dev: device/net/ does not list sr0 (not on the virtio NICs?)"
# rdma-core picks the first non-zero GID: wait for the IP ones too, so
# the table does not change under the run.
retry_until 20 test -e /sys/class/infiniband/$dev/ports/1/gids/2
# The huge-page tests (ODP, parent domain) need 2 MiB pages to exist
# before they reach the feature they then skip for (or test).
echo 8 >/proc/sys/vm/nr_hugepages

rc=0
/usr/bin/python3 "$(dirname "$0")/rdmacore_suite.py" --dev $dev \
	--module-timeout "${RDMACORE_MODULE_TIMEOUT:-90}" \
	--budget "${RDMACORE_BUDGET:-480}" \
	--keep "$(mktemp -d /tmp/rdmacore.XXXXXX)" "$@" || rc=$?

rdma link delete $dev
[ $dev = rxe0 ] && modprobe -r rdma_rxe
net_teardown
exit $rc
