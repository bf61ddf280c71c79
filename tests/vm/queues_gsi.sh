#!/bin/bash
# rdma_cm over RoCE exchanges its CM MADs on QP1 (GSI).  An rping pair
# that has connected and is moving verified data is killed mid-transfer:
# both processes must go (rdma_destroy_id waits for the MAD send
# completions: a GSI QP that loses them hangs it), every CM id and QP
# they had must be released, and the device must still go away.
# timeout: 120
. "$(dirname "$0")/lib.sh"

cm_ids() { rdma resource show cm_id 2>/dev/null | grep -c rping; }

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rping -s -a 10.0.0.1 -p 7175 -C 0 -V >/tmp/gsi.srv 2>&1 &
server=$!
try_until 20 sh -c "rdma resource show cm_id 2>/dev/null | grep -q LISTEN" ||
	die "rping server never listened"
rping -c -a 10.0.0.1 -p 7175 -C 0 -V -v >/tmp/gsi.cli 2>&1 &
client=$!
# -v prints one line per verified ping: the pair is connected and moving
# data before it is killed.
try_until 30 sh -c '[ "$(grep -c "ping data" /tmp/gsi.cli)" -ge 5 ]' || {
	cat /tmp/gsi.cli /tmp/gsi.srv
	die "rping never exchanged verified data"
}
log "rping connected: $(grep -c 'ping data' /tmp/gsi.cli) verified pings before the kill"
[ "$(cm_ids)" -ge 2 ] || die "no connected CM ids while rping runs"
kill -TERM $client $server 2>/dev/null
try_until 20 sh -c "! kill -0 $client 2>/dev/null && ! kill -0 $server 2>/dev/null" ||
	die "rping did not exit after SIGTERM"
wait
try_until 20 sh -c '! rdma resource show cm_id 2>/dev/null | grep -q rping' ||
	die "CM ids left behind: $(rdma resource show cm_id)"
try_until 20 sh -c '! rdma resource show qp 2>/dev/null | grep -q rping' ||
	die "QPs left behind: $(rdma resource show qp)"
timeout 30 rdma link delete roce0 || die "rdma link delete roce0 blocked"
net_teardown
echo "queues_gsi OK"
