#!/bin/bash
# A hostile iWARP peer after a correct MPA exchange
# (tests/vm/iwarp/fpdu_client.py): a bad CRC, a WRITE to an unknown STag,
# a wrong MSN, a wrong queue number, an oversize ULPDU_Length, an unknown
# RDMAP opcode, random bytes, half an FPDU.  Each time softrnic's end
# must answer with a TERMINATE where RFC 5040/5041/5044 name one, close
# the connection, count it, let the server process end, and keep
# serving real clients; the kernel log stays clean.
# iw0 on sr0 (10.0.0.1), iw1 on sr1 in netns peer (10.0.0.2).
# timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/iwarp/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v rping >/dev/null || skip "rdmacm-utils not installed"
iwarp_pair_up
PEER="python3 $(dirname "$0")/iwarp/fpdu_client.py"
OUT=/tmp/iwinject

listening() { in_peer rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*:$1\b"; }
stat_of() { in_peer rdma statistic show link iw1/1 | grep -o "$1 [0-9]*" | cut -d' ' -f2; }

port=7400
for c in badcrc badstag badmsn badqn opcode biglen random halfway; do
	port=$((port + 1))
	in_peer rping -s -a 10.0.0.2 -p $port -C 1 >"$OUT.srv" 2>&1 &
	spid=$!
	retry_until 10 listening $port
	$PEER 10.0.0.2 $port $c || die "$c: the server did not answer as it must"
	# its QP in ERR, the server ends (rping reports the error)
	try_until 20 sh -c "! kill -0 $spid 2>/dev/null" ||
		{ cat "$OUT.srv"; kill -9 $spid; die "$c: the rping server still runs"; }
	wait $spid 2>/dev/null
done
in_peer rdma statistic show link iw1/1
[ "$(stat_of rx_crc_errors)" -ge 1 ] || die "rx_crc_errors not counted"
[ "$(stat_of terminates_sent)" -ge 5 ] || die "fewer TERMINATEs counted than sent"
[ "$(stat_of connections_lost)" -ge 8 ] || die "lost connections not counted"
[ "$(in_peer rdma resource show qp | grep -c iw1)" = 0 ] || die "QPs left on iw1"

# a real client is still served
in_peer rping -s -a 10.0.0.2 -p 7499 -C 2 >"$OUT.srv" 2>&1 &
spid=$!
retry_until 10 listening 7499
timeout 60 rping -c -a 10.0.0.2 -p 7499 -C 2 -V || die "rping after the hostile peers"
wait $spid || { cat "$OUT.srv"; die "rping server"; }

rdma link delete iw0 || die "delete iw0"
in_peer rdma link delete iw1 || die "delete iw1"
net_teardown
echo "iwarp_inject OK"
