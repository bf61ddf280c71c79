#!/bin/bash
# 4096 RC QPs with traffic: softrnic-scale (tests/vm/progs/scale_qps.cpp)
# between roce1 in netns peer and roce0 here creates 4096 QPs on each
# device, connects QP i to the peer's QP i, and has every QP of both ends
# do an RDMA WRITE, a SEND and an RDMA READ per round, every completion
# and every byte checked.  Then both destroy everything: no QP, CQ, MR or
# PD may be left on either device (rdma resource), and the kernel's
# unreclaimable slab and vmalloc use (/proc/meminfo) must come back to
# about where they started.  Then the same with both processes on roce0:
# 8192 QPs on one device, each pair looped back through it.
# timeout: 420
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
userspace_prog scale softrnic-scale
roce_pair_up

NQP=${SCALE_QPS:-4096}
max_qp=$(ibv_devinfo -v -d roce0 | awk '$1 == "max_qp:" { print $2 }')
[ "${max_qp:-0}" -ge $((2 * NQP)) ] || die "roce0 offers max_qp $max_qp, fewer than $((2 * NQP))"

meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
# resources PREFIX DEV: "pd N cq N qp N mr N ..." of DEV (rdma resource)
resources() { $1 rdma resource show "$2" | sed 's/^[0-9]*: [^ ]*: //'; }
res0=$(resources "" roce0) res1=$(resources in_peer roce1)
slab0=$(meminfo SUnreclaim) vm0=$(meminfo VmallocUsed) avail0=$(meminfo MemAvailable)
log "before: roce0 [$res0], roce1 [$res1]; SUnreclaim $slab0 kB, VmallocUsed $vm0 kB"

PORT=18530
# scale_pair NAME WHERE SRV_DEV CLI_DEV: a softrnic-scale pair that must
# pass (WHERE as for pair_ends); its output in /tmp/NAME.{srv,cli}
scale_pair() {
	local name=$1 spfx cpfx addr spid rc=0 t0=$SECONDS
	pair_ends "$2"
	PORT=$((PORT + 1))
	$spfx "$scale" -d "$3" -p $PORT -q "$NQP" --timeout "$(scaled 200)" >"/tmp/$name.srv" 2>&1 &
	spid=$!
	wait_listen "$spfx" $PORT $spid || { cat "/tmp/$name.srv"; die "$name: server did not start"; }
	$cpfx "$scale" -d "$4" -p $PORT -q "$NQP" --timeout "$(scaled 200)" "$addr" >"/tmp/$name.cli" 2>&1 || rc=$?
	wait $spid || { [ $rc = 0 ] && rc=100; }
	sed 's/^/    server: /' "/tmp/$name.srv"
	sed 's/^/    client: /' "/tmp/$name.cli"
	[ $rc = 0 ] || die "$name: QPs, completions or data wrong (status $rc)"
	log "$name: $(tail -n 1 "/tmp/$name.cli"); $((SECONDS - t0)) s in all"
	# The client's reading once both ends had connected all their QPs.
	read -r _ _ _ _ slab _ _ vm _ < <(grep -m1 'kernel memory:' "/tmp/$name.cli")
	log "$name: with the QPs connected: SUnreclaim +$((slab - slab0)) kB, VmallocUsed +$((vm - vm0)) kB"
}

# settled: every object of the runs gone, slab and vmalloc back within
# 6 MiB and 4 MiB (RCU frees QPs and MRs a grace period late).
settled() {
	[ "$(resources "" roce0)" = "$res0" ] && [ "$(resources in_peer roce1)" = "$res1" ] &&
		[ $(($(meminfo SUnreclaim) - slab0)) -lt 6144 ] &&
		[ $(($(meminfo VmallocUsed) - vm0)) -lt 4096 ]
}
check_settled() {
	try_until 30 settled ||
		die "$1: left behind: roce0 [$(resources "" roce0)], roce1 [$(resources in_peer roce1)]," \
			"SUnreclaim $slab0 -> $(meminfo SUnreclaim) kB, VmallocUsed $vm0 -> $(meminfo VmallocUsed) kB"
	log "$1: after: roce0 [$(resources "" roce0)], roce1 [$(resources in_peer roce1)];" \
		"SUnreclaim $(meminfo SUnreclaim) kB, VmallocUsed $(meminfo VmallocUsed) kB," \
		"MemAvailable $avail0 -> $(meminfo MemAvailable) kB"
}

scale_pair scale-pair peer roce1 roce0
check_settled scale-pair
scale_pair scale-loop loop roce0 roce0
check_settled scale-loop
net_teardown
echo "scale_qps OK"
