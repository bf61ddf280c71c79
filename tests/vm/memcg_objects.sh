#!/bin/bash
# Kernel memory that verbs allocate for a process (rings, the requester's
# WQE copies, MRs and their page lists, memory windows) is charged to that
# process's memory cgroup, and a cgroup at its limit gets ENOMEM from the
# verb, not an OOM kill or an allocation-failure splat: memcg_objects.py
# run in a cgroup of its own.  Once the process has exited, the cgroup's
# anonymous and kernel memory is back to (about) nothing: no leak.
# timeout: 300
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

# What the cgroup holds that is not page cache (which stays charged to it
# after the process exits, and is no leak): anonymous memory, vmalloc
# (rings), unreclaimable slab (MRs, page lists, WQE copies), kernel stacks
# and page tables, in bytes.
held() {
	awk '$1 ~ /^(anon|vmalloc|slab_unreclaimable|kernel_stack|pagetables)$/ { s += $2 }
		END { print s + 0 }' "$T/memory.stat"
}
held_small() { [ "$(held)" -lt $((1 << 20)) ]; }
cur0=$(cat "$T/memory.current") held0=$(held)

# The script's process joins the cgroup before it opens the device.
bash -c 'echo $$ >"$1/cgroup.procs" && exec python3 "$2" mc0 "$1"' _ \
	"$T" "$SOFTRNIC_ROOT/tests/vm/memcg_objects.py"
rc=$?
oom=$(grep -E '^oom_kill ' "$T/memory.events" | awk '{print $2}')
log "memory.events: $(tr '\n' ' ' <"$T/memory.events")"
[ "${oom:-0}" -eq 0 ] || die "the OOM killer ran in the cgroup ($oom kills)"
# RCU frees MRs a grace period after their deregistration.
try_until 30 held_small ||
	die "after the process exited, the cgroup still holds $(held) bytes: $(grep -E '^(anon|vmalloc|slab_unreclaimable) ' "$T/memory.stat" | tr '\n' ' ')"
log "memory.current: $cur0 bytes before, $(cat "$T/memory.current") after the process exited" \
	"(anon+kernel: $held0 before, $(held) after; the rest is page cache)"
[ $rc -eq 0 ] || die "memcg_objects.py failed ($rc)"
if dmesg | grep -E 'vmalloc error|page allocation failure|Out of memory'; then
	die "an allocation failure was logged"
fi
rdma link delete mc0 || die "delete mc0"
net_teardown
