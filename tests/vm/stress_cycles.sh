#!/bin/bash
# 100 add/delete cycles of both types plus module unload/reload: no splat
# (the harness checks the kernel log), no leaked references and no growth
# of unreclaimable slab memory.
# timeout: 600
. "$(dirname "$0")/lib.sh"

sunreclaim() { awk '/^SUnreclaim:/ {print $2}' /proc/meminfo; }
cycle() {
	rdma link add roce0 type roce netdev sr0 || die "cycle $1: add roce0"
	in_peer rdma link add iw1 type iwarp netdev sr1 || die "cycle $1: add iw1"
	rdma link delete roce0 || die "cycle $1: delete roce0"
	in_peer rdma link delete iw1 || die "cycle $1: delete iw1"
}

net_setup
modprobe softrnic
for i in $(seq 1 20); do cycle "$i"; done   # warm caches
sync; echo 2 >/proc/sys/vm/drop_caches
before=$(sunreclaim)
for i in $(seq 21 120); do cycle "$i"; done
sync; echo 2 >/proc/sys/vm/drop_caches
after=$(sunreclaim)
growth=$((after - before))
echo "SUnreclaim before=${before}kB after=${after}kB growth=${growth}kB over 100 cycles"
# One leaked ib_device with its port data is several kB; a cycle makes
# two, so 100 cycles' would be well over 512 kB.  Allow slab noise below
# that (measured: -72 kB).
[ "$growth" -lt 512 ] || die "unreclaimable slab grew by ${growth} kB"

assert_eq "$(cat /sys/module/softrnic/refcnt)" "0" "module refcount after cycles"
for i in $(seq 1 5); do
	rmmod softrnic || die "rmmod $i"
	modprobe softrnic || die "modprobe $i"
	rdma link add roce0 type roce netdev sr0 || die "add after reload $i"
	ibv_devinfo -d roce0 >/dev/null || die "ibv_devinfo after reload $i"
	# Unload with a live device: rmmod removes it.
	rmmod softrnic || die "rmmod with a live device $i"
	rdma dev show roce0 >/dev/null 2>&1 && die "roce0 survived rmmod"
	modprobe softrnic
done
# The netdev is released: deleting it doesn't hang on a leaked reference.
timeout 30 ip link delete sr0 || die "sr0 deletion hung (netdev reference leaked)"
net_teardown
rmmod softrnic
echo "stress cycles OK"
