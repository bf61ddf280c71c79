#!/bin/bash
# Host-side check of the option checks scripts/vm/run and run-suite make
# before booting anything: --cpus and SOFTRNIC_VM_CPUS take a whole number
# >= 1 (anything else: status 125 and a message naming the option), and
# `run` without a command refuses a stdin that is not a terminal.  No VM:
# every case ends before a boot; SOFTRNIC_QEMU=false (and a cache of our
# own for the KVM probe) makes sure one that does not cannot boot either.
set -u
cd "$(dirname "$0")/../.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SOFTRNIC_QEMU=false SOFTRNIC_VM_CACHE=$tmp/cache SOFTRNIC_VM_CONSOLE=$tmp/console.log
unset SOFTRNIC_VM_CPUS
ok=1
fail() { echo "check-vm-options: $*"; ok=0; }

# expect STATUS STDERR-REGEX COMMAND...  (stdin: /dev/null)
expect() {
	local want=$1 re=$2 rc
	shift 2
	timeout 60 "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = "$want" ] || fail "$*: status $rc, expected $want: $(head -c 300 "$tmp/err")"
	grep -qE -- "$re" "$tmp/err" || fail "$*: stderr lacks /$re/: $(head -c 300 "$tmp/err")"
}

for v in 0 00 -1 abc 1.5 2x '' ' 2' 08; do
	expect 125 "--cpus: '$v' is not a vCPU count" scripts/vm/run --cpus "$v" -- true
	expect 125 "--cpus: '$v' is not a vCPU count" scripts/vm/run-suite --cpus "$v" tests/vm/devinfo.sh
	# (An empty SOFTRNIC_VM_CPUS means the default: see below.)
	[ -n "$v" ] && expect 125 "SOFTRNIC_VM_CPUS: '$v' is not a vCPU count" \
		env SOFTRNIC_VM_CPUS="$v" scripts/vm/run -- true
done
expect 125 "--cpus: '0' is not a vCPU count" scripts/vm/run --cpus=0 -- true
expect 125 "--cpus: '' is not a vCPU count" scripts/vm/run --cpus
expect 125 "SOFTRNIC_VM_CPUS: 'x' is not a vCPU count" \
	env SOFTRNIC_VM_CPUS=x scripts/vm/run-suite tests/vm/devinfo.sh
# --cpus wins over the environment.
expect 125 "--cpus: '0' is not a vCPU count" env SOFTRNIC_VM_CPUS=2 scripts/vm/run --cpus 0 -- true

# Good counts pass the check and get as far as the terminal check (no
# command, stdin /dev/null): refused with a message that says why.
tty_re='no command given and stdin is not a terminal'
for v in 1 2 16 128; do
	expect 125 "$tty_re" scripts/vm/run --cpus "$v"
	expect 125 "$tty_re" env SOFTRNIC_VM_CPUS="$v" scripts/vm/run
done
expect 125 "$tty_re" scripts/vm/run
expect 125 "$tty_re" scripts/vm/run --
expect 125 "$tty_re" env SOFTRNIC_VM_CPUS= scripts/vm/run
grep -q 'is not a vCPU count' "$tmp/err" && fail "an empty SOFTRNIC_VM_CPUS is not the default"

# A test's "# timeout:" and "# vm-nics:" lines are read from its header,
# however long (a 300 s default once hid five suites' longer timeouts
# below line 20): a 30-line header is read to its end and no further,
# and no VM test has such a line where run-suite does not read it.
# shellcheck source=scripts/vm/lib.sh
. scripts/vm/lib.sh
{
	echo '#!/bin/bash'
	for i in $(seq 28); do echo "# line $i"; done
	echo '#   timeout:  1234  (seconds)'
	echo 'true'
	echo '# vm-nics: virtio'
} >"$tmp/t.sh"
[ "$(vm_test_header "$tmp/t.sh" timeout)" = 1234 ] ||
	fail "vm_test_header: '$(vm_test_header "$tmp/t.sh" timeout)' for line 30's timeout 1234"
[ -z "$(vm_test_header "$tmp/t.sh" vm-nics)" ] || fail "vm_test_header read past the header"
for f in tests/vm/*.sh tests/vm/*/*.sh; do
	for k in timeout vm-nics; do
		grep -qE "^#[[:space:]]*$k:" "$f" || continue
		[ -n "$(vm_test_header "$f" $k)" ] || fail "$f: its '# $k:' line is not in its header"
	done
done
# Nothing may have been booted on the way.
[ -e "$tmp/console.log" ] && fail "a VM was started: $(head -c 300 "$tmp/console.log")"

[ $ok = 1 ] && echo "check-vm-options: OK"
[ $ok = 1 ]
