#!/bin/bash
# kill -9 of either end of an RC transfer in full flow: softrnic-integrity
# between two hosts (roce1 in netns peer, roce0 here) and with both ends
# on one device (roce0).  The surviving end must report the loss and exit
# non-zero within seconds, not hang; the kernel must release every QP,
# CQ and MR of the killed process (and of the survivor once it exits);
# and the same devices must at once carry a byte-exact transfer again.
# timeout: 420
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

integrity_setup
have_softrnic || skip "softrnic.ko not built"
roce_pair_up

# Resources the tool holds anywhere (both namespaces: rdma resource is
# per namespace in netns-exclusive mode, global otherwise).
held() {
	{ rdma resource show qp; in_peer rdma resource show qp; } 2>/dev/null |
		grep -c softrnic-integ
}

none_held() { [ "$(held)" -eq 0 ]; }

# tool_pid PATTERN: the softrnic-integrity process whose command line
# matches PATTERN itself, not a wrapper running it (in_peer's ip netns
# exec forks it: killing the wrapper would leave the tool running).
tool_pid() {
	local p
	for p in $(pgrep -f -- "$1"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = softrnic-integr ] && { echo "$p"; return 0; }
	done
	return 1
}
gone() { ! kill -0 "$1" 2>/dev/null; }

# kill_case NAME WHERE SRV_DEV CLI_DEV VICTIM(server|client)
kill_case() {
	local name=$1 where=$2 sdev=$3 cdev=$4 victim=$5 spfx cpfx addr
	local spid cpid vpid opid t0 rc=0 delay
	INTEGRITY_PORT=$((INTEGRITY_PORT + 1))
	pair_ends "$where"
	rm -f "/tmp/$name.info"
	# Far more operations than fit in the time before the kill.
	$spfx "$integ" -d "$sdev" -p $INTEGRITY_PORT --timeout "$(scaled 120)" -n 1000000 -m 256K \
		-s 0x7a11 >"/tmp/$name.srv" 2>&1 &
	spid=$!
	wait_listen "$spfx" $INTEGRITY_PORT $spid ||
		{ cat "/tmp/$name.srv"; die "$name: server did not start"; }
	$cpfx "$integ" -d "$cdev" -p $INTEGRITY_PORT --timeout "$(scaled 120)" -n 1000000 -m 256K \
		-s 0x7a11 --info "/tmp/$name.info" $addr >"/tmp/$name.cli" 2>&1 &
	cpid=$!
	try_until 30 test -s "/tmp/$name.info" ||
		{ integrity_show "$name"; die "$name: the pair never connected"; }
	# A moment into the flow, different each case.
	delay=0.$((RANDOM % 8 + 2))
	sleep "$delay"
	local srv_pid cli_pid vjob ojob
	srv_pid=$(tool_pid "-p $INTEGRITY_PORT .*-s 0x7a11\$") || die "$name: no server process"
	cli_pid=$(tool_pid "--info /tmp/$name.info") || die "$name: no client process"
	if [ "$victim" = server ]; then
		vpid=$srv_pid opid=$cli_pid vjob=$spid ojob=$cpid
	else
		vpid=$cli_pid opid=$srv_pid vjob=$cpid ojob=$spid
	fi
	kill -0 $opid 2>/dev/null || { integrity_show "$name"; die "$name: the pair ended before the kill"; }
	t0=$SECONDS
	kill -9 $vpid
	wait $vjob 2>/dev/null
	# The survivor notices (its TCP peer is gone, its QP's peer stops
	# answering) and exits with an error, well before its own --timeout.
	try_until 60 gone $opid ||
		{ integrity_show "$name"; die "$name: the surviving end hangs after the kill"; }
	wait $ojob && { integrity_show "$name"; die "$name: the surviving end reports success"; }
	rc=$?
	log "$name: $victim killed after ${delay} s of traffic; the other end exited ($rc) after $((SECONDS - t0)) s"
	try_until 20 none_held ||
		die "$name: QPs left after both ends exited: $(rdma resource show qp)"
	integrity "$name-after" "$where" "$sdev" "$cdev" -n 200 -m 256K -s 0x7a12
}

kill_case server-of-two peer roce1 roce0 server
kill_case client-of-two peer roce1 roce0 client
kill_case server-in-peer init roce0 roce1 server
kill_case server-on-one loop roce0 roce0 server
kill_case client-on-one loop roce0 roce0 client

rdma link delete roce0 || die "delete roce0"
in_peer rdma link delete roce1 || die "delete roce1"
unload_softrnic || die "rmmod softrnic: the killed processes leaked a reference"
net_teardown
echo "fault_kill OK"
