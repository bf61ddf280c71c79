#!/bin/bash
# iw_cm on an iwarp device: until the iWARP wire exists, every librdmacm
# tool over it must fail with an error, at once, and leave the kernel
# clean (before kernel/iwarp/iwarp_cm.c, `rping -s` on the address of an
# iwarp device's netdev was a NULL call in iw_cm_listen, from any user).
# iw0 on sr0 (10.0.0.1), iw1 on sr1 in netns peer (10.0.0.2).
# timeout: 300
. "$(dirname "$0")/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v rping >/dev/null || skip "rdmacm-utils not installed"
net_setup
modprobe -r rdma_rxe 2>/dev/null
load_softrnic || die "modprobe softrnic"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
in_peer rdma link add iw1 type iwarp netdev sr1 || die "add iw1"

fail=0
# refused [--any] WHAT CMD...: CMD must end within 30 s, with an error
# status unless --any (tools whose iWARP refusal comes as a reported
# error event with status 0 are only held to ending).
refused() {
	local any='' rc=0 out
	[ "$1" = --any ] && { any=1; shift; }
	local what=$1
	shift
	out=$(timeout -k 5 30 "$@" </dev/null 2>&1) || rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "$out" | tail -n 5
		log "FAIL: $what: still running after 30 s"
		fail=1
	elif [ $rc = 0 ] && [ -z "$any" ]; then
		echo "$out" | tail -n 5
		log "FAIL: $what: succeeded on a device that cannot connect"
		fail=1
	else
		log "$what: status $rc: $(echo "$out" | grep -v '^$' | tail -n 1)"
	fi
}

# servers (listen on iw0's address) and clients (connect to iw1's)
refused "rping server" rping -s -a 10.0.0.1 -C 1
# rping's client reports a refused rdma_connect but then waits for its
# CQ thread forever (rping's own behaviour, whatever the driver): it is
# held to reporting the refusal at once.
rping -c -a 10.0.0.2 -C 1 </dev/null >/tmp/rping.cli 2>&1 &
rpid=$!
if try_until 30 grep -q "rdma_connect: Operation not supported" /tmp/rping.cli; then
	log "rping client: $(head -n 1 /tmp/rping.cli)"
else
	cat /tmp/rping.cli
	log "FAIL: rping client: no refusal reported within 30 s"
	fail=1
fi
kill -9 $rpid 2>/dev/null
wait $rpid 2>/dev/null
refused "ucmatose server" ucmatose -b 10.0.0.1 -c 1
refused "ucmatose client" ucmatose -s 10.0.0.2 -c 1
refused "rdma_server" rdma_server -s 10.0.0.1 -p 7471
refused "rdma_client" rdma_client -s 10.0.0.2 -p 7471
refused "rstream server" rstream -b 10.0.0.1 -C 1 -S 64
refused "rstream client" rstream -s 10.0.0.2 -C 1 -S 64
refused --any "udaddy server" udaddy -b 10.0.0.1 -c 1
refused --any "udaddy client" udaddy -s 10.0.0.2 -c 1
refused --any "mckey" mckey -b 10.0.0.1 -m 239.1.1.1 -c 1
refused "cmtime" cmtime -s 10.0.0.2 -c 1
# and as an ordinary user (rdma_cm's device node is open to everyone)
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	refused "rping server as nobody" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		rping -s -a 10.0.0.1 -C 1
fi

rdma link delete iw0 || die "delete iw0"
in_peer rdma link delete iw1 || die "delete iw1"
net_teardown
[ $fail = 0 ] || die "see above"
echo "iwarp_cm_refused OK"
