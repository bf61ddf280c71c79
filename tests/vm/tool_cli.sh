#!/bin/bash
# The softrnic CLI: list, show, stats, add (rdma's form and the short one),
# del, JSON output of every command that prints, and the bash completion.
# timeout: 180
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

net_setup
modprobe softrnic
softrnic add roce0 type roce netdev sr0 || die "softrnic add roce0 type roce netdev sr0"
softrnic add iw0 iwarp sr0 || die "softrnic add iw0 (short form)"
in_peer softrnic add roce1 netdev sr1 type roce || die "add roce1, keywords swapped"
wait_gid g0 roce0 "$GID4_0"
wait_gid g1 roce1 "$GID4_1"

out=$(softrnic list)
echo "$out"
grep -E "^roce0\s+roce\s+sr0\s+ACTIVE\s+fe80:\S+\s+$g0\s+::ffff:10\.0\.0\.1\s+/dev/infiniband/uverbs" <<<"$out" ||
	die "roce0 row (want IPv4 GID index $g0 ::ffff:10.0.0.1)"
grep -E '^iw0\s+iwarp\s+sr0\s+ACTIVE\s+\S+\s+-\s+-\s+/dev/infiniband/uverbs' <<<"$out" || die "iw0 row"
rdma link show | grep -q 'roce0/1' || die "rdma does not see what softrnic added"

# JSON: the same facts, parsed by a real JSON parser.
softrnic -j list | python3 -c '
import json, sys
devs = {d["ifname"]: d for d in json.load(sys.stdin)}
r = devs["roce0"]
assert r["type"] == "roce" and r["netdev"] == "sr0" and r["state"] == "ACTIVE", r
assert r["ipv4_gid"] == "::ffff:10.0.0.1" and r["ipv4_gid_index"] == int(sys.argv[1]), r
assert devs["iw0"]["ipv4_gid"] is None, devs["iw0"]
' "$g0" || die "softrnic -j list"
[ "$(softrnic -p list | head -c 2)" = "[$(printf '\n')" ] || die "-p is not indented"
softrnic -p list | python3 -c 'import json, sys; json.load(sys.stdin)' || die "softrnic -p list is not JSON"

out=$(softrnic show roce0) || die "show roce0"
echo "$out"
head -1 <<<"$out" | grep -Eq '^roce0: type roce netdev sr0 state ACTIVE physical_state LINK_UP driver softrnic uverbs /dev/infiniband/uverbs' ||
	die "show roce0: device line"
grep -Eq "^    gid $g0 0000:0000:0000:0000:0000:ffff:0a00:0001 RoCE v2 ipv4 ::ffff:10\.0\.0\.1$" <<<"$out" ||
	die "show roce0: IPv4 GID line"
softrnic -j show | python3 -c '
import json, sys
devs = {d["ifname"]: d for d in json.load(sys.stdin)}
# roce1 too: RDMA devices are shared by all namespaces (the default mode)
assert set(devs) == {"roce0", "iw0", "roce1"}, devs.keys()
g = [x for x in devs["roce0"]["gids"] if x["ipv4"] == "::ffff:10.0.0.1" and x["type"] == "RoCE v2"]
assert g and g[0]["index"] == int(sys.argv[1]), devs["roce0"]["gids"]
' "$g0" || die "softrnic -j show"
softrnic show nosuch 2>&1 | grep -q "no RDMA device named 'nosuch'" || die "show nosuch"

# Counters move with traffic, as rdma statistic reports them.
before=$(counter roce0 tx_packets)
run_pair 60 "ibv_rc_pingpong -d roce1 -g $g1 -n 20" "ibv_rc_pingpong -d roce0 -g $g0 -n 20 10.0.0.2" ||
	die "pingpong"
out=$(softrnic stats roce0) || die "stats roce0"
echo "$out"
tx=$(awk '{ for (i = 3; i < NF; i += 2) if ($i == "tx_packets") print $(i + 1) }' <<<"$out")
[ -n "$tx" ] && [ "$tx" -ge $((before + 20)) ] || die "stats roce0: tx_packets $tx, was $before"
assert_eq "$(counter roce0 tx_packets)" "$tx" "rdma statistic and softrnic stats agree"
grep -q '^link roce0/1 ' <<<"$out" || die "stats line format"
softrnic -j stats | python3 -c '
import json, sys
s = {d["ifname"]: d for d in json.load(sys.stdin)}
assert sorted(s) == ["iw0", "roce0", "roce1"], s
assert s["roce0"]["port"] == 1 and s["roce0"]["tx_packets"] >= int(sys.argv[1]), s
assert s["iw0"]["port"] == 1 and s["iw0"]["tx_fpdus"] == 0, s
' "$tx" || die "softrnic -j stats"
# The iWARP wire keeps counters of its own (wire-iwarp.md, softrnic(7)).
softrnic stats iw0 | grep -q '^link iw0/1 tx_fpdus 0 ' || die "stats iw0"
softrnic -j --version | python3 -c 'import json, sys; assert json.load(sys.stdin)["version"]' ||
	die "-j --version"
softrnic help | grep -q 'add NAME type roce|iwarp netdev NETDEV' || die "help"

# Only our devices, unless --all.
modprobe rdma_rxe && rdma link add rxe0 type rxe netdev sr0 && {
	softrnic list | grep -q rxe0 && die "list shows rxe0 without --all"
	softrnic list --all | grep -q rxe0 || die "list --all lacks rxe0"
	softrnic show | grep -q rxe0 && die "show lists rxe0 without --all"
	softrnic show rxe0 | grep -q 'driver rxe' || die "show rxe0"
	rdma link delete rxe0
	modprobe -r rdma_rxe
}

# Bash completion, as installed.
comp=$SOFTRNIC_ROOT/userspace/tool/softrnic.bash-completion
[ -r /usr/share/bash-completion/bash_completion ] || die "bash-completion not installed (make deps)"
{
	# shellcheck disable=SC2016
	words=$(bash -c '. /usr/share/bash-completion/bash_completion; . "$1"
		c() { COMP_LINE=$1; COMP_POINT=${#1}; read -ra COMP_WORDS <<<"$1"
			COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _softrnic
			echo "${COMPREPLY[*]}"; }
		c "softrnic add x type r"; c "softrnic s"; c "softrnic del ro"
		c "softrnic add x type roce n"' _ "$comp")
	echo "$words"
	assert_eq "$(sed -n 1p <<<"$words")" "roce" "completion of add x type r"
	assert_eq "$(sed -n 2p <<<"$words")" "show stats" "completion of s"
	# roce1 too: the peer namespace shares the RDMA devices
	assert_eq "$(sed -n 3p <<<"$words")" "roce0 roce1" "completion of del ro"
	assert_eq "$(sed -n 4p <<<"$words")" "netdev" "completion of add x type roce n"
}

softrnic del roce0 || die "softrnic del roce0"
softrnic delete iw0 || die "softrnic delete iw0"
in_peer softrnic del roce1 || die "del roce1"
out=$(softrnic del roce0 2>&1) && die "deleting a missing device succeeded"
echo "$out"
softrnic list | grep -q roce0 && die "roce0 still listed"
net_teardown
echo "tool OK"
