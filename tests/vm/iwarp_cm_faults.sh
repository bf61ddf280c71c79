#!/bin/bash
# iw_cm on iwarp devices when things go wrong: a connect to a port nobody
# listens on, hostile MPA initiators (silent, garbage, oversize private
# data, a bad revision, a truncated Request, markers asked), either end
# killed mid-transfer, the device deleted under a connection, and every
# tool as an ordinary user (/dev/infiniband/rdma_cm is open to all:
# before kernel/iwarp/iwarp_cm.c, `rping -s` on an iwarp device's address
# was a NULL call in iw_cm_listen).  Nothing may hang, leak a QP or a
# cm_id, or leave a splat.
# iw0 on sr0 (10.0.0.1), iw1 on sr1 in netns peer (10.0.0.2).
# timeout: 420
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/iwarp/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v rping >/dev/null || skip "rdmacm-utils not installed"
iwarp_pair_up
HOSTILE="python3 $(dirname "$0")/iwarp/mpa_client.py"
OUT=/tmp/iwcm

# ends_within SECONDS WHAT CMD...: CMD must end (any status) in time.
ends_within() {
	local secs=$1 what=$2 rc=0
	shift 2
	timeout -k 5 "$secs" "$@" >"$OUT.out" 2>&1 </dev/null || rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		tail -n 5 "$OUT.out"
		die "$what: still running after $secs s"
	fi
	return $rc
}

# listening NS_PREFIX PORT
listening() { $1 rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*:$2\b"; }

no_leftovers() {
	local q
	q=$(rdma resource show qp 2>/dev/null | grep -c 'iw0')
	[ "$q" = 0 ] || { rdma resource show qp; die "$1: $q QPs left on iw0"; }
	q=$(in_peer rdma resource show qp 2>/dev/null | grep -c 'iw1')
	[ "$q" = 0 ] || { in_peer rdma resource show qp; die "$1: $q QPs left on iw1"; }
}

# 1. nobody listens: refused at once, as the TCP RST says
start=$EPOCHSECONDS
rc=0
ends_within 20 "rdma_client to a closed port" rdma_client -s 10.0.0.2 -p 7999 || rc=$?
[ $rc != 0 ] || die "rdma_client to a port nobody listens on succeeded"
[ $((EPOCHSECONDS - start)) -le 5 ] || die "the refusal took $((EPOCHSECONDS - start)) s"
log "closed port: rdma_client status $rc: $(tail -n 1 "$OUT.out")"

# 2. hostile initiators against a listening rping server
in_peer rping -s -a 10.0.0.2 -p 7300 -C 1 >"$OUT.srv" 2>&1 &
spid=$!
retry_until 10 listening in_peer 7300
for c in garbage bigpd rev3; do
	$HOSTILE 10.0.0.2 7300 $c || die "hostile $c: the listener did not close"
done
# silent and truncated ones take the MPA timeout (10 s), both at once
$HOSTILE 10.0.0.2 7300 silent >"$OUT.h1" 2>&1 &
h1=$!
$HOSTILE 10.0.0.2 7300 trunc >"$OUT.h2" 2>&1 &
h2=$!
wait $h1 || { cat "$OUT.h1"; die "hostile silent"; }
wait $h2 || { cat "$OUT.h2"; die "hostile trunc"; }
cat "$OUT.h1" "$OUT.h2"
kill -0 $spid 2>/dev/null || { cat "$OUT.srv"; die "the rping server died of hostile clients"; }
# ... and still serves a real client
ends_within 60 "rping after hostile clients" rping -c -a 10.0.0.2 -p 7300 -C 1 -V ||
	{ cat "$OUT.out"; die "rping after hostile clients failed"; }
wait $spid || { cat "$OUT.srv"; die "rping server"; }

# a Request asking for markers gets a Reply with R; the accept fails
in_peer rping -s -a 10.0.0.2 -p 7301 -C 1 >"$OUT.srv" 2>&1 &
spid=$!
retry_until 10 listening in_peer 7301
$HOSTILE 10.0.0.2 7301 markers || die "hostile markers: no Reply with R"
kill $spid 2>/dev/null
wait $spid 2>/dev/null

# 3. either end killed mid-transfer: the other one ends, nothing is left
for victim in client server; do
	in_peer rping -s -a 10.0.0.2 -p 7302 -V >"$OUT.srv" 2>&1 &
	spid=$!
	retry_until 10 listening in_peer 7302
	rping -c -a 10.0.0.2 -p 7302 -v -V >"$OUT.cli" 2>&1 &
	cpid=$!
	retry_until 30 grep -q 'ping data' "$OUT.cli"
	sleep 1
	# $spid is in_peer's shell: the server is its child
	if [ $victim = client ]; then
		kill -9 $cpid
		other=$spid
	else
		pkill -9 -f 'rping -s -a 10.0.0.2 -p 7302' || die "no rping server to kill"
		other=$cpid
	fi
	try_until 30 sh -c "! kill -0 $other 2>/dev/null" ||
		{ kill -9 $other; die "kill -9 of the $victim: the other end still runs after 30 s"; }
	wait $cpid $spid 2>/dev/null
	retry_until 10 sh -c "[ \$(rdma resource show qp | grep -c iw0) = 0 ]"
	no_leftovers "kill -9 of the $victim"
	log "kill -9 of the $victim: the other end ended"
done

# 4. the device deleted under a connection
in_peer rping -s -a 10.0.0.2 -p 7303 -V >"$OUT.srv" 2>&1 &
spid=$!
retry_until 10 listening in_peer 7303
rping -c -a 10.0.0.2 -p 7303 -v -V >"$OUT.cli" 2>&1 &
cpid=$!
retry_until 30 grep -q 'ping data' "$OUT.cli"
ends_within 60 "rdma link delete iw0 under a connection" rdma link delete iw0 ||
	die "rdma link delete iw0"
try_until 30 sh -c "! kill -0 $cpid 2>/dev/null && ! kill -0 $spid 2>/dev/null" ||
	{ kill -9 $cpid $spid; die "the rping ends still run after the device went"; }
wait $cpid $spid 2>/dev/null
rdma link add iw0 type iwarp netdev sr0 || die "add iw0 again"
no_leftovers "link delete"

# 5. as an ordinary user, both ends
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	asnobody="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	in_peer $asnobody rping -s -a 10.0.0.2 -p 7304 -C 2 >"$OUT.srv" 2>&1 &
	spid=$!
	retry_until 10 listening in_peer 7304
	ends_within 60 "rping as nobody" $asnobody rping -c -a 10.0.0.2 -p 7304 -C 2 -V ||
		{ cat "$OUT.out"; die "rping as nobody"; }
	wait $spid || { cat "$OUT.srv"; die "rping server as nobody"; }
fi
no_leftovers "the end"

rdma link delete iw0 || die "delete iw0"
in_peer rdma link delete iw1 || die "delete iw1"
net_teardown
echo "iwarp_cm_faults OK"
