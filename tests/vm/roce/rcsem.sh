# shellcheck shell=bash
# softrnic-rcsem (tests/vm/progs/rc_semantics.cpp) between two processes;
# source after lib.sh and roce/lib.sh.

userspace_prog RCSEM softrnic-rcsem

rcsem_port=18600
# rcsem NAME WHERE SRV_DEV CLI_DEV [CLIENT ARGS...]: the responder (server)
# on SRV_DEV, the requester (client) on CLI_DEV; WHERE as for pair_ends
# (roce/lib.sh).  Output in /tmp/NAME.{srv,cli}, shown if it fails.
# Status: the client's, or 100 if only the server failed.
rcsem() {
	local name=$1 where=$2 sdev=$3 cdev=$4 spfx cpfx addr spid rc=0 sargs=()
	shift 4
	rcsem_port=$((rcsem_port + 1))
	pair_ends "$where"
	[ -n "${RCSEM_SERVER_ARGS:-}" ] && read -ra sargs <<<"$RCSEM_SERVER_ARGS"
	$spfx "$RCSEM" -d "$sdev" -p $rcsem_port --timeout "${RCSEM_TIMEOUT:-150}" "${sargs[@]}" \
		>"/tmp/$name.srv" 2>&1 &
	spid=$!
	wait_listen "$spfx" $rcsem_port $spid || {
		cat "/tmp/$name.srv"
		die "$name: server did not start"
	}
	$cpfx "$RCSEM" -d "$cdev" -p $rcsem_port --timeout "${RCSEM_TIMEOUT:-150}" "$@" $addr \
		>"/tmp/$name.cli" 2>&1 || rc=$?
	wait $spid || { [ $rc = 0 ] && rc=100; }
	return $rc
}

rcsem_show() {
	sed 's/^/    server: /' "/tmp/$1.srv"
	sed 's/^/    client: /' "/tmp/$1.cli"
}

# rcsem_pass NAME WHERE SRV_DEV CLI_DEV [ARGS...]: a run that must pass
rcsem_pass() {
	local rc=0
	rcsem "$@" || rc=$?
	[ $rc = 0 ] || { rcsem_show "$1"; die "$1: failed (status $rc)"; }
	grep -h "NOTE\|async event\|counted\|after [0-9.]* s" "/tmp/$1.cli" | sed 's/^/    /' >&2
	log "$1: $(tail -n 1 "/tmp/$1.cli")"
}
