#!/bin/bash
# siw, Linux's software iWARP driver (built by `make testprogs` from
# Debian's linux-source-6.1, tests/kmod/siw), works as the test peer for
# softrnic's iWARP wire: siw <-> siw over the veth pair, siw0 on sr0
# (initial netns) and siw1 on sr1 (netns peer), through rdma_cm: rping -V,
# ucmatose, rdma_server/rdma_client, ib_write_bw/ib_read_bw/ib_send_bw -R,
# each end's output checked for the data it moved; both ends on one
# device; and the three MPA CRC builds (default: CRC off between two
# siws; crc: on; nocrc: off), seen in siw's own "enter RTS: crc=" debug
# line.  tests/vm/iwarp_rdmacm.sh runs the same against softrnic.
# timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/iwarp/lib.sh"

for v in default crc nocrc; do
	have_siw $v || die "build/kmod-siw/$v/siw.ko missing: make testprogs builds it"
done
command -v rping >/dev/null && command -v ib_write_bw >/dev/null ||
	die "rdmacm-utils and perftest are not installed (scripts/deps)"

net_setup
modprobe -r rdma_rxe 2>/dev/null

# siw_pair VARIANT: siw.ko of VARIANT, siw0 on sr0, siw1 on sr1 in the
# peer netns, its "enter RTS" debug line on.
siw_pair() {
	siw_load "$1" || die "siw_load $1"
	siw_add siw0 sr0 || die "rdma link add siw0"
	siw_add siw1 sr1 "$PEER_NS" || die "rdma link add siw1 (netns $PEER_NS)"
	siw_crc_log_on || die "siw's dynamic debug"
}

siw_pair default
ibv_devinfo -d siw0 | grep -Eq 'transport:[[:space:]]+iWARP' || die "siw0 is not iWARP"
in_peer rdma link show siw1/1 | grep -q 'netdev sr1' || die "siw1 not on sr1"

c0=$(siw_rts_crc)
# shellcheck disable=SC2086
iwarp_suite in_peer "" 10.0.0.2 "siw <-> siw" $IWARP_TOOLS_ALL
iwarp_suite "" in_peer 10.0.0.1 "siw <-> siw, server in the initial netns" rping rdma_client
crc_since "$c0" n "siw <-> siw (default build)"

c0=$(siw_rts_crc)
iwarp_suite "" "" 10.0.0.1 "one siw device" rping ucmatose rdma_client
crc_since "$c0" n "one siw device"

for v in crc nocrc; do
	siw_pair $v
	c0=$(siw_rts_crc)
	iwarp_suite in_peer "" 10.0.0.2 "siw <-> siw ($v build)" rping write_bw
	[ $v = crc ] && want=y || want=n
	crc_since "$c0" "$want" "siw <-> siw ($v build)"
done

rdma link delete siw0 && in_peer rdma link delete siw1 || die "rdma link delete"
siw_unload || die "rmmod siw"
net_teardown
echo "iwarp_siw_peer OK"
