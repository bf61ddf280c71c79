#!/bin/bash
# iWARP RC data integrity: softrnic-integrity --cm (tests/vm/progs/
# integrity.cpp; QPs connected through rdma_cm, the only way on iWARP),
# random SEND/WRITE/READ (and, between softrnic devices, SEND/WRITE with
# immediate data and atomics: RFC 7306), inline or not, up to 32 SGEs
# (max_sge_rd honoured), requests from both ends, every byte and every
# completion checked by both ends:
#   self       iw0 (sr0) <-> iw1 (sr1, netns peer), server on either end;
#              iw0 must have sent FPDUs by reference (tx_zcopy_fpdus)
#   loopback   client and server both on iw0 (10.0.0.1)
#   netem      iw0 <-> iw1 under netem on sr0: loss 1%, delay 1ms reorder
#              25% 50%, duplicate 1% (TCP recovers: data byte-exact); loss
#              2% with MPA CRC
# Every softrnic <-> softrnic pair runs with --reuse-sources: a source is
# overwritten as soon as its completion is polled, so a zero-copy SEND or
# WRITE that completed while TCP could still (re)send from its pages
# reaches the peer changed, or fails the peer's CRC check.
#   crc        iw0 <-> iw1 with softrnic's mpa_crc=Y (asks for MPA CRC)
#   siw        iw0 <-> siw1 (Linux's siw on sr1 instead of iw1: two iWARP
#              devices on one netdev compete for its TCP ports), server on
#              either side, softrnic's mpa_crc N then Y; siw's "enter RTS:
#              crc=" debug line must show the CRC the pair agreed on.  siw
#              has no immediate data (--no-imm on its end) and no atomics
#              (atomic_cap NONE: left out by the tool), and completes a
#              READ only when its response is in, after the SENDs and
#              WRITEs posted behind it (--sq-any-order on its end), and
#              refuses a fenced READ (--no-read-fence on its end).
# SOFTRNIC_INTEGRITY_SEED replaces the fixed seeds (each run prints its
# seed); SOFTRNIC_IWARP_INTEGRITY_PARTS="self loopback netem crc siw"
# runs a subset.
# timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"
. "$(dirname "$0")/iwarp/lib.sh"

integrity_setup
have_softrnic || skip "softrnic.ko not built"
have_siw default || die "build/kmod-siw/default/siw.ko missing: make testprogs builds it"

net_setup
modprobe -r rdma_rxe 2>/dev/null
load_softrnic || die "modprobe softrnic"
CRC_PARAM=/sys/module/softrnic/parameters/mpa_crc
[ -w $CRC_PARAM ] || die "no $CRC_PARAM"
echo N >$CRC_PARAM

seed() { echo "${SOFTRNIC_INTEGRITY_SEED:-$1}"; }
PARTS=" ${SOFTRNIC_IWARP_INTEGRITY_PARTS:-self loopback netem crc siw} "
part() { [[ $PARTS == *" $1 "* ]]; }
# SIW_ARGS: what siw's end of a pair needs
SIW_ARGS="--no-imm --sq-any-order --no-read-fence"

# zcopy_fpdus: iw0's FPDUs whose payload went to TCP by reference
zcopy_fpdus() {
	rdma statistic show link iw0/1 | tr ' ' '\n' | grep -A1 -x tx_zcopy_fpdus | tail -n 1
}

port_active() { grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null; }

# sr_add DEV NETDEV [in_peer]: softrnic's iWARP link
sr_add() {
	${3:-} rdma link add "$1" type iwarp netdev "$2" || die "rdma link add $1 type iwarp netdev $2"
	retry_until 10 port_active "$1"
}

# link_del DEV: DEV deleted, in whichever namespace it was made from
link_del() {
	[ -e "/sys/class/infiniband/$1" ] || return 0
	rdma link delete "$1" 2>/dev/null || in_peer rdma link delete "$1" || die "rdma link delete $1"
}

netem_off() { tc qdisc del dev sr0 root 2>/dev/null; return 0; }
# netem_on ARGS...: a fresh netem on sr0 (its counters from zero)
netem_on() {
	netem_off
	tc qdisc add dev sr0 root netem "$@" || die "tc netem $* on sr0"
}
# netem_stats: what netem did to sr0's packets so far
netem_stats() {
	log "    netem on sr0: $(tc -s qdisc show dev sr0 | grep -o 'Sent [0-9]* bytes [0-9]* pkt (dropped [0-9]*')"
	[ "$(tc -s qdisc show dev sr0 | grep -o 'Sent [0-9]*' | head -1)" != "Sent 0" ] ||
		die "netem on sr0 saw no traffic"
}

PORT=18800
# iw NAME SRV_PFX SRV_DEV SRV_ADDR CLI_PFX CLI_DEV "SRV ARGS" "CLI ARGS" [ARGS...]:
# a --cm pair that must pass: the server on SRV_DEV listening on SRV_ADDR
# under SRV_PFX ("" or in_peer), the client on CLI_DEV under CLI_PFX; ARGS
# for both.  Output in /tmp/NAME.{srv,cli}.
iw() {
	local name=$1 spfx=$2 sdev=$3 addr=$4 cpfx=$5 cdev=$6 sargs=$7 cargs=$8 spid rc=0
	shift 8
	PORT=$((PORT + 2))
	# shellcheck disable=SC2086
	$spfx "$integ" --cm -d "$sdev" --bind "$addr" -p $PORT --timeout "$(scaled 60)" $sargs "$@" \
		>"/tmp/$name.srv" 2>&1 &
	spid=$!
	wait_listen "$spfx" $PORT $spid || { cat "/tmp/$name.srv"; die "$name: server did not start"; }
	# shellcheck disable=SC2086
	$cpfx "$integ" --cm -d "$cdev" -p $PORT --timeout "$(scaled 60)" $cargs "$@" "$addr" \
		>"/tmp/$name.cli" 2>&1 || rc=$?
	wait $spid || { [ $rc = 0 ] && rc=100; }
	[ $rc = 0 ] || { integrity_show "$name"; die "$name: status $rc (100: the server failed)"; }
	log "$name: $(tail -n 1 "/tmp/$name.cli") ($(grep -o '[0-9.]* s, [0-9.]* MB/s' "/tmp/$name.cli"))"
	grep -h 'mix:\|skipped' "/tmp/$name.cli" | sed 's/^/    /' >&2
}

# --- softrnic <-> softrnic ---------------------------------------------------
sr_add iw0 sr0
sr_add iw1 sr1 in_peer
if part self; then
z0=$(zcopy_fpdus)
iw self in_peer iw1 10.0.0.2 "" iw0 "" "" --reuse-sources -n 300 -m 256K -s "$(seed 0x2001)"
iw self_init "" iw0 10.0.0.1 in_peer iw1 "" "" --reuse-sources -n 200 -m 256K \
	-s "$(seed 0x2002)"
z1=$(zcopy_fpdus)
log "    iw0 sent $((z1 - z0)) FPDUs with their payload by reference"
[ "$((z1 - z0))" -gt 0 ] || die "no zero-copy FPDU from iw0 (tx_zcopy_fpdus $z0 -> $z1)"
fi

# --- both ends on iw0 --------------------------------------------------------
part loopback && iw loopback "" iw0 10.0.0.1 "" iw0 "" "" --reuse-sources -n 200 -m 256K \
	-s "$(seed 0x2003)"

# --- netem on sr0: TCP retransmits, the data stays exact ---------------------
if part netem; then
netem_on loss 1%
iw loss in_peer iw1 10.0.0.2 "" iw0 "" "" --reuse-sources -n 400 -m 128K -s "$(seed 0x2004)"
netem_stats
echo Y >$CRC_PARAM
netem_on loss 2%
iw loss_crc in_peer iw1 10.0.0.2 "" iw0 "" "" --reuse-sources -n 300 -m 256K \
	-s "$(seed 0x2008)"
netem_stats
echo N >$CRC_PARAM
netem_on delay 1ms reorder 25% 50%
iw reorder in_peer iw1 10.0.0.2 "" iw0 "" "" --reuse-sources -n 150 -m 128K \
	-s "$(seed 0x2005)"
netem_stats
netem_on duplicate 1%
iw duplicate "" iw0 10.0.0.1 in_peer iw1 "" "" --reuse-sources -n 150 -m 128K \
	-s "$(seed 0x2006)"
netem_stats
netem_off
fi

# --- MPA CRC (softrnic asks for it) ------------------------------------------
if part crc; then
echo Y >$CRC_PARAM
iw crc in_peer iw1 10.0.0.2 "" iw0 "" "" --reuse-sources -n 200 -m 256K -s "$(seed 0x2007)"
echo N >$CRC_PARAM
fi

# --- softrnic <-> siw --------------------------------------------------------
if part siw; then
link_del iw1
siw_load default || die "siw_load"
siw_add siw1 sr1 "$PEER_NS" || die "siw_add siw1"
siw_crc_log_on || die "siw's dynamic debug"
for crc in N Y; do
	echo $crc >$CRC_PARAM
	[ $crc = Y ] && want=y || want=n
	c0=$(siw_rts_crc)
	iw "to_siw_crc$crc" in_peer siw1 10.0.0.2 "" iw0 "$SIW_ARGS" "" -n 200 -m 256K \
		-s "$(seed 0x2010)"
	iw "from_siw_crc$crc" "" iw0 10.0.0.1 in_peer siw1 "" "$SIW_ARGS" -n 200 -m 256K \
		-s "$(seed 0x2011)"
	crc_since "$c0" $want "softrnic <-> siw, softrnic mpa_crc=$crc"
done
echo N >$CRC_PARAM
fi

link_del iw1
link_del siw1
link_del iw0
siw_unload || die "rmmod siw"
unload_softrnic || die "rmmod softrnic"
net_teardown
echo "iwarp_integrity OK"
