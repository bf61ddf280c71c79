#!/bin/bash
# A packet that netfilter drops after re-routing it: ip_local_out() frees
# the skb and still returns -EHOSTUNREACH.  roce_xmit() used to free it a
# second time (kernel BUG at mm/slub.c).  Here mangle OUTPUT marks RoCE
# packets and the mark selects a table whose only route is unreachable:
# traffic must stop (retries run out), the kernel stay whole, and traffic
# flow again once the rule is gone.
# timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v iptables >/dev/null || die "iptables not installed (make deps)"
roce_pair_up

iptables -t mangle -A OUTPUT -p udp --dport 4791 -j MARK --set-mark 1 || die "iptables"
"$IP" rule add fwmark 1 table 100 || die "ip rule"
"$IP" route add unreachable default table 100 || die "ip route"
drops0=$(rdma statistic show link roce0/1 | grep -o 'tx_drop_output [0-9]*' | cut -d' ' -f2)
rc=0
run_pair 60 "ibv_rc_pingpong -d roce1 -g $g1 -n 5" \
	"ibv_rc_pingpong -d roce0 -g $g0 -n 5 10.0.0.2" >/tmp/pp.log 2>&1 || rc=$?
grep -q "Failed status transport retry counter exceeded\|status 12\|retry" /tmp/pp.log ||
	{ cat /tmp/pp.log; die "pingpong through a dropping re-route did not fail with retries (status $rc)"; }
drops=$(($(rdma statistic show link roce0/1 | grep -o 'tx_drop_output [0-9]*' | cut -d' ' -f2) - drops0))
log "re-route drop: pingpong failed as it must; tx_drop_output +$drops"
[ "$drops" -gt 0 ] || die "the dropped packets were not counted"

iptables -t mangle -F OUTPUT
"$IP" rule del fwmark 1 table 100
"$IP" route flush table 100
run_pair 60 "ibv_rc_pingpong -d roce1 -g $g1 -n 20" \
	"ibv_rc_pingpong -d roce0 -g $g0 -n 20 10.0.0.2" || die "pingpong after the rule was removed"
in_peer rdma link delete roce1
rdma link delete roce0
net_teardown
echo "roce_reroute_drop OK"
