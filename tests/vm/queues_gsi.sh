#!/bin/bash
# An rdma_cm connection attempt over RoCE sends CM MADs on QP1.  Whatever
# the transport does with them, killing the process must not leave it
# stuck in rdma_destroy_id (which waits for the MAD send completions) and
# the device must still go away.
# timeout: 120
. "$(dirname "$0")/lib.sh"

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rping -s -a 10.0.0.1 -C 1 >/dev/null 2>&1 &
server=$!
sleep 1
rping -c -a 10.0.0.1 -C 1 >/dev/null 2>&1 &
client=$!
sleep 3
kill -TERM $client $server 2>/dev/null
retry_until 20 sh -c "! kill -0 $client 2>/dev/null && ! kill -0 $server 2>/dev/null"
wait
timeout 30 rdma link delete roce0 || die "rdma link delete roce0 blocked"
net_teardown
echo "queues_gsi OK"
