#!/bin/bash
# Unmodified TCP programs over rsockets (LD_PRELOAD of librdmacm's
# librspreload): netcat (netcat-traditional's nc) copies 16 MiB of random
# data (checksums must match, the copy is timed), softrnic <-> softrnic
# between two namespaces, both ends on one device, and softrnic <->
# rdma_rxe both ways.  The data must really go over RDMA: no TCP socket
# on the data port while it runs (the listener is an RDMA CM id), and the
# softrnic device's byte counters move by at least the amount copied.
# timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
PRELOAD=$(ls /usr/lib/*/rsocket/librspreload.so 2>/dev/null | head -n 1)
[ -n "$PRELOAD" ] || die "librspreload.so not installed (librdmacm1)"
command -v nc.traditional >/dev/null || die "nc.traditional not installed (scripts/deps)"
roce_pair_up

SIZE=$((16 << 20))
head -c "$SIZE" /dev/urandom >/tmp/rs.src
SUM=$(sha256sum </tmp/rs.src)

# rs_listening PREFIX PORT: an RDMA CM id listens on PORT there.
rs_listening() {
	$1 rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr [^ ]*:$2\b"
}

# no_tcp PREFIX PORT: no TCP socket of any state on PORT there.
no_tcp() {
	[ -z "$($1 ss -Htan "( sport = :$2 or dport = :$2 )")" ]
}

# bytes DEV PREFIX: tx + rx bytes of softrnic device DEV.
bytes() { echo $(($(counter "$1" tx_bytes "$2") + $(counter "$1" rx_bytes "$2"))); }

# rs_run SRV_PFX CLI_PFX PORT "SERVER CMD" "CLIENT CMD": both under
# librspreload, the client (stdin from $RS_IN) once the server's CM id
# listens on PORT and while no TCP socket is on PORT; both must succeed.
# The server's stdout goes to /tmp/rs.srv.
rs_run() {
	local s=$1 c=$2 port=$3 srv=$4 cli=$5 spid rc=0
	# shellcheck disable=SC2086
	$s env LD_PRELOAD="$PRELOAD" timeout 120 $srv >/tmp/rs.srv 2>/tmp/rs.srv.err </dev/null &
	spid=$!
	for ((i = 0; i < 300; i++)); do
		rs_listening "$s" "$port" && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	rs_listening "$s" "$port" || rc=101
	no_tcp "$s" "$port" || { $s ss -tan; rc=102; }
	# shellcheck disable=SC2086
	[ $rc = 0 ] && { $c env LD_PRELOAD="$PRELOAD" timeout 120 $cli >/tmp/rs.cli 2>&1 <"${RS_IN:-/dev/null}" || rc=$?; }
	wait "$spid" || { [ $rc = 0 ] && rc=100; }
	no_tcp "$s" "$port" && no_tcp "$c" "$port" || { [ $rc = 0 ] && rc=103; }
	if [ $rc != 0 ]; then
		sed 's/^/    server: /' /tmp/rs.srv.err
		sed 's/^/    client: /' /tmp/rs.cli
		return $rc
	fi
	retry_until 20 eval "! rs_listening '$s' $port"
}

# copy SRV_PFX CLI_PFX SRV_ADDR WHAT DEV DEV_PFX: nc sends the file from
# the client to the server; the copy must match, DEV's counters move.
copy() {
	local s=$1 c=$2 a=$3 w=$4 d=$5 dp=$6 b0 moved t0 us
	log "$w: nc, $SIZE bytes"
	b0=$(bytes "$d" "$dp")
	t0=${EPOCHREALTIME/./}
	# the client quits 1 s after its stdin ends, which closes the stream
	RS_IN=/tmp/rs.src rs_run "$s" "$c" 5001 "nc.traditional -l -s $a -p 5001" \
		"nc.traditional -q 1 $a 5001" || die "$w: nc: status $?"
	us=$((${EPOCHREALTIME/./} - t0 - 1000000))
	moved=$(($(bytes "$d" "$dp") - b0))
	[ "$(sha256sum </tmp/rs.srv)" = "$SUM" ] ||
		die "$w: nc: the copy differs ($(stat -c %s /tmp/rs.srv) bytes arrived)"
	log "$w: copy matches, $((SIZE / us)) MB/s; $d counted $moved bytes"
	[ "$moved" -ge "$SIZE" ] || die "$w: only $moved bytes went through $d"
}

copy in_peer "" 10.0.0.2 "softrnic <-> softrnic" roce1 in_peer
copy "" "" 10.0.0.1 "one device" roce0 ""

rxe_instead_of_roce0
copy in_peer "" 10.0.0.2 "rxe -> softrnic" roce1 in_peer
copy "" in_peer 10.0.0.1 "softrnic -> rxe" roce1 in_peer
rdma link delete rxe0
in_peer rdma link delete roce1
modprobe -r rdma_rxe
net_teardown
echo "roce_rsockets OK"
