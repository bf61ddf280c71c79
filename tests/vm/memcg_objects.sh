#!/bin/bash
# Kernel memory that verbs allocate for a process (rings, the requester's
# WQE copies, MR page lists) is charged to that process's memory cgroup,
# and a cgroup at its limit gets ENOMEM from the verb, not an OOM kill or
# an allocation-failure splat: memcg_objects.py run in a cgroup of its own.
# timeout: 240
. "$(dirname "$0")/lib.sh"

CG=/sys/fs/cgroup
mountpoint -q "$CG" || mount -t cgroup2 none "$CG" || die "cannot mount cgroup2"
[ -e "$CG/cgroup.controllers" ] || skip "no cgroup v2 hierarchy at $CG"
grep -qw memory "$CG/cgroup.controllers" || die "the kernel has no memory controller"
grep -qw memory "$CG/cgroup.subtree_control" ||
	echo +memory >"$CG/cgroup.subtree_control" || die "cannot enable the memory controller"
T=$CG/softrnic-memcg
rmdir "$T" 2>/dev/null
mkdir "$T" || die "cannot create $T"
cleanup() { rmdir "$T" 2>/dev/null; }
trap cleanup EXIT

load_softrnic || die "modprobe softrnic"
net_setup
rdma link add mc0 type roce netdev sr0 || die "add mc0"
dmesg -c >/dev/null

# The script's process joins the cgroup before it opens the device.
bash -c 'echo $$ >"$1/cgroup.procs" && exec python3 "$2" mc0 "$1"' _ \
	"$T" "$SOFTRNIC_ROOT/tests/vm/memcg_objects.py"
rc=$?
oom=$(grep -E '^oom_kill ' "$T/memory.events" | awk '{print $2}')
log "memory.events: $(tr '\n' ' ' <"$T/memory.events")"
[ "${oom:-0}" -eq 0 ] || die "the OOM killer ran in the cgroup ($oom kills)"
[ $rc -eq 0 ] || die "memcg_objects.py failed ($rc)"
if dmesg | grep -E 'vmalloc error|page allocation failure|Out of memory'; then
	die "an allocation failure was logged"
fi
rdma link delete mc0 || die "delete mc0"
net_teardown
