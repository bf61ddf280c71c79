#!/bin/bash
# UD semantics on one device, both QPs in one process (the loopback path),
# IPv4 and IPv6 GIDs: the GRH area, Q_Key checks and the controlled Q_Key,
# length errors, SRQ, SGEs (softrnic-udsem, tests/vm/progs/ud_semantics.cpp).
# Dropped datagrams are counted; the kernel log stays clean.
# timeout: 300
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
build=${SOFTRNIC_USERSPACE_BUILD:-$SOFTRNIC_ROOT/build/userspace}
UDSEM=$build/softrnic-udsem
[ -x "$UDSEM" ] || die "$UDSEM not built (make userspace)"
[ -n "${SOFTRNIC_USERSPACE_BUILD:-}" ] && export RDMAV_DRIVERS=$build/provider/libsoftrnic

roce_pair_up

q0=$(counter roce0 rx_drop_bad_qkey)
"$UDSEM" -d roce0 || die "UD semantics, IPv4"
wait_gid g6 roce0 "$GID6_0"
"$UDSEM" -d roce0 -6 || die "UD semantics, IPv6"
q=$(($(counter roce0 rx_drop_bad_qkey) - q0))
log "rx_drop_bad_qkey +$q"
[ "$q" = 2 ] || die "expected 2 datagrams dropped for their Q_Key, counted $q"
rdma statistic show link roce0/1
rdma link delete roce0
in_peer rdma link delete roce1
net_teardown
echo "roce_ud_semantics OK"
