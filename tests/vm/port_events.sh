#!/bin/bash
# Port state and MTU follow the netdev: carrier down/up raises
# IBV_EVENT_PORT_ERR / IBV_EVENT_PORT_ACTIVE, an MTU change updates
# active_mtu.
# timeout: 120
. "$(dirname "$0")/lib.sh"

port_state() { ibv_devinfo -d "$1" | awk '/state:/ {print $2; exit}'; }
state_is() { [ "$(port_state "$1")" = "$2" ]; }
active_mtu() { ibv_devinfo -d "$1" | awk '/active_mtu:/ {print $2; exit}'; }

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
assert_eq "$(port_state roce0)" PORT_ACTIVE "initial state"

events=$(mktemp)
ibv_asyncwatch -d roce0 >"$events" 2>&1 &
watch=$!
retry_until 10 grep -q . /proc/$watch/status
sleep 1 # let it open the device and block in ibv_get_async_event

# Taking the peer end down drops sr0's carrier.
in_peer ip link set sr1 down
retry_until 10 state_is roce0 PORT_DOWN
assert_eq "$(port_state iw0)" PORT_DOWN "iw0 follows carrier too"
in_peer ip link set sr1 up
retry_until 10 state_is roce0 PORT_ACTIVE
# Admin down on our own end is a port error as well.
ip link set sr0 down
retry_until 10 state_is roce0 PORT_DOWN
ip link set sr0 up
retry_until 10 state_is roce0 PORT_ACTIVE

retry_until 10 grep -q PORT_ACTIVE "$events"
kill $watch; wait $watch 2>/dev/null
cat "$events"
grep -q 'IBV_EVENT_PORT_ERR' "$events" || die "no PORT_ERR event"
grep -q 'IBV_EVENT_PORT_ACTIVE' "$events" || die "no PORT_ACTIVE event"
[ "$(grep -c IBV_EVENT_PORT_ERR "$events")" -ge 2 ] || die "expected two PORT_ERR events"

# RoCEv2 headers (IP + UDP + BTH + ...) must fit in the netdev MTU.
ip link set sr0 mtu 1500
assert_eq "$(active_mtu roce0)" "1024" "roce0 active_mtu at 1500"
ip link set sr0 mtu 9000
in_peer ip link set sr1 mtu 9000
assert_eq "$(active_mtu roce0)" "4096" "roce0 active_mtu at 9000"
ip link set sr0 mtu 2200
assert_eq "$(active_mtu roce0)" "2048" "roce0 active_mtu at 2200"
ip link set sr0 mtu 1100
assert_eq "$(active_mtu roce0)" "512" "roce0 active_mtu at 1100"
assert_eq "$(active_mtu iw0)" "1024" "iw0 active_mtu at 1100"

rdma link delete roce0
rdma link delete iw0
net_teardown
echo "port events OK"
