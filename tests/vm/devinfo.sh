#!/bin/bash
# Unmodified rdma-core tools see our devices through libsoftrnic:
# ibv_devices, ibv_devinfo -v (transport, link layer, node type, GIDs).
# timeout: 120
. "$(dirname "$0")/lib.sh"

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"

out=$(ibv_devices 2>&1)
echo "$out"
grep -q roce0 <<<"$out" || die "ibv_devices lacks roce0"
grep -q iw0 <<<"$out" || die "ibv_devices lacks iw0"

# The provider must claim the device: no "no userspace device-specific
# driver" warning, and query_device/query_port answered by our provider.
out=$(ibv_devinfo -v -d roce0 2>&1)
echo "$out"
grep -qi "couldn't\|no userspace\|failed" <<<"$out" && die "ibv_devinfo roce0 reported an error"
grep -qE 'transport:\s+InfiniBand \(0\)' <<<"$out" || die "roce0 transport"
grep -qE 'link_layer:\s+Ethernet' <<<"$out" || die "roce0 link_layer"
grep -qE 'state:\s+PORT_ACTIVE' <<<"$out" || die "roce0 port not active"
grep -qE 'max_qp:\s+65536' <<<"$out" || die "roce0 max_qp attribute"
grep -qE 'max_mr_size:\s+0x10000000000' <<<"$out" || die "roce0 max_mr_size attribute"
# A zero vendor_id reads as "the device reported none" (rdma-core's own
# test_query_device rejects it): the unassignable OUI 0xffffff instead.
grep -qE 'vendor_id:\s+0xffffff$' <<<"$out" || die "roce0 vendor_id"
grep -qE 'vendor_part_id:\s+21330$' <<<"$out" || die "roce0 vendor_part_id"

# GID 0 is the veth's IPv6 link-local address, GID 1.. its IP addresses.
ll=$(ip -6 addr show dev sr0 scope link | awk '/inet6/ {print $2}' | cut -d/ -f1)
[ -n "$ll" ] || die "sr0 has no link-local address"
retry_until 10 test -e /sys/class/infiniband/roce0/ports/1/gids/1
gid0=$(cat /sys/class/infiniband/roce0/ports/1/gids/0)
assert_eq "$(/usr/bin/python3 -c "import ipaddress,sys; print(ipaddress.IPv6Address(sys.argv[1]))" "$gid0")" \
	"$(/usr/bin/python3 -c "import ipaddress,sys; print(ipaddress.IPv6Address(sys.argv[1]))" "$ll")" "roce0 GID 0"
grep -qE "GID\[\s*0\]:\s+fe80:" <<<"$out" || die "ibv_devinfo GID 0 is not link-local"
gids=$(cat /sys/class/infiniband/roce0/ports/1/gids/* 2>/dev/null)
grep -q '0000:0000:0000:0000:0000:ffff:0a00:0001' <<<"$gids" || die "no IPv4 GID for 10.0.0.1"
grep -q 'fd00:0000:0000:0000:0000:0000:0000:0001' <<<"$gids" || die "no IPv6 GID for fd00::1"
types=$(cat /sys/class/infiniband/roce0/ports/1/gid_attrs/types/0)
assert_eq "$types" "RoCE v2" "GID 0 type"

out=$(ibv_devinfo -v -d iw0 2>&1)
echo "$out"
grep -qi "couldn't\|no userspace\|failed" <<<"$out" && die "ibv_devinfo iw0 reported an error"
grep -qE 'transport:\s+iWARP \(1\)' <<<"$out" || die "iw0 transport"
grep -qE 'vendor_id:\s+0xffffff$' <<<"$out" || die "iw0 vendor_id"
grep -qE 'link_layer:\s+Ethernet' <<<"$out" || die "iw0 link_layer"
mac=$(cat /sys/class/net/sr0/address | tr -d ':')
gid=$(cat /sys/class/infiniband/iw0/ports/1/gids/0 | tr -d ':')
assert_eq "${gid:0:12}" "$mac" "iw0 GID is the MAC"

assert_eq "$(cat /sys/class/infiniband/roce0/node_guid | tr -d ':')" \
	"$(/usr/bin/python3 - <<'PY'
m=[int(x,16) for x in open('/sys/class/net/sr0/address').read().strip().split(':')]
e=[m[0]^2,m[1],m[2],0xff,0xfe,m[3],m[4],m[5]]
print(''.join('%02x'%b for b in e))
PY
)" "node GUID is the EUI-64 of the MAC"

rdma link delete roce0
rdma link delete iw0
net_teardown
echo "devinfo OK"
