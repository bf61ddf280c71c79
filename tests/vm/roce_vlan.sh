#!/bin/bash
# RoCEv2 over VLAN 10: sr0.10 (init_net, 10.0.10.1) and sr1.10 (netns
# peer, 10.0.10.2) on the veth pair.  Two ways to use it:
#  A. `rdma link add` on the VLAN netdevs themselves.  Linux 6.1's ib_core
#     gives such a RoCE port no IP-address GIDs (its GID filter wants the
#     VLAN's real device to be the port's netdev), only the default GID,
#     the link-local fe80:: of the VLAN's MAC: used here (-g 0).
#  B. RoCE devices on the real netdevs (roce0 on sr0, roce1 on sr1):
#     ib_core adds GIDs for the upper VLAN netdev's addresses, and a QP
#     whose GID is 10.0.10.x must send tagged through sr0.10 / sr1.10.
# Each: ibv_rc_pingpong at 1 B .. 64 KiB and a short softrnic-integrity
# run (every opcode, both ends requesting), softrnic <-> softrnic; B also
# with rdma_rxe on sr0 (pingpong and integrity).  The packets must carry
# tag 10: the VLAN netdevs' byte counters (frames of VLAN 10 only) move by
# at least as many bytes as the RDMA devices receive (bytes, not packets:
# a batch crosses the veth as one UDP GSO frame).
# timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"
have_softrnic || skip "softrnic.ko not built"

integrity_setup

GIDV_0=0000:0000:0000:0000:0000:ffff:0a00:0a01 # 10.0.10.1
GIDV_1=0000:0000:0000:0000:0000:ffff:0a00:0a02 # 10.0.10.2

net_setup
modprobe -r rdma_rxe 2>/dev/null
load_softrnic || die "modprobe softrnic"
vlan10_up

# vlan_rx WHERE DEV: bytes received by the VLAN netdev (tag 10 only)
vlan_rx() { $1 cat "/sys/class/net/$2/statistics/rx_bytes"; }
# rdma_pkts WHERE DEV NAME: a port counter of an RDMA device
rdma_pkts() {
	$1 rdma statistic show link "$2/1" 2>/dev/null |
		awk -v n="$3" '{ for (i = 3; i < NF; i += 2) if ($i == n) print $(i + 1) }'
}

port=18800
# gid_integrity NAME SRV_DEV SRV_GID CLI_DEV CLI_GID ARGS...: softrnic-integrity,
# server in peer
gid_integrity() {
	local name=$1 sdev=$2 sgid=$3 cdev=$4 cgid=$5 spid rc=0
	shift 5
	port=$((port + 1))
	in_peer "$integ" -d "$sdev" -g "$sgid" -p $port --timeout "$(scaled 90)" "$@" >"/tmp/$name.srv" 2>&1 &
	spid=$!
	wait_listen in_peer $port $spid || { cat "/tmp/$name.srv"; die "$name: no server"; }
	"$integ" -d "$cdev" -g "$cgid" -p $port --timeout "$(scaled 90)" "$@" 10.0.10.2 >"/tmp/$name.cli" 2>&1 ||
		rc=$?
	wait $spid || { [ $rc = 0 ] && rc=100; }
	if [ $rc != 0 ]; then
		sed 's/^/    server: /' "/tmp/$name.srv"
		sed 's/^/    client: /' "/tmp/$name.cli"
		die "$name: failed (status $rc)"
	fi
	log "$name: $(tail -n 1 "/tmp/$name.cli")"
}

# tagged NAME DEV0 DEV1 BODY...: run BODY (a function), then check that
# DEV0 (here) and DEV1 (peer) received their RoCE packets as VLAN 10 frames
tagged() {
	local name=$1 d0=$2 d1=$3 r0 r1 p1 v0 v1
	shift 3
	r0=$(rdma_pkts "" "$d0" rx_bytes)
	r1=$(rdma_pkts in_peer "$d1" rx_bytes)
	p1=$(rdma_pkts in_peer "$d1" rx_packets)
	v0=$(vlan_rx "" sr0.10)
	v1=$(vlan_rx in_peer sr1.10)
	"$@"
	if [ -n "$r0" ]; then
		r0=$(($(rdma_pkts "" "$d0" rx_bytes) - r0))
	else
		r0=0 # rxe: no rx_bytes in its counters
	fi
	r1=$(($(rdma_pkts in_peer "$d1" rx_bytes) - r1))
	p1=$(($(rdma_pkts in_peer "$d1" rx_packets) - p1))
	v0=$(($(vlan_rx "" sr0.10) - v0))
	v1=$(($(vlan_rx in_peer sr1.10) - v1))
	log "$name: RoCE bytes received $d0 $r0, $d1 $r1 ($p1 packets); VLAN 10 bytes sr0.10 $v0, sr1.10 $v1"
	[ "$p1" -gt 100 ] || die "$name: too few RoCE packets counted"
	[ "$v0" -ge "$r0" ] && [ "$v1" -ge "$r1" ] ||
		die "$name: fewer VLAN 10 bytes than RoCE bytes: the traffic went untagged"
}

# pingpongs SRV_DEV SRV_GID CLI_DEV CLI_GID
pingpongs() {
	local size
	for size in 1 65536; do
		run_pair 60 "ibv_rc_pingpong -d $1 -g $2 -s $size -n 20" \
			"ibv_rc_pingpong -d $3 -g $4 -s $size -n 20 10.0.10.2" >/tmp/pp.log 2>&1 ||
			{ cat /tmp/pp.log; die "pingpong $3 -> $1 over VLAN 10, $size bytes"; }
	done
	log "pingpong $3 -> $1 over VLAN 10: 1 B, 64 KiB"
}

# --- A: RDMA devices on the VLAN netdevs -------------------------------------
rdma link add rocev0 type roce netdev sr0.10 || die "add rocev0 on sr0.10"
in_peer rdma link add rocev1 type roce netdev sr1.10 || die "add rocev1 on sr1.10"
linklocal() { $1 cat "/sys/class/infiniband/$2/ports/1/gids/0" | grep -q "^fe80:"; }
retry_until 20 linklocal "" rocev0
retry_until 20 linklocal in_peer rocev1
# GID 0 is the link-local address: ib_core resolves it through the route,
# which fails while the address is tentative (DAD) -- the server's RTR
# failed so once in CI.
retry_until 20 net_ll_ready sr0.10
retry_until 20 net_ll_ready sr1.10 in_peer
a_run() {
	pingpongs rocev1 0 rocev0 0
	gid_integrity vlan-a rocev1 0 rocev0 0 -n 100 -m 128K -s 0x3001
}
tagged "A (rdma link on sr0.10/sr1.10)" rocev0 rocev1 a_run
rdma link delete rocev0 || die "delete rocev0"
in_peer rdma link delete rocev1 || die "delete rocev1"

# --- B: RDMA devices on the real netdevs, VLAN GIDs --------------------------
rdma link add roce0 type roce netdev sr0 || die "add roce0"
in_peer rdma link add roce1 type roce netdev sr1 || die "add roce1"
wait_gid gb0 roce0 "$GIDV_0"
wait_gid gb1 roce1 "$GIDV_1"
log "roce0 GID $gb0 (10.0.10.1), roce1 GID $gb1 (10.0.10.2)"
b_run() {
	pingpongs roce1 "$gb1" roce0 "$gb0"
	gid_integrity vlan-b roce1 "$gb1" roce0 "$gb0" -n 100 -m 128K -s 0x3002
}
tagged "B (VLAN GIDs on roce0/roce1)" roce0 roce1 b_run

# --- B with rdma_rxe on sr0 --------------------------------------------------
rdma link delete roce0 || die "delete roce0"
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
wait_gid gx0 rxe0 "$GIDV_0"
x_run() {
	pingpongs roce1 "$gb1" rxe0 "$gx0"
	gid_integrity vlan-rxe roce1 "$gb1" rxe0 "$gx0" -n 100 -m 128K -s 0x3003
}
tagged "B with rxe0 on sr0" rxe0 roce1 x_run

rdma link delete rxe0
in_peer rdma link delete roce1 || die "delete roce1"
modprobe -r rdma_rxe
net_teardown
echo "roce_vlan OK"
