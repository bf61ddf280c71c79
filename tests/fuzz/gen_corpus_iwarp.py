#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write the seeds of fuzz_iwarp_stream: MPA FPDU streams (after the MPA
Reply) of every DDP/RDMAP opcode, with CRC on and off, with markers, with
the RFC 7306 opcodes, and one with a bad CRC.  Each file is one flags byte
(bit 0 CRC, 1 markers, 2 caller folds the CRC, 3 RFC 7306, 4 encoder mode),
one seed byte for the fuzzer's splits, then the stream (or, in encoder
mode, ULPDUs as 2-byte length and bytes).  The CRC32c and the markers are
computed here, independently of kernel/proto.  Run from anywhere:
    tests/fuzz/gen_corpus_iwarp.py   (rewrites tests/fuzz/corpus-iwarp/)
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus-iwarp")


def crc32c(data):
    c = 0xFFFFFFFF
    for x in data:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def tagged(op, stag, to, payload, last=True):
    return bytes([0x81 | (0x40 if last else 0), 0x40 | op]) + \
        struct.pack(">IQ", stag, to) + payload


def untagged(op, qn, msn, mo, rest, rsvd=0, last=True):
    return bytes([0x01 | (0x40 if last else 0), 0x40 | op]) + \
        struct.pack(">IIII", rsvd, qn, msn, mo) + rest


def fpdu(ulpdu, crc):
    pad = (-(2 + len(ulpdu))) & 3
    body = struct.pack(">H", len(ulpdu)) + ulpdu + bytes(pad)
    return body, (crc32c(body) if crc else 0)


def stream(ulpdus, crc, markers):
    out = bytearray()
    for u in ulpdus:
        body, _ = fpdu(u, crc)
        start = len(out)
        wire = bytearray()
        for b in body:  # body bytes with markers at stream offsets % 512
            if markers and (start + len(wire)) % 512 == 0:
                wire += struct.pack(">HH", 0, start + len(wire) - start)
            wire.append(b)
        if markers and (start + len(wire)) % 512 == 0:
            wire += struct.pack(">HH", 0, len(wire))
        wire += struct.pack("<I", crc32c(bytes(wire)) if crc else 0)
        out += wire
    return bytes(out)


READ_REQ = struct.pack(">IQIIQ", 0x111, 0x2000, 4096, 0x222, 0x3000)
TERM = struct.pack(">IH", 0x11018000 | 0x4000, 17) + tagged(0, 0x1234, 0x10, b"")
ATOMIC = struct.pack(">IIIQQQQQ", 1, 7, 0x333, 0x4000, 2, 0, 1, 0)
BASIC = [
    untagged(3, 0, 1, 0, b"hello"),
    tagged(0, 0x1234, 0x1000, bytes(range(100))),
    untagged(1, 1, 1, 0, READ_REQ),
    tagged(2, 0x222, 0x3000, bytes(range(200)), last=False),
    tagged(2, 0x222, 0x30C8, bytes(37)),
    untagged(4, 0, 2, 0, b"inv", rsvd=0x0A0B),
    untagged(5, 0, 3, 0, bytes(300)),
    untagged(6, 0, 9, 0, b"se+inv", rsvd=0x0C0D),
    untagged(3, 0, 4, 0, bytes(600), last=False),
    untagged(3, 0, 4, 600, b"tail"),
    untagged(7, 2, 1, 0, TERM),
]
EXT = [
    tagged(0, 0x1234, 0x1000, b"data"),
    untagged(8, 0, 5, 0, bytes(range(8))),
    untagged(8, 0, 6, 0, bytes(8), rsvd=1),
    untagged(3, 0, 6, 0, b"send with imm"),
    untagged(10, 1, 2, 0, ATOMIC),
    untagged(11, 3, 2, 0, struct.pack(">IQ", 7, 41)),
    untagged(9, 0, 7, 0, bytes(8)),
]

SEEDS = {
    "basic_crc": (0x01, BASIC, True, False),
    "basic_nocrc": (0x00, BASIC, False, False),
    "basic_crc_caller": (0x05, BASIC, True, False),
    "markers_crc": (0x03, BASIC + BASIC, True, True),
    "markers_nocrc": (0x02, BASIC, False, True),
    "ext_crc": (0x09, EXT, True, False),
    "ext_markers": (0x0B, EXT + BASIC, True, True),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (flags, ulpdus, crc, markers) in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(bytes([flags, len(name)]) + stream(ulpdus, crc, markers))
    # encoder mode (flags bit 4): ULPDUs as 2-byte length + bytes
    enc = b"".join(struct.pack(">H", len(u)) + u for u in BASIC + EXT)
    for flags in (0x11, 0x13, 0x12):
        with open(os.path.join(OUT, "encode_%02x" % flags), "wb") as f:
            f.write(bytes([flags, 7]) + enc)
    bad = bytearray(stream(BASIC, True, False))
    bad[-1] ^= 1
    with open(os.path.join(OUT, "bad_crc"), "wb") as f:
        f.write(bytes([0x01, 3]) + bad)


if __name__ == "__main__":
    main()
