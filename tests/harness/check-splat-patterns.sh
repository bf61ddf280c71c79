#!/bin/bash
# Host-side check of what the harness counts as a kernel splat
# (VM_SPLAT_RE, scripts/vm/lib.sh) and of how it sorts kmemleak reports
# (vm_kmemleak_sort): every report line below, as the 6.1 kernel prints it,
# must match -- with grep -E, as the host side reads the console, and with
# awk, as guest-suite reads /dev/kmsg -- and the ordinary lines of a debug
# kernel's boot must not.  No VM needed.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/vm/lib.sh
ok=1
fail() { echo "check-splat-patterns: $*"; ok=0; }

must=(
	'WARNING: possible circular locking dependency detected'
	'WARNING: inconsistent lock state'
	'WARNING: possible recursive locking detected'
	'WARNING: suspicious RCU usage'
	'BUG: sleeping function called from invalid context at mm/slab.h:732'
	'BUG: KASAN: slab-use-after-free in softrnic_qp_put+0x1c/0x60 [softrnic]'
	'BUG: KASAN: double-free in kfree+0x8b/0x120'
	'UBSAN: shift-out-of-bounds in kernel/softrnic/roce/roce_psn.h:40:12'
	'UBSAN: array-index-out-of-bounds in drivers/foo.c:10:2'
	'unregister_netdevice: waiting for sr0 to become free. Usage count = 2'
	'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'
	'rcu: INFO: rcu_sched detected stalls on CPUs/tasks:'
	'INFO: task kworker/0:1:42 blocked for more than 120 seconds.'
	'watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [kworker/1:2:77]'
	'BUG: workqueue lockup - pool cpus=1 node=0 flags=0x0 nice=0 stuck for 31s!'
	'ODEBUG: free active (active state 0) object: ffff888 object type: timer_list hint: x'
	'list_del corruption. prev->next should be ffff888, but was ffff888'
	'refcount_t: underflow; use-after-free.'
	'kernel BUG at mm/slub.c:379!'
	'general protection fault, probably for non-canonical address 0xdead'
	'traps: ib_write_lat[448] general protection fault ip:7f5ca2676472 sp:7ffcfab5e450 error:0 in librdmacm.so.1.3.44.0[7f5ca2670000+15000]'
	'Kernel panic - not syncing: Fatal exception'
)
mustnot=(
	'kasan: KernelAddressSanitizer initialized (generic)'
	'kmemleak: Kernel memory leak detector initialized (mem pool available: 15775)'
	'kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)'
	'Running RCU self tests'
	'rcu: Preemptible hierarchical RCU implementation.'
	'rcu: 	RCU lockdep checking is enabled.'
	'Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar'
	'softrnic: loaded'
	'hrtimer: interrupt took 1234 ns'
)
for l in "${must[@]}"; do
	grep -qE -- "$VM_SPLAT_RE" <<<"$l" || fail "grep -E misses: $l"
	[ -n "$(awk -v pat="$VM_SPLAT_RE" '$0 ~ pat' <<<"$l")" ] || fail "awk misses: $l"
done
for l in "${mustnot[@]}"; do
	grep -qE -- "$VM_SPLAT_RE" <<<"$l" && fail "false alarm: $l"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/report" <<'REP'
unreferenced object 0xffff888104a1c000 (size 256):
  comm "swapper/0", pid 1, jiffies 4294892296 (age 30.120s)
  hex dump (first 32 bytes):
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
  backtrace:
    [<ffffffff81a2b3c4>] __kmalloc+0x4b/0x170
    [<ffffffff82c0ffee>] acpi_os_allocate_zeroed+0x1f/0x30
unreferenced object 0xffff888106f2a200 (size 512):
  comm "rdma", pid 312, jiffies 4294895000 (age 12.004s)
  backtrace:
    [<ffffffff81a2b3c4>] kmalloc_trace+0x26/0x90
    [<ffffffffc0a01234>] softrnic_alloc_qp+0x51/0x2a0 [softrnic]
    [<ffffffff8200abcd>] ib_create_qp_user+0x97/0x830
unreferenced object 0xffff888106f2b000 (size 128):
  comm "rdma", pid 313, jiffies 4294895100 (age 11.000s)
  backtrace:
    [<00000000a1b2c3d4>] kmalloc_trace+0x26/0x90
    [<000000005e5e5e5e>] 0xffffffffc0a01234
    [<00000000f00dcafe>] ib_create_qp_user+0x97/0x830
unreferenced object 0xffff888106f2c000 (size 64):
  comm "modprobe", pid 400, jiffies 4294895200 (age 10.000s)
  backtrace:
    [<00000000a1b2c3d4>] kmalloc_trace+0x26/0x90
    [<0000000012345678>] 0xffffffffc0b00010
    [<00000000f00dcafe>] do_one_initcall+0x97/0x830
REP
# What guest-suite records: softrnic was at c0a00000..c0a6c000 (and
# softrnic_qtest right after it); nothing of ours at c0b00000.
printf '%s\n' 'softrnic ffffffffc0a00000 ffffffffc0a6c000' \
	'softrnic_qtest ffffffffc0a6c000 ffffffffc0a80000' >"$tmp/ranges"
ours=$(vm_kmemleak_sort "$tmp/report" "$tmp/log" "$tmp/ranges")
[ "$ours" = 'kmemleak: unreferenced object 0xffff888106f2a200 (size 512): (softrnic)
kmemleak: unreferenced object 0xffff888106f2b000 (size 128): (softrnic)' ] ||
	fail "kmemleak: ours reported as: '$ours'"
[ "$(grep -c '^----- kmemleak: a leak of ours' "$tmp/log")" = 2 ] || fail "kmemleak: log lacks our leaks"
[ "$(grep -c '^----- kmemleak: a leak, not ours' "$tmp/log")" = 2 ] || fail "kmemleak: log lacks the other leaks"
grep -q 'lies where softrnic was loaded' "$tmp/log" || fail "kmemleak: the unloaded module is not named"
# Without the ranges, an unloaded module's frame is nobody's.
: >"$tmp/log"
ours=$(vm_kmemleak_sort "$tmp/report" "$tmp/log")
[ "$(wc -l <<<"$ours")" = 1 ] || fail "kmemleak: without ranges, ours: '$ours'"
grep -q acpi_os_allocate_zeroed "$tmp/log" || fail "kmemleak: the other leak's backtrace is not logged"

# What guest-suite records, from a fake /proc and /sys: softrnic's core
# and init text (which ends where .init.data starts), a test module with
# only .init.text (its page), nothing for others, nothing twice.
mkdir -p "$tmp/root/proc" "$tmp/root/sys/module/softrnic/sections" \
	"$tmp/root/sys/module/softrnic_qtest/sections"
printf '%s\n' 'ib_uverbs 180224 1 - Live 0xffffffffc0100000' \
	'softrnic 442368 0 ib_uverbs, Live 0xffffffffc0255000 (O)' \
	'softrnic_qtest 16384 0 - Live 0xffffffffc0300000 (O)' >"$tmp/root/proc/modules"
echo 0xffffffffc02c1000 >"$tmp/root/sys/module/softrnic/sections/.init.text"
echo 0xffffffffc02c1180 >"$tmp/root/sys/module/softrnic/sections/.init.data"
echo 0xffffffffc02c1140 >"$tmp/root/sys/module/softrnic/sections/.init_array"
echo 0xffffffffc0255000 >"$tmp/root/sys/module/softrnic/sections/.text"
echo 0xffffffffc0305000 >"$tmp/root/sys/module/softrnic_qtest/sections/.init.text"
vm_modranges_note "$tmp/rec" "$tmp/root"
vm_modranges_note "$tmp/rec" "$tmp/root"
want='softrnic ffffffffc0255000 ffffffffc02c1000
softrnic.init ffffffffc02c1000 ffffffffc02c1140
softrnic_qtest ffffffffc0300000 ffffffffc0304000
softrnic_qtest.init ffffffffc0305000 ffffffffc0306000'
[ "$(cat "$tmp/rec")" = "$want" ] || fail "vm_modranges_note recorded: '$(cat "$tmp/rec")'"

[ $ok = 1 ] && echo "check-splat-patterns: OK"
[ $ok = 1 ]
