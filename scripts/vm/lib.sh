# shellcheck shell=bash
# shellcheck disable=SC2034  # VM_* variables are outputs for the sourcing script
# Host-side helpers shared by scripts/vm/{build-initramfs,run,run-suite} and
# scripts/demo.  Source it; it only defines variables and functions.
#
# The VM boots Debian's own kernel with a tiny busybox initramfs that mounts
# the host's / read-only over virtio-9p under a tmpfs overlay, so the guest
# runs exactly the software installed on the host.  See
# Documentation/vm-harness.md.

VM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
VM_BUILD=$VM_ROOT/build/vm
VM_QEMU=${SOFTRNIC_QEMU:-qemu-system-x86_64}

# What counts as a kernel splat (run-suite fails a test for any of these in
# the kernel log it caused; run warns).  Deliberately no exceptions: a test
# must not pass while the kernel complains.  Besides oopses and WARNs, the
# reports of the debug kernel's checkers (scripts/vm/debug-kernel: lockdep,
# RCU lockdep, atomic-sleep, KASAN, UBSAN, list/object debugging, lockup,
# hung-task, RCU-stall and workqueue watchdogs) and a netdev whose
# references never drop.  Each alternative is a string one of those prints
# (many start "BUG:" or "WARNING:" too; listed so that a change of prefix
# does not hide them).  kmemleak is not here: its reports are read from
# debugfs after each test (guest-suite), and only ours fail a test.
VM_SPLAT_RE='BUG:|WARNING:|Oops|general protection fault|Kernel panic'
VM_SPLAT_RE+='|soft lockup|hard LOCKUP|hung_task|blocked for more than|workqueue lockup'
VM_SPLAT_RE+='|refcount_t:|list_add corruption|list_del corruption|ODEBUG: .* object type:'
VM_SPLAT_RE+='|KASAN|UBSAN|kernel BUG|Call Trace:'
VM_SPLAT_RE+='|possible circular locking|possible recursive locking|inconsistent lock state'
VM_SPLAT_RE+='|suspicious RCU usage|sleeping function called from invalid context|BUG: sleeping'
VM_SPLAT_RE+='|rcu_sched detected stalls|rcu_preempt detected stalls|rcu: INFO|detected stalls on CPUs'
VM_SPLAT_RE+='|unregister_netdevice: waiting for'

# Sort kmemleak report file $1 (the text of /sys/kernel/debug/kmemleak):
# every report goes to file $2 under a line that says whether it is ours,
# and the first line of each of ours is printed, prefixed "kmemleak: ".
# Ours: a backtrace through softrnic or a softrnic_*test module.  6.1
# prints a frame "[<HASH>] SYMBOL+OFF/LEN [MODULE]" while the module is
# loaded, but only "[<HASH>] 0xADDRESS" once it is gone -- and the tests
# unload softrnic before the scan.  So a frame with a bare address also
# counts as ours when it lies in one of the module ranges listed in file
# $3 (optional), lines "NAME START END" (16 hex digits each, END
# excluded), as vm_modranges_note records them while the modules are in.
vm_kmemleak_sort() {
	awk -v out="$2" -v ranges="${3:-}" '
		BEGIN {
			nr = 0
			if (ranges != "")
				while ((getline line <ranges) > 0) {
					split(line, f, " ")
					if (f[3] == "") continue
					nr++; rname[nr] = f[1]; rlo[nr] = "x" f[2]; rhi[nr] = "x" f[3]
				}
		}
		# The module of ours whose range holds bare address $1 (0x...), or "".
		function inrange(a,    i, h) {
			h = tolower(substr(a, 3))
			while (length(h) < 16) h = "0" h
			h = "x" h
			for (i = 1; i <= nr; i++)
				if (h >= rlo[i] && h < rhi[i]) return rname[i]
			return ""
		}
		function flush() {
			if (blk == "") return
			if (blk ~ /softrnic/ || mod != "") {
				print "----- kmemleak: a leak of ours -----" >>out
				if (mod != "")
					print "(a bare address in the backtrace lies where " mod " was loaded)" >>out
				print first " (softrnic)"
			} else {
				print "----- kmemleak: a leak, not ours (left alone) -----" >>out
			}
			printf "%s", blk >>out
			blk = ""; mod = ""
		}
		/^unreferenced object/ { flush(); first = "kmemleak: " $0 }
		/^ *\[<[0-9a-fA-F]+>\] 0x[0-9a-fA-F]+ *$/ && mod == "" { mod = inrange($2) }
		{ blk = blk $0 "\n" }
		END { flush() }' "$1"
}

# Append to file $1 the address ranges of every module of ours (softrnic,
# softrnic_*) now in /proc/modules that the file does not list yet, as
# vm_kmemleak_sort reads them: "NAME START END".  The core: base and size
# from /proc/modules (core plus init while the module is still loading: a
# range a little too long, never too short).  The init code, freed once
# module_init has run (an allocation straight from module_init has its
# frame there): "NAME.init", from .init.text's address in
# /sys/module/NAME/sections (which outlives the init code) to the next
# init section above it (init sections share one allocation, text first),
# or the end of .init.text's page.  $2: a root other than / (the host's
# self-test).  Builtins only: guest-suite runs it every 0.1 s.
declare -A VM_MODRANGES_SEEN=()
vm_modranges_note() {
	local root=${2:-} name size _refs _deps _state addr key ia a ie f
	while read -r name size _refs _deps _state addr _; do
		case $name in softrnic | softrnic_*) ;; *) continue ;; esac
		case $addr in 0x*) ;; *) continue ;; esac
		key="$name $addr $size"
		[ -z "${VM_MODRANGES_SEEN[$key]:-}" ] || continue
		VM_MODRANGES_SEEN[$key]=1
		printf '%s %016x %016x\n' "$name" "$addr" "$((addr + size))" >>"$1"
		ia=
		read -r ia 2>/dev/null <"$root/sys/module/$name/sections/.init.text" || continue
		case $ia in 0x*) ;; *) continue ;; esac
		# Kernel addresses have the top bit set: signed comparison
		# orders them as unsigned would.
		ie=$(((ia + 4096) & ~4095))
		for f in "$root/sys/module/$name/sections"/.init*; do
			read -r a 2>/dev/null <"$f" || continue
			case $a in 0x*) ;; *) continue ;; esac
			((a > ia && a < ie)) && ie=$a
		done
		printf '%s.init %016x %016x\n' "$name" "$ia" "$ie" >>"$1"
	done <"$root/proc/modules"
}

# The guest's network hardware (VM_NICS, from SOFTRNIC_VM_NICS or a test's
# "# vm-nics:" line): "veth" (the default) gives the guest no NIC at all,
# tests build veth pairs; "virtio" adds two virtio-net NICs joined back to
# back by a QEMU hub (no host network), so that tests can put softrnic on
# a real NIC driver (tests/vm/lib.sh net_setup).  The MACs order them:
# the first becomes sr0, the second sr1.
VM_NIC_MACS=(52:54:00:5e:72:00 52:54:00:5e:72:01)

# Check a VM_NICS value; usage: vm_check_nics VALUE WHERE
vm_check_nics() {
	case $1 in
	veth | virtio) ;;
	*) vm_die "$2: '$1' is not a VM network (veth or virtio)" ;;
	esac
}

# The value of a test script's "# KEY: VALUE" line (timeout, vm-nics) in
# its header: the comment block the script begins with, however long,
# up to its first line that is not a comment; empty if there is none.
# usage: vm_test_header FILE KEY
vm_test_header() {
	awk -v key="$2" '
		NR == 1 && /^#!/ { next }
		!/^#/ { exit }
		{
			line = $0
			sub(/^#[ \t]*/, "", line)
			if (index(line, key ":") != 1)
				next
			line = substr(line, length(key) + 2)
			sub(/^[ \t]*/, "", line)
			sub(/[ \t].*/, "", line)
			print line
			exit
		}' "$1"
}

# Check a vCPU count (--cpus, SOFTRNIC_VM_CPUS); usage: vm_check_cpus VALUE WHERE
vm_check_cpus() {
	case $1 in
	'' | *[!0-9]* | 0*) vm_die "$2: '$1' is not a vCPU count (a whole number, 1 or more)" ;;
	esac
}

# One finished test as run-suite prints it and scripts/check reads it back
# (vm_result_records): "[INDEX/TOTAL] NAME ... PASS|FAIL|SKIP SECONDS s",
# then " (REASON)" if there is one.  INDEX counts from 1; NAME has no blanks.
#   usage: vm_result_line INDEX TOTAL NAME RESULT SECONDS [REASON]
vm_result_line() {
	printf '[%s/%s] %s ... %s %s s%s\n' "$1" "$2" "$3" "$4" "$5" "${6:+ ($6)}"
}

# The vm_result_line lines of run-suite output file $1, as tab-separated
# INDEX NAME RESULT SECONDS REASON, one per test in the order the tests
# were first reported.  A test reported twice (a splat after it ended, a
# crash right after it) counts with its last line.
vm_result_records() {
	tr -d '\r' <"$1" |
		sed -nE 's/^\[([0-9]+)\/([0-9]+)\] ([^ ]+) \.\.\. (PASS|FAIL|SKIP) ([0-9.]+) s( \((.*)\))?$/\1\t\3\t\4\t\5\t\7/p' |
		awk -F'\t' '!($1 in rec) { order[++n] = $1 } { rec[$1] = $0 } END { for (i = 1; i <= n; i++) print rec[order[i]] }'
}

vm_msg() { printf 'vm: %s\n' "$*" >&2; }
# 125: "the harness itself failed" (as in git bisect run), distinct from
# any status the guest command can return and from timeout's 124.
vm_die() { vm_msg "error: $*"; exit 125; }

# Kernel release to boot.  With SOFTRNIC_VM_KERNEL=IMAGE (run/run-suite
# --kernel): the one directory under SOFTRNIC_VM_MODULES's lib/modules, or
# under IMAGE's own directory's lib/modules (the layout `make
# modules_install INSTALL_MOD_PATH=$(dirname IMAGE)` leaves, as
# scripts/vm/debug-kernel does).  Otherwise $SOFTRNIC_KVER, else the
# newest /boot/vmlinuz-*-amd64.
vm_kver() {
	local k
	if [ -n "${SOFTRNIC_VM_KERNEL:-}" ]; then
		k=$(vm_moddir) || exit 125
		basename "$k"
		return
	fi
	if [ -n "${SOFTRNIC_KVER:-}" ]; then
		k=$SOFTRNIC_KVER
	else
		k=$(find /boot -maxdepth 1 -name 'vmlinuz-*-amd64' -printf '%f\n' 2>/dev/null |
			sed 's/^vmlinuz-//' | sort -V | tail -n 1)
	fi
	[ -n "$k" ] || vm_die "no /boot/vmlinuz-*-amd64 (apt-get install linux-image-amd64)"
	[ -r "/boot/vmlinuz-$k" ] || vm_die "/boot/vmlinuz-$k not readable"
	[ -d "/lib/modules/$k" ] || vm_die "/lib/modules/$k missing"
	echo "$k"
}

# The modules directory of the kernel the VM boots: /lib/modules/RELEASE
# for Debian's, else the one SOFTRNIC_VM_MODULES names or the one
# directory under $(dirname SOFTRNIC_VM_KERNEL)/lib/modules.  Must be a
# path the guest sees through the host root (not under /tmp or /run).
vm_moddir() {
	local img=${SOFTRNIC_VM_KERNEL:-} d
	if [ -z "$img" ]; then
		echo "/lib/modules/${1:-$(vm_kver)}"
		return
	fi
	[ -r "$img" ] || vm_die "kernel image $img not readable"
	d=${SOFTRNIC_VM_MODULES:-}
	if [ -z "$d" ]; then
		d=$(find "$(dirname "$img")/lib/modules" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)
		if [ -z "$d" ] || [ "$(wc -l <<<"$d")" != 1 ]; then
			vm_die "no single lib/modules/RELEASE beside $img: give --modules DIR"
		fi
	fi
	[ -f "$d/modules.dep" ] || vm_die "$d is not a modules directory (no modules.dep)"
	d=$(cd "$d" && pwd -P)
	case $d in
	/tmp/* | /run/* | /dev/* | /proc/* | /sys/*) vm_die "$d: the guest does not see the host's /tmp, /run, /dev, /proc or /sys" ;;
	esac
	echo "$d"
}

# The kernel's .config, for options the harness adapts to (CONFIG_HZ).
vm_kconfig() {
	if [ -n "${SOFTRNIC_VM_KERNEL:-}" ]; then
		echo "$(vm_moddir)/build/.config"
	else
		echo "/boot/config-$1"
	fi
}

# The initramfs for release $1 (Debian's kernel keeps the historic name).
vm_initrd() {
	if [ -n "${SOFTRNIC_VM_KERNEL:-}" ]; then
		echo "$VM_BUILD/initramfs-$1.cpio.gz"
	else
		echo "$VM_BUILD/initramfs.cpio.gz"
	fi
}

# Little-endian unsigned integer of $3 bytes at offset $2 of file $1.
vm_read_le() { od -An -tu"$3" -j "$2" -N "$3" "$1" | tr -d ' '; }

# Extract the ELF vmlinux from bzImage $1 into $2.  Booting it through its
# PVH entry point skips the in-guest decompression of the ~8 MB xz payload,
# which under TCG costs ~4 s per boot.  Returns non-zero if the image is
# not something we understand; the caller then boots the bzImage.
vm_extract_vmlinux() {
	local bz=$1 out=$2 tmp="$2.tmp.$$" sects poff plen magic dec
	# Documentation/x86/boot.rst: "HdrS" at 0x202; protocol >= 2.08 has
	# payload_offset/payload_length (relative to the protected-mode code,
	# which starts after the (setup_sects+1) real-mode sectors).
	[ "$(od -An -c -j $((0x202)) -N 4 "$bz" | tr -d ' ')" = HdrS ] || return 1
	[ "$(vm_read_le "$bz" $((0x206)) 2)" -ge $((0x208)) ] || return 1
	sects=$(vm_read_le "$bz" $((0x1f1)) 1)
	[ "$sects" -ne 0 ] || sects=4
	poff=$(( (sects + 1) * 512 + $(vm_read_le "$bz" $((0x248)) 4) ))
	plen=$(vm_read_le "$bz" $((0x24c)) 4)
	magic=$(tail -c +$((poff + 1)) "$bz" | head -c 6 | od -An -tx1 | tr -d ' \n')
	case $magic in
	fd377a585a00) dec="xz -dcq --single-stream" ;;
	1f8b*) dec="gzip -dcq" ;;
	28b52ffd*) dec="zstd -dcq" ;;
	5d0000*) dec="xz -dcq --format=lzma" ;;
	*) return 1 ;;
	esac
	# The payload ends with a 4-byte size trailer that some decompressors
	# call garbage; ignore their status and judge the output instead.
	tail -c +$((poff + 1)) "$bz" | head -c "$plen" | $dec >"$tmp" 2>/dev/null
	if [ "$(head -c 4 "$tmp" | od -An -tx1 | tr -d ' \n')" != 7f454c46 ] ||
		[ "$(stat -c %s "$tmp")" -lt 1000000 ]; then
		rm -f "$tmp"
		return 1
	fi
	mv -f "$tmp" "$out"
}

# Path of the kernel image to boot for release $1: the cached vmlinux if it
# can be had (and PVH boot was not found broken), else the bzImage.
vm_kernel() {
	local bz=/boot/vmlinuz-$1 out=$VM_BUILD/vmlinux-$1
	# A kernel of one's own is booted as given (vmlinux or bzImage).
	if [ -n "${SOFTRNIC_VM_KERNEL:-}" ]; then
		echo "$SOFTRNIC_VM_KERNEL"
		return
	fi
	if [ "${SOFTRNIC_VM_PVH:-1}" != 0 ] && [ ! -e "$out.pvh-broken" ]; then
		if [ "$out" -nt "$bz" ] || vm_extract_vmlinux "$bz" "$out"; then
			echo "$out"
			return
		fi
	fi
	echo "$bz"
}

# Does KVM really work here, and with which -cpu model?  Opening /dev/kvm
# proves little on nested hosts.  Seen on a CI-like host: "-cpu host" aborts
# on MSR 0x10a (IA32_ARCH_CAPABILITIES); "host,-arch-capabilities" runs a
# trivial guest but then Linux stalls in early boot ("kvm-pvm: INTERNAL_ERROR
# in batch emul" on the host).  So two stages, both must pass:
#  1. a 64 KiB "BIOS" whose reset vector is `mov al,0x2a; out 0xf4,al; hlt`
#     (with isa-debug-exit at 0xf4 QEMU exits with (0x2a<<1)|1 = 85) finds
#     the first -cpu model QEMU can start at all -- fast;
#  2. the real kernel and initramfs must reach /init, which then powers off
#     at once (softrnic_vm.probe=1), within 30 s (a working KVM needs ~2 s).
# Prints the working -cpu model.
vm_probe_kvm() {
	local cpu kver log=$VM_BUILD/kvm-probe.log
	cpu=$(vm_kvm_cpu) || return 1
	kver=$(vm_kver)
	"$VM_ROOT/scripts/vm/build-initramfs" || return 1
	rm -f "$log"
	timeout 30 "$VM_QEMU" -accel kvm -machine pc -cpu "$cpu" -m 256 \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$(vm_kernel "$kver")" -initrd "$(vm_initrd "$kver")" \
		-append "console=ttyS0 panic=-1 softrnic_vm.probe=1" \
		-serial "file:$log" </dev/null >/dev/null 2>&1
	grep -q -a 'softrnic-vm: initramfs started' "$log" 2>/dev/null || return 1
	echo "$cpu"
}

# Stage 1 of the probe: the first -cpu model with which QEMU runs guest
# code under KVM at all.
vm_kvm_cpu() {
	local bios=$VM_BUILD/kvm-probe.bin c
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	{
		head -c 65520 /dev/zero
		printf '\260\052\346\364\364'
		head -c 11 /dev/zero
	} >"$bios"
	for c in host host,-arch-capabilities qemu64; do
		timeout 30 "$VM_QEMU" -accel kvm -machine pc -cpu "$c" -m 16 \
			-nodefaults -no-user-config -display none -bios "$bios" \
			-device isa-debug-exit,iobase=0xf4,iosize=4 </dev/null >/dev/null 2>&1
		if [ $? -eq 85 ]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

# Choose the accelerator: sets VM_ACCEL (kvm|tcg) and VM_CPU (-cpu model).
# $SOFTRNIC_VM_ACCEL forces one; otherwise KVM if the probe passes.  The
# probe result is cached per host boot and QEMU binary (/dev/kvm, modules
# and so the answer can change across reboots), outside the tree, so that
# fresh clones and other worktrees (CI's, for one) do not probe again.
vm_accel() {
	local dir=${SOFTRNIC_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/softrnic-vm}
	local cache boot id acc cpu
	mkdir -p "$VM_BUILD"
	mkdir -p "$dir" 2>/dev/null && [ -w "$dir" ] || dir=$VM_BUILD
	cache=$dir/accel
	case ${SOFTRNIC_VM_ACCEL:-auto} in
	tcg)
		VM_ACCEL=tcg VM_CPU=max
		return
		;;
	kvm | auto | "") ;;
	*) vm_die "SOFTRNIC_VM_ACCEL must be kvm, tcg or auto" ;;
	esac
	boot="$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)/$(stat -L -c %s.%Y "$(command -v "$VM_QEMU")" 2>/dev/null)"
	if ! read -r id acc cpu 2>/dev/null <"$cache" || [ "$id" != "$boot" ]; then
		vm_msg "checking whether KVM works here (once per host boot, up to ~60 s)"
		if cpu=$(vm_probe_kvm); then
			acc=kvm
		else
			acc=tcg cpu=max
		fi
		echo "$boot $acc $cpu" >"$cache"
	fi
	if [ "${SOFTRNIC_VM_ACCEL:-auto}" = kvm ] && [ "$acc" != kvm ]; then
		vm_msg "warning: SOFTRNIC_VM_ACCEL=kvm but KVM failed its probe here; trying anyway"
		acc=kvm
		cpu=$(vm_kvm_cpu) || cpu=host
	fi
	VM_ACCEL=$acc VM_CPU=$cpu
}

# Set VM_CONSOLE: $SOFTRNIC_VM_CONSOLE, else build/vm/console.log -- unless
# another VM (another user of this tree, or run next to run-suite) is
# writing that one: then build/vm/console-PID.log, so neither clobbers the
# other's.  The lock is held until this process and QEMU are gone.
vm_pick_console() {
	if [ -n "${SOFTRNIC_VM_CONSOLE:-}" ]; then
		VM_CONSOLE=$SOFTRNIC_VM_CONSOLE
		return
	fi
	exec {VM_CONSOLE_LOCK}>>"$VM_BUILD/console.lock"
	if flock -n "$VM_CONSOLE_LOCK"; then
		VM_CONSOLE=$VM_BUILD/console.log
	else
		VM_CONSOLE=$VM_BUILD/console-$$.log
		vm_msg "another VM is writing build/vm/console.log; this one's console: $VM_CONSOLE"
	fi
}

# Kernel command line.  console=ttyS0: the whole kernel log goes to
# build/vm/console.log.  oops=panic + panic=-1 (+ QEMU's -no-reboot): an
# Oops ends the VM at once with the Oops text on the console, instead of
# leaving a half-dead kernel (held locks, leaked references) to fail later
# tests in confusing ways; the harness reports it against the test that was
# running.  WARNs do not panic: run-suite fails the test from the kernel log.
# tsc=reliable: without it TCG's TSC is declared unstable and perftest's
# cycle-counter calibration fails.  log_buf_len: one test's log must not
# push its start out of the ring before the harness reads it.
# lpj: the second vCPU otherwise calibrates its delay loop, ~0.2 s under
# TCG; the value (host MHz * 1e6 / CONFIG_HZ) only matters for delay loops,
# which the kernel runs on the TSC anyway.
# A kernel of one's own (SOFTRNIC_VM_KERNEL) may need parameters of its
# own: the words of the file "cmdline" beside its image, if there is one
# (scripts/vm/debug-kernel writes it), go on the line too.
vm_cmdline() {
	local kver=$1 mhz hz lpj='' own=''
	mhz=$(awk -F: '/^cpu MHz/ { printf "%d", $2; exit }' /proc/cpuinfo 2>/dev/null)
	hz=$(sed -n 's/^CONFIG_HZ=//p' "$(vm_kconfig "$kver")" 2>/dev/null)
	[ -n "$mhz" ] && [ -n "$hz" ] && [ "$mhz" -gt 0 ] && lpj=" lpj=$((mhz * 1000000 / hz))"
	if [ -n "${SOFTRNIC_VM_KERNEL:-}" ] && [ -r "$(dirname "$SOFTRNIC_VM_KERNEL")/cmdline" ]; then
		own=$(tr -s '\n\t' '  ' <"$(dirname "$SOFTRNIC_VM_KERNEL")/cmdline")
		own=" ${own% }"
	fi
	printf '%s' "console=ttyS0 panic=-1 oops=panic tsc=reliable log_buf_len=16M$lpj$own" \
		" softrnic_vm.root=$VM_ROOT" "${VM_CWD_SHARE:+ softrnic_vm.cwd=$VM_CWD_SHARE}" \
		" ${SOFTRNIC_VM_APPEND:-}"
}

# The repo and the caller's working directory go to the guest as 9p
# shares of their own as well as inside the host root: the guest mounts
# fresh tmpfs on /tmp and /run (and /var without the overlay), which hide
# a tree or a program there.  The initramfs mounts a share at its path
# only where the root share leaves that path invisible.  Sets
# VM_CWD_SHARE (empty when $PWD is inside the repo) and VM_SHARE_ARGS.
vm_share_args() {
	VM_CWD_SHARE=$PWD
	case $VM_CWD_SHARE/ in
	"$VM_ROOT"/*) VM_CWD_SHARE='' ;;
	esac
	# The kernel command line splits on blanks: such a cwd stays unshared.
	case $VM_CWD_SHARE in *[[:space:]]*) VM_CWD_SHARE='' ;; esac
	VM_SHARE_ARGS=(-virtfs "local,path=$VM_ROOT,mount_tag=hostrepo,security_model=none,readonly=on,multidevs=remap")
	[ -z "$VM_CWD_SHARE" ] ||
		VM_SHARE_ARGS+=(-virtfs "local,path=$VM_CWD_SHARE,mount_tag=hostcwd,security_model=none,readonly=on,multidevs=remap")
}

# Stage this tree's softrnic.ko for kernel $1 with the module indexes
# regenerated by the host's depmod, and set VM_MODULES to the staged
# .../lib/modules/$1 (empty if there is no softrnic.ko).  guest-setup links
# it into the guest's /lib/modules: running depmod in the guest would read
# all ~4000 modules over 9p, which takes minutes under TCG (< 1 s here).
# Each build of the module gets its own directory, so rebuilding it while
# another VM runs (a long suite, another developer) pulls nothing from
# under that VM; directories unused for 3 hours are removed.
vm_prepare_modules() {
	local kver=$1 ko=$VM_ROOT/kernel/softrnic.ko base key tmp dir e vermagic mods
	mods=$(vm_moddir "$kver")
	VM_MODULES=
	rm -rf "$VM_BUILD/modules/lib" "$VM_BUILD/modules.stamp" # old layout
	[ -f "$ko" ] || return 0
	key=$(stat -L -c '%s %Y' "$ko" "$mods/modules.dep" | md5sum | cut -c1-12)
	base=$VM_BUILD/modules/$kver-$key
	dir=$base/lib/modules/$kver
	mkdir -p "$VM_BUILD/modules"
	find "$VM_BUILD/modules" -mindepth 1 -maxdepth 1 -mmin +180 ! -path "$base" \
		-exec rm -rf {} + 2>/dev/null
	if [ -f "$dir/extra/softrnic.ko" ]; then
		touch "$base"
		VM_MODULES=$dir
		return 0
	fi
	vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null)
	case $vermagic in
	"$kver "*) ;;
	*) vm_msg "warning: $ko is built for '${vermagic%% *}', the VM runs $kver" ;;
	esac
	tmp=$(mktemp -d "$VM_BUILD/modules/.tmp.XXXXXX")
	mkdir -p "$tmp/lib/modules/$kver/extra"
	# depmod's inputs come from the real tree (symlinked here, removed
	# again afterwards); it writes its outputs here.
	for e in "$mods"/*; do
		case ${e##*/} in
		modules.order | modules.builtin | modules.builtin.modinfo | kernel | updates | vdso)
			ln -s "$e" "$tmp/lib/modules/$kver/" ;;
		esac
	done
	cp "$ko" "$tmp/lib/modules/$kver/extra/"
	if ! depmod -b "$tmp" "$kver"; then
		vm_msg "warning: depmod for softrnic.ko failed; the guest will run depmod itself"
		rm -rf "$tmp"
		return 0
	fi
	# Left: extra/softrnic.ko and the indexes, which the guest links over
	# its /lib/modules/$kver in one go.
	find "$tmp/lib/modules/$kver" -maxdepth 1 -type l -delete
	chmod 755 "$tmp"
	# Someone else may have staged the same build meanwhile: fine.
	mv -T "$tmp" "$base" 2>/dev/null || rm -rf "$tmp"
	VM_MODULES=$dir
}

# Boot the VM once and wait for it to power off.
#   in:  VM_RUN      host dir for this run; VM_RUN/ctl is shared read-write
#                    as 9p tag "vmctl" and holds the job file (vm_write_job)
#        VM_CONSOLE  file that receives the serial console
#        VM_STDOUT, VM_STDERR  where the guest command's stdout/stderr go:
#                    "-" = stream to our own stdout/stderr, else a file
#        VM_MEM (MB), VM_TIMEOUT (s, 0 = none), VM_ACCEL (kvm|tcg)
#        VM_CPUS     vCPUs (default: SOFTRNIC_VM_CPUS, else 2)
#        VM_INTERACTIVE=1  a third virtio console (hvc2) on QEMU's stdio,
#                    i.e. our terminal, for an interactive job (guest-init)
#        VM_NICS     veth (no NIC) or virtio (two, back to back)
#        vm_poll_hook  optional function run every 0.2 s while the VM is
#                    up; a non-zero return kills the VM (result "killed")
#   out: VM_RESULT   done (the command ran; VM_STATUS is its exit status),
#                    timeout, killed, crash (VM ended without a status;
#                    VM_REASON says what the console shows), noboot
vm_boot() {
	local kver kernel bz
	kver=$(vm_kver)
	"$VM_ROOT/scripts/vm/build-initramfs" || vm_die "initramfs build failed"
	kernel=$(vm_kernel "$kver")
	vm_prepare_modules "$kver"
	VM_KMODDIR=$(vm_moddir "$kver")
	bz=/boot/vmlinuz-$kver
	[ -z "${SOFTRNIC_VM_KERNEL:-}" ] || bz=$kernel
	VM_KVER=$kver
	vm_boot_once "$kernel"
	# If the extracted vmlinux never reached the initramfs, PVH boot may not
	# work with this kernel/QEMU pair: retry with the bzImage and, if that
	# one gets further, stop using the vmlinux for good.  Suspect PVH only
	# when QEMU refused the image, the guest died on its own, or it hung
	# until our boot watchdog fired -- not when QEMU failed for other
	# reasons (e.g. KVM trouble) or someone else stopped it.
	local suspect=0
	if [ "$VM_RESULT" = noboot ] && [ "$kernel" != "$bz" ] && ! vm_reached_initramfs; then
		if [ "$VM_BOOT_WATCHDOG" = 1 ]; then
			suspect=1
		elif [ "$VM_QEMU_RC" != 0 ]; then
			grep -q -i -E 'pvh|uncompressed kernel|elf' "$VM_RUN/qemu.log" 2>/dev/null && suspect=1
		elif ! grep -q 'terminating on signal' "$VM_RUN/qemu.log" 2>/dev/null; then
			suspect=1
		fi
	fi
	if [ $suspect = 1 ]; then
		vm_msg "PVH boot of $kernel failed; retrying with $bz"
		vm_boot_once "$bz"
		if vm_reached_initramfs; then
			vm_msg "the bzImage booted; using it from now on (rm $kernel.pvh-broken to retry PVH)"
			: >"$kernel.pvh-broken"
		fi
	fi
}

# The last boot's console lines that look like kernel splats.
vm_console_splats() {
	tail -c +"${VM_CONSOLE_START:-1}" "$VM_CONSOLE" 2>/dev/null | grep -a -E -- "$VM_SPLAT_RE" | tr -d '\r'
}

# Did the last boot get as far as the initramfs's /init?
vm_reached_initramfs() {
	tail -c +"${VM_CONSOLE_START:-1}" "$VM_CONSOLE" 2>/dev/null | grep -q -a 'softrnic-vm: initramfs started'
}

vm_boot_once() {
	local _kernel=$1 _initrd _start _now _rc _pids=() _qemu_pid
	VM_CTL=$VM_RUN/ctl
	mkdir -p "$VM_CTL"
	VM_RESULT='' VM_STATUS='' VM_REASON='' VM_BOOT_WATCHDOG=0
	rm -f "$VM_CTL/booted" "$VM_CTL/status"
	_initrd=$(vm_initrd "$VM_KVER")
	# Where guest-setup finds the staged softrnic.ko (vm_prepare_modules),
	# and the kernel's own modules when they are not the host's.
	printf '%s\n' "${VM_MODULES:-}" >"$VM_CTL/modules"
	if [ "${VM_KMODDIR:-}" != "/lib/modules/$VM_KVER" ]; then
		printf '%s\n' "$VM_KMODDIR" >"$VM_CTL/kmoddir"
	else
		rm -f "$VM_CTL/kmoddir"
	fi
	# VM_CONSOLE_APPEND=1 (run-suite): one file for all boots of a run.
	local _con_opt=
	if [ "${VM_CONSOLE_APPEND:-0}" = 1 ]; then
		_con_opt=,append=on
		VM_CONSOLE_START=$(($(stat -c %s "$VM_CONSOLE" 2>/dev/null || echo 0) + 1))
	else
		: >"$VM_CONSOLE"
		VM_CONSOLE_START=1
	fi

	local _accel_args
	case $VM_ACCEL in
	kvm) _accel_args=(-accel kvm -cpu "$VM_CPU") ;;
	*) _accel_args=(-accel tcg,thread=multi -cpu max) ;;
	esac
	# The guest command's stdout/stderr travel on two virtio consoles
	# (hvc0/hvc1, ttys, so programs line-buffer and output streams).  A
	# console write returns only once QEMU has written the bytes to the
	# chardev, so nothing is lost at power-off -- provided that chardev
	# never blocks: QEMU silently drops console data on EAGAIN.  Hence
	# regular files (VM_STDOUT/VM_STDERR, or files in $VM_RUN that a
	# `tail -f` copies to our stdout/stderr), never pipes.
	local _io_args=(-device virtio-serial-pci,id=vser) _i _name _dest _tails=()
	for _i in 0 1; do
		_name=$([ $_i = 0 ] && echo stdout || echo stderr)
		_dest=$([ $_i = 0 ] && echo "$VM_STDOUT" || echo "$VM_STDERR")
		if [ "$_dest" = - ]; then
			_dest=$VM_RUN/$_name
			_tails+=("$_i")
		fi
		: >"$_dest"
		_io_args+=(-chardev "file,id=$_name,path=$_dest,append=on")
		_io_args+=(-device "virtconsole,chardev=$_name,name=softrnic.$_name")
	done

	# A hub with nothing but the two NICs on it: a cable between them.
	# (QEMU warns in qemu.log that the hub has no host network.)
	local _nic_args=()
	if [ "${VM_NICS:-veth}" = virtio ]; then
		for _i in 0 1; do
			_nic_args+=(-netdev "hubport,id=nic$_i,hubid=0"
				-device "virtio-net-pci,netdev=nic$_i,mac=${VM_NIC_MACS[_i]}")
		done
	fi

	# Interactive: QEMU's stdio chardev puts our terminal in raw mode
	# (signal=off: ^C goes to the guest's shell) and restores it at exit;
	# QEMU's own messages still go to qemu.log.
	local _cpus=${VM_CPUS:-${SOFTRNIC_VM_CPUS:-2}} _qin _qout
	vm_check_cpus "$_cpus" "SOFTRNIC_VM_CPUS"
	: >"$VM_RUN/qemu.log"
	if [ "${VM_INTERACTIVE:-0}" = 1 ]; then
		_io_args+=(-chardev stdio,id=tty,signal=off -device virtconsole,chardev=tty,name=softrnic.tty)
		exec {_qin}<&0 {_qout}>&1
	else
		exec {_qin}</dev/null {_qout}>>"$VM_RUN/qemu.log"
	fi

	vm_share_args
	"$VM_QEMU" -name softrnic-vm -machine pc "${_accel_args[@]}" \
		-smp "$_cpus" -m "${VM_MEM:-2048}" \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$_kernel" -initrd "$_initrd" -append "$(vm_cmdline "$VM_KVER")" \
		-chardev "file,id=con,path=$VM_CONSOLE$_con_opt" -serial chardev:con \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$VM_CTL,mount_tag=vmctl,security_model=none" \
		"${VM_SHARE_ARGS[@]}" "${_io_args[@]}" "${_nic_args[@]}" <&"$_qin" >&"$_qout" 2>>"$VM_RUN/qemu.log" &
	_qemu_pid=$!
	exec {_qin}<&- {_qout}>&-
	VM_QEMU_PID=$_qemu_pid
	for _i in "${_tails[@]}"; do
		_name=$([ "$_i" = 0 ] && echo stdout || echo stderr)
		# --pid: tail does a last read and exits once QEMU is gone.
		if [ "$_i" = 0 ]; then
			tail -c +1 -s 0.1 -f --pid="$_qemu_pid" "$VM_RUN/$_name" &
		else
			tail -c +1 -s 0.1 -f --pid="$_qemu_pid" "$VM_RUN/$_name" >&2 &
		fi
		_pids+=($!)
	done

	_start=$(date +%s)
	# Boot must reach guest-init well within this; a kernel that cannot
	# use the PVH entry would otherwise hang until the overall timeout.
	local _boot_limit=${SOFTRNIC_VM_BOOT_TIMEOUT:-$([ "$VM_ACCEL" = kvm ] && echo 60 || echo 180)}
	while kill -0 "$_qemu_pid" 2>/dev/null; do
		sleep 0.2
		_now=$(date +%s)
		if [ ! -e "$VM_CTL/booted" ] && [ $((_now - _start)) -ge "$_boot_limit" ]; then
			VM_RESULT=noboot VM_BOOT_WATCHDOG=1
		elif [ "${VM_TIMEOUT:-0}" -gt 0 ] && [ $((_now - _start)) -ge "$VM_TIMEOUT" ]; then
			VM_RESULT=timeout
		elif declare -F vm_poll_hook >/dev/null && ! vm_poll_hook; then
			VM_RESULT=killed
		else
			continue
		fi
		vm_kill "$_qemu_pid"
		break
	done
	wait "$_qemu_pid" 2>/dev/null
	_rc=$?
	# 0 also when we stopped it (QEMU exits cleanly on SIGTERM).
	VM_QEMU_RC=$_rc
	# The tails end by themselves within 0.1 s of QEMU's exit.
	for _i in "${_pids[@]}"; do wait "$_i" 2>/dev/null; done
	VM_KERNEL=$_kernel

	if [ -z "$VM_RESULT" ]; then
		if [ -s "$VM_CTL/status" ]; then
			VM_RESULT='done'
			VM_STATUS=$(cat "$VM_CTL/status")
		elif [ -e "$VM_CTL/booted" ]; then
			VM_RESULT=crash
		else
			VM_RESULT=noboot
		fi
	fi
	case $VM_RESULT in
	crash | noboot | killed | timeout) VM_REASON=$(vm_console_reason "$_rc") ;;
	esac
	return 0
}

# Stop QEMU: politely first so it closes its files, then for sure.
vm_kill() {
	local i
	kill -TERM "$1" 2>/dev/null || return 0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.2
	done
	kill -KILL "$1" 2>/dev/null
}

# One line saying why the VM ended early, from the console and QEMU's log.
vm_console_reason() {
	local line con
	# This boot's part of the console only.
	con=$(tail -c +"${VM_CONSOLE_START:-1}" "$VM_CONSOLE" 2>/dev/null)
	line=$(grep -a -m1 -E 'Kernel panic|BUG:|Oops|general protection fault|softrnic-vm: initramfs:' <<<"$con")
	if [ -n "$line" ]; then
		echo "$line" | tr -d '\r' | sed 's/^\[ *[0-9.]*\] //'
	elif [ -s "$VM_RUN/qemu.log" ] && [ "$1" != 0 ]; then
		echo "qemu exited with status $1: $(tail -n 1 "$VM_RUN/qemu.log")"
	elif ! grep -q -a 'softrnic-vm: initramfs started' <<<"$con"; then
		echo "kernel did not reach the initramfs"
	else
		echo "VM stopped unexpectedly (see $VM_CONSOLE)"
	fi
}

# Write the job file guest-init reads: working directory, command (argv;
# one single argument is run by bash -c), environment to pass through.
#   usage: vm_write_job DIR CMD [ARGS...]   (env: VM_PASS_ENV = NAME=VALUE list)
vm_write_job() {
	local ctl=$1 v term=dumb otty=0 etty=0 tty=0 size=
	shift
	# Mirror whether our stdout/stderr are terminals (see guest-init).
	[ "$VM_STDOUT" = - ] && [ -t 1 ] && otty=1
	[ "$VM_STDERR" = - ] && [ -t 2 ] && etty=1
	[ $otty = 1 ] && term=${TERM:-dumb}
	# An interactive job gets our terminal's type and size (not later
	# resizes: nothing carries SIGWINCH to the guest).
	if [ "${VM_INTERACTIVE:-0}" = 1 ]; then
		tty=1 term=${TERM:-dumb}
		size=$(stty size 2>/dev/null)
	fi
	{
		printf 'VM_CWD=%q\n' "$PWD"
		printf 'VM_HOST_PATH=%q\n' "$PATH"
		printf 'VM_STDOUT_TTY=%d\nVM_STDERR_TTY=%d\n' "$otty" "$etty"
		printf 'VM_TTY=%d\nVM_TTY_SIZE=%q\n' "$tty" "$size"
		printf 'VM_CMD=('
		printf ' %q' "$@"
		printf ' )\n'
		printf 'VM_ENV=('
		printf ' %q' "TERM=$term"
		# SOFTRNIC_* knobs (e.g. SOFTRNIC_DEMO_TRAFFIC) follow the user in.
		while IFS= read -r v; do
			printf ' %q' "$v=${!v}"
		done < <(compgen -e | grep '^SOFTRNIC_')
		for v in "${VM_PASS_ENV[@]}"; do printf ' %q' "$v"; done
		printf ' )\n'
	} >"$ctl/job"
}
