#!/usr/bin/env python3
"""A hostile iWARP peer for tests/vm/iwarp_inject.sh: it connects to a
listening rdma_cm server (rping -s), completes the MPA exchange like a
real initiator (rev 2, IRD/ORD 1/1, CRC asked) and then sends one crafted
FPDU stream:

  badcrc    a SEND whose CRC is wrong
  badstag   an RDMA WRITE to an STag nobody registered
  badmsn    a SEND with MSN 7 where 1 is due
  badqn     a SEND to queue 9
  biglen    an FPDU whose ULPDU_Length is 0xffff
  opcode    an RDMAP opcode 0xd
  random    400 random bytes
  halfway   half an FPDU, then nothing (the server's end must not hang)

fpdu_client.py ADDR PORT CASE prints what came back: a TERMINATE (its
layer, type and code) and whether the server closed the connection.
Exit 0 when the server closed (and, but for random and halfway, sent a
TERMINATE first), 1 otherwise.
"""
import os
import socket
import struct
import sys
import time

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"


def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = crc32c_table()


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def fpdu(ulpdu, bad_crc=False):
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * ((-len(body)) % 4)
    crc = crc32c(body)
    if bad_crc:
        crc ^= 0x1
    # RFC 5044: the CRC field goes on the wire in network order of the
    # CRC32c value (RFC 3385/3720 byte order, as iSCSI's digests)
    return body + struct.pack("<I", crc)


def untagged(op, qn, msn, mo, payload, last=True):
    ddp = (0x40 if last else 0) | 0x01
    return bytes([ddp, 0x40 | op]) + struct.pack(">IIII", 0, qn, msn, mo) + payload


def tagged(op, stag, to, payload, last=True):
    ddp = 0x80 | (0x40 if last else 0) | 0x01
    return bytes([ddp, 0x40 | op]) + struct.pack(">IQ", stag, to) + payload


def mpa_connect(s):
    req = KEY_REQ + bytes([0x50, 2]) + struct.pack(">HHH", 4, 1, 1)
    s.sendall(req)
    rep = b""
    while len(rep) < 20:
        b = s.recv(20 - len(rep))
        if not b:
            sys.exit("no MPA Reply")
        rep += b
    if rep[:16] != KEY_REP or rep[16] & 0x20:
        sys.exit("bad or rejecting Reply: " + rep.hex())
    pd_len = struct.unpack(">H", rep[18:20])[0]
    while pd_len:
        b = s.recv(pd_len)
        if not b:
            sys.exit("Reply cut off")
        pd_len -= len(b)
    return (rep[16] & 0x40) != 0


def read_back(s, limit):
    """Bytes the server sent until it closed; None if it did not close."""
    s.settimeout(0.2)
    t0 = time.monotonic()
    data = b""
    while time.monotonic() - t0 < limit:
        try:
            b = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return data, True
        if not b:
            return data, True
        data += b
    return data, False


def find_terminate(data):
    """(layer, etype, code) of the first TERMINATE FPDU, or None."""
    off = 0
    while off + 4 <= len(data):
        ulen = struct.unpack(">H", data[off:off + 2])[0]
        u = data[off + 2:off + 2 + ulen]
        if len(u) >= 2 and (u[1] & 0x0F) == 0x7 and len(u) >= 22:
            layer_etype, code = u[18], u[19]
            return layer_etype >> 4, layer_etype & 0xF, code
        off += 2 + ulen + ((-(2 + ulen)) % 4) + 4
    return None


def main():
    addr, port, case = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    s = socket.create_connection((addr, port), timeout=5)
    crc = mpa_connect(s)
    pl = b"softrnic-inject!"
    if case == "badcrc":
        if not crc:
            sys.exit("the server did not take CRC")
        s.sendall(fpdu(untagged(3, 0, 1, 0, pl), bad_crc=True))
    elif case == "badstag":
        s.sendall(fpdu(tagged(0, 0x7E57AB00, 0x1000, pl)))
    elif case == "badmsn":
        s.sendall(fpdu(untagged(3, 0, 7, 0, pl)))
    elif case == "badqn":
        s.sendall(fpdu(untagged(3, 9, 1, 0, pl)))
    elif case == "biglen":
        # a header of zeros (DDP version 0) behind the length: it is
        # refused before the receiver waits for 64 KiB; random bytes were
        # now and then a header it takes, and then it rightly waits
        s.sendall(struct.pack(">H", 0xFFFF) + bytes(64))
    elif case == "opcode":
        s.sendall(fpdu(untagged(0xD, 0, 1, 0, pl)))
    elif case == "random":
        s.sendall(os.urandom(400))
    elif case == "halfway":
        s.sendall(fpdu(untagged(3, 0, 1, 0, pl))[:12])
    else:
        sys.exit("unknown case " + case)
    data, closed = read_back(s, 5 if case != "halfway" else 3)
    term = find_terminate(data)
    print("%s: crc %s, %d bytes back, TERMINATE %s, %s" % (
        case, "on" if crc else "off", len(data),
        "layer %d type %d code 0x%02x" % term if term else "none",
        "closed" if closed else "still open"))
    if case == "halfway":
        # the server waits for the rest; closing our end must end it
        s.close()
        sys.exit(0)
    ok = closed and (term is not None or case in ("random", "biglen"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
