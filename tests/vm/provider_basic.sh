#!/bin/bash
# libsoftrnic answers through libibverbs: context, query_device(_ex),
# query_port, alloc/dealloc PD, on both device types.
# timeout: 120
. "$(dirname "$0")/lib.sh"

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
/usr/bin/python3 - <<'PY' || die "pyverbs checks failed"
import pyverbs.enums as e
from pyverbs.device import Context, get_device_list
from pyverbs.pd import PD

def device(name):
    for d in get_device_list():
        n = d.name.decode() if isinstance(d.name, bytes) else d.name
        if n == name:
            return d
    raise AssertionError(name + " not listed")

def check(name, transport, node_type):
    ctx = Context(name=name)
    attr = ctx.query_device()
    ex = ctx.query_device_ex()
    port = ctx.query_port(1)
    dev = device(name)
    assert dev.transport_type == transport, (name, dev.transport_type)
    assert dev.node_type == node_type, (name, dev.node_type)
    assert attr.max_qp == 65536 and attr.max_cqe == 65536, attr
    assert attr.max_sge == 32, attr.max_sge
    assert ex.orig_attr.max_mr_size == 1 << 40
    assert port.state == e.IBV_PORT_ACTIVE, port.state
    assert port.link_layer == e.IBV_LINK_LAYER_ETHERNET, port.link_layer
    assert port.gid_tbl_len >= 1
    pds = [PD(ctx) for _ in range(100)]
    for pd in pds:
        pd.close()
    ctx.close()
    print(name, "ok: max_qp", attr.max_qp, "active_mtu", port.active_mtu)

check("roce0", e.IBV_TRANSPORT_IB, e.IBV_NODE_CA)
check("iw0", e.IBV_TRANSPORT_IWARP, e.IBV_NODE_RNIC)
PY
rdma resource show pd 2>&1 | head -3
rdma link delete roce0
rdma link delete iw0
net_teardown
echo "provider basic OK"
