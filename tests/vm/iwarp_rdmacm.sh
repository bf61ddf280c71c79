#!/bin/bash
# softrnic's iWARP wire (MPA/DDP/RDMAP over TCP) through RDMA CM (iw_cm):
# the tools of tests/vm/iwarp/lib.sh (rping -V, ucmatose,
# rdma_server/rdma_client, ib_{write,read,send}_bw -R, each end's output
# checked for the data it moved) in four parts:
#   self        iw0 (sr0) <-> iw1 (sr1, netns peer), server on iw1, then
#               a few with the server on iw0
#   loopback    both ends on iw0
#   to-siw      client on iw0, server on siw1 (Linux's siw, sr1, netns peer)
#   from-siw    client on siw1, server on iw0
# timeout: 900
# The siw parts run once per siw build (tests/kmod/siw: default, crc,
# nocrc), and every part once per softrnic MPA CRC mode.  Each part runs
# every tool in one CRC mode (self and from-siw with CRC on, loopback and
# to-siw with it off; the siw parts with siw's default build); the other
# combinations run rdma_client, which is enough for the CRC check
# (SOFTRNIC_IWARP_FULL=1, or a tool list: the tools everywhere).  After
# each siw tool the QPs' CRC as siw logged it entering RTS must be what
# the pair of policies gives (RFC 5044: CRC is used if either end asks):
#   softrnic \ siw   default   crc    nocrc
#   on               CRC       CRC    refused (both directions)
#   off              no CRC    CRC*   no CRC
# * when siw connects; softrnic -> siw (crc build) goes without CRC:
#   siw 6.1's mpa_crc_required makes it ask for CRC and refuse a reply
#   without, but as the responder it accepts a request without CRC and
#   answers without (siw_cm.c: the CRC bit is only set in the reply when
#   the request had it), so nothing asks.
# "on": softrnic asks for (and requires) CRC; "off": it does not ask,
# and follows a peer that does.  A refused pair must fail at once with
# an error, in both directions (rdma_client), and nothing else runs.
# Then a connect to a port nobody listens on must fail at once.
#
# siw -> softrnic with a perftest -R server on iw0 works because
# softrnic binds a wildcard listener to its netdev, as siw does its own:
# 6.1's rdma_cm hands the wildcard listen to siw1 as well (see
# Documentation/wire-iwarp.md, "Listening").  Knobs, for running
# subsets by hand (scripts/vm/run-suite passes SOFTRNIC_* through):
#   SOFTRNIC_IWARP_PARTS="self loopback to-siw from-siw"
#   SOFTRNIC_IWARP_TOOLS="rping ucmatose rdma_client write_bw read_bw send_bw"
#                                 (and rstream: rsockets, -T v; optional)
#   SOFTRNIC_IWARP_FULL=1         every tool in every combination
#   SOFTRNIC_IWARP_SIW="default crc nocrc"      siw builds for the siw parts
#   SOFTRNIC_IWARP_CRC="on off"   softrnic CRC modes; each is set by
#   SOFTRNIC_IWARP_CRC_CMD        a command run with the mode as its last
#                                 argument; by default softrnic's module
#                                 parameter mpa_crc is written (on/off)
#                                 when softrnic has it; without either,
#                                 SOFTRNIC_IWARP_CRC must be the one mode
#                                 softrnic has built in (default: off)
#   SOFTRNIC_IWARP_LINK_TYPE=iwarp  the link type for iw0/iw1; "siw" runs
#                                 the whole suite with siw in softrnic's
#                                 place (a dry run of the suite itself)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/iwarp/lib.sh"

PARTS=${SOFTRNIC_IWARP_PARTS:-self loopback to-siw from-siw}
TOOLS=${SOFTRNIC_IWARP_TOOLS:-$IWARP_TOOLS_ALL}
FULL=${SOFTRNIC_IWARP_FULL:-${SOFTRNIC_IWARP_TOOLS:+1}}
SIWS=${SOFTRNIC_IWARP_SIW:-default crc nocrc}
CRC_CMD=${SOFTRNIC_IWARP_CRC_CMD:-}
LTYPE=${SOFTRNIC_IWARP_LINK_TYPE:-iwarp}
# softrnic's own knob: module parameter mpa_crc (kernel/iwarp/iwarp_cm.c,
# "ask peers for MPA CRC32c (on if either end asks)", default off)
MPA_CRC_PARAM=/sys/module/softrnic/parameters/mpa_crc
crc_param() { echo "$1" >"$MPA_CRC_PARAM"; }
if [ -z "$CRC_CMD" ] && [ "$LTYPE" = iwarp ] && modinfo -p softrnic 2>/dev/null | grep -q '^mpa_crc:'; then
	CRC_CMD=crc_param
fi
if [ -n "$CRC_CMD" ]; then
	CRCS=${SOFTRNIC_IWARP_CRC:-on off}
else
	CRCS=${SOFTRNIC_IWARP_CRC:-off}
	[ "$(wc -w <<<"$CRCS")" = 1 ] ||
		die "SOFTRNIC_IWARP_CRC='$CRCS' needs SOFTRNIC_IWARP_CRC_CMD to switch between modes"
fi

for c in $CRCS; do
	case $c in on | off) ;; *) die "SOFTRNIC_IWARP_CRC: '$c' is neither on nor off" ;; esac
done
case " $PARTS " in
*" to-siw "* | *" from-siw "* | *" siw "*)
	for v in $SIWS; do
		have_siw "$v" || die "build/kmod-siw/$v/siw.ko missing: make testprogs builds it"
	done ;;
esac
if [ "$LTYPE" = iwarp ]; then
	have_softrnic || skip "softrnic.ko not built"
else
	[ "$LTYPE" = siw ] || die "SOFTRNIC_IWARP_LINK_TYPE: iwarp or siw"
	log "dry run: siw in softrnic's place"
	CRC_CMD=
fi
command -v rping >/dev/null && command -v ib_write_bw >/dev/null ||
	die "rdmacm-utils and perftest are not installed (scripts/deps)"

net_setup
modprobe -r rdma_rxe 2>/dev/null
[ "$LTYPE" = iwarp ] && { load_softrnic || die "modprobe softrnic"; }

# links_clear: no iWARP link left on sr0 or sr1 (one per netdev).
links_clear() {
	local d
	for d in iw0 iw1 siw1; do
		[ -e "/sys/class/infiniband/$d" ] || continue
		rdma link delete "$d" 2>/dev/null || in_peer rdma link delete "$d" ||
			die "rdma link delete $d"
	done
}

# sr_add DEV NETDEV [NETNS]: softrnic's iWARP link (or siw's in a dry run)
sr_add() {
	if [ "$LTYPE" = siw ]; then
		siw_add "$@" || die "siw_add $*"
		return
	fi
	if [ -n "${3:-}" ]; then
		in_peer rdma link add "$1" type iwarp netdev "$2"
	else
		rdma link add "$1" type iwarp netdev "$2"
	fi || die "rdma link add $1 type iwarp netdev $2 ${3:+(netns $3)}"
	retry_until 10 port_active "$1"
	ibv_devinfo -d "$1" | grep -Eq 'transport:[[:space:]]+iWARP' || die "$1 is not iWARP"
}

port_active() { grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null; }

# crc_set MODE: softrnic's CRC mode, when there is a command for it
crc_set() {
	[ -n "$CRC_CMD" ] || return 0
	log "softrnic MPA CRC: $1 ($CRC_CMD $1)"
	# shellcheck disable=SC2086,SC2046
	$CRC_CMD "$1" || die "SOFTRNIC_IWARP_CRC_CMD $1 failed"
}

# crc_expect SIW CRC PART: y, n or refused, from the table above
crc_expect() {
	case $1/$2/$3 in
	crc/off/to-siw) echo n ;;
	crc/*) echo y ;;
	nocrc/on/*) echo refused ;;
	nocrc/off/*) echo n ;;
	default/on/*) echo y ;;
	default/off/*) echo n ;;
	esac
}

# main_crc PART: the CRC mode in which PART runs every tool (the
# header), or the first mode there is if that one does not run
main_crc() {
	local want=off
	case $1 in self | from-siw) want=on ;; esac
	case " $CRCS " in *" $want "*) echo $want ;; *) echo "${CRCS%% *}" ;; esac
}

# tools_for PART CRC [SIW]: the tools one combination runs
tools_for() {
	if [ -n "$FULL" ] || { [ "$2" = "$(main_crc "$1")" ] && [ "${3:-default}" = default ]; }; then
		echo "$TOOLS"
	else
		echo rdma_client
	fi
}

# siw_part WHAT SRV_PFX CLI_PFX SRV_ADDR SIW CRC: the tools between iw0
# and siw1, server at SRV_ADDR (part: $part)
siw_part() {
	local w=$1 s=$2 c=$3 a=$4 v=$5 crc=$6 want c0
	want=$(crc_expect "$v" "$crc" "$part")
	# in a dry run both ends are siw of one build: both ask for CRC or
	# neither does
	[ "$LTYPE" = siw ] && want=$(crc_expect "$v" off from-siw)
	c0=$(siw_rts_crc)
	if [ "$want" = refused ]; then
		cm_refused "$w: rdma_server/rdma_client" "$s" "$c" 7471 "rdma_server -s $a -p 7471" \
			"rdma_client -s $a -p 7471"
		crc_since "$c0" none "$w"
		return
	fi
	# shellcheck disable=SC2086,SC2046
	iwarp_suite "$s" "$c" "$a" "$w" $(tools_for "$part" "$crc" "$v")
	crc_since "$c0" "$want" "$w"
}

for crc in $CRCS; do
	crc_set "$crc"
	for part in $PARTS; do
		case $part in
		self)
			links_clear
			sr_add iw0 sr0
			sr_add iw1 sr1 "$PEER_NS"
			# shellcheck disable=SC2086,SC2046
			iwarp_suite in_peer "" 10.0.0.2 "softrnic <-> softrnic, crc $crc" \
				$(tools_for self "$crc")
			[ "$crc" = "$(main_crc self)" ] &&
				iwarp_suite "" in_peer 10.0.0.1 \
					"softrnic <-> softrnic, server on iw0, crc $crc" rping rdma_client ;;
		loopback)
			links_clear
			sr_add iw0 sr0
			# shellcheck disable=SC2086,SC2046
			iwarp_suite "" "" 10.0.0.1 "one softrnic device, crc $crc" \
				$(tools_for loopback "$crc") ;;
		to-siw | from-siw)
			for v in $SIWS; do
				links_clear
				siw_load "$v" || die "siw_load $v"
				sr_add iw0 sr0
				siw_add siw1 sr1 "$PEER_NS" || die "siw_add siw1"
				siw_crc_log_on || die "siw's dynamic debug"
				if [ $part = to-siw ]; then
					siw_part "softrnic -> siw ($v build), crc $crc" in_peer "" 10.0.0.2 "$v" "$crc"
				else
					siw_part "siw ($v build) -> softrnic, crc $crc" "" in_peer 10.0.0.1 "$v" "$crc"
				fi
			done ;;
		*) die "SOFTRNIC_IWARP_PARTS: part '$part'?" ;;
		esac
	done
done

# a connect to a port nobody listens on: refused (TCP RST), at once
links_clear
sr_add iw0 sr0
sr_add iw1 sr1 "$PEER_NS"
log "connect to a port nobody listens on"
start=${EPOCHREALTIME/./}
timeout 30 rdma_client -s 10.0.0.2 -p 9999 >"$CM_OUT.cli" 2>&1 && die "rdma_client to nobody connected"
ms=$(((${EPOCHREALTIME/./} - start) / 1000))
log "    refused after $ms ms: $(tail -n 1 "$CM_OUT.cli")"
[ "$ms" -lt 5000 ] || die "connect to nobody took $ms ms"

links_clear
siw_unload || die "rmmod siw"
[ "$LTYPE" = iwarp ] && { unload_softrnic || die "rmmod softrnic"; }
net_teardown
echo "iwarp_rdmacm OK"
