#!/bin/bash
# The verbs objects from a C++ verbs program (tests/vm/progs/verbs_objects.cpp,
# built as build/userspace/softrnic-verbs-test): create/destroy of every
# object type and the error paths, flush through a completion channel
# (ibv_post_* and ibv_wr_*/ibv_cq_ex), a blocked ibv_get_cq_event woken by a
# completion, CQ overflow -> IBV_EVENT_CQ_ERR, local MW operations, 10,000
# create/destroy cycles per device, and post_recv/poll_cq without system
# calls (strace -c over 1,000,000 iterations).
# SOFTRNIC_USERSPACE_BUILD=DIR uses DIR's program and provider instead of
# build/userspace's.
# timeout: 300
. "$(dirname "$0")/lib.sh"

build=${SOFTRNIC_USERSPACE_BUILD:-$SOFTRNIC_ROOT/build/userspace}
prog=$build/softrnic-verbs-test
[ -x "$prog" ] || die "$prog not built (make userspace)"
if [ -n "${SOFTRNIC_USERSPACE_BUILD:-}" ]; then
	# asked first, so this build's provider claims the devices
	export RDMAV_DRIVERS=$build/provider/libsoftrnic
fi

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
# AHs need a GID beyond the link-local one; ib_core adds it asynchronously.
retry_until 20 sh -c "grep -qs 0000:ffff:0a00:0001 /sys/class/infiniband/roce0/ports/1/gids/*"

"$prog" objects roce0 iw0 || die "verbs objects: $? checks failed"

# 10000 cycles take ~22 s per device under Debian's kernel and ~40 times
# that under the debug kernel (scale 3), whose checkers look at every
# object's life: a third of them keeps it inside its scaled timeout.
cycles=$(descaled 10000)
for dev in roce0 iw0; do
	"$prog" cycles "$dev" $cycles || die "$dev: create/destroy cycles"
done
rdma resource show qp | grep -q softrnic-verbs && die "QPs left in restrack"

# post_recv + poll_cq: strace counts every system call of the program; the
# same program with 0 iterations is the baseline.  The difference may only
# be the RESET/INIT commands the loop reports (to recycle the RQ).
command -v strace >/dev/null || die "strace not installed (make deps)"
syscalls() { # strace -c file -> total number of calls
	awk '/^-----/ { sep++; next } sep == 1 && NF >= 5 { n += $4 } END { print n + 0 }' "$1"
}
strace -f -c -o /tmp/strace.base "$prog" loop roce0 0 >/dev/null || die "baseline loop"
strace -f -c -o /tmp/strace.loop "$prog" loop roce0 1000000 >/tmp/loop.out || die "loop"
cat /tmp/loop.out /tmp/strace.loop
base=$(syscalls /tmp/strace.base)
total=$(syscalls /tmp/strace.loop)
modifies=$(sed -n 's/.* = \([0-9]*\) modify_qp commands.*/\1/p' /tmp/loop.out)
[ -n "$modifies" ] || die "no loop summary"
extra=$((total - base))
log "1,000,000 post_recv + poll_cq: $total system calls, baseline $base, RQ recycling $modifies"
# slack: a few calls the second run may make differently (page faults do
# not count; e.g. brk for a larger stdout buffer)
[ "$extra" -le $((modifies + 20)) ] ||
	die "post_recv/poll_cq made system calls: $extra beyond the baseline"

rdma link delete roce0 || die "delete roce0"
rdma link delete iw0 || die "delete iw0"
net_teardown
echo "verbs_objects OK"
