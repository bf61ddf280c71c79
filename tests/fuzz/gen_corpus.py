#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write the fuzzer's seed corpus: one well-formed RoCEv2 packet (BTH to
end of UDP payload, ICRC included) per opcode softrnic parses, plus a
few padded variants.  The ICRC is computed over the same synthetic
IPv4/UDP header that fuzz_roce_parse.cpp uses.  Run from anywhere:
    tests/fuzz/gen_corpus.py   (rewrites tests/fuzz/corpus/)
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")

RETH = struct.pack(">QII", 0x00007F0000001000, 0x00000A01, 64)
AETH = struct.pack(">I", 0x1F000005)
NAK = struct.pack(">I", 0x60000006)
ATOMIC = struct.pack(">QIQQ", 0x7F0000002000, 0x00000B02, 1, 0)
ATOMIC_ACK = struct.pack(">Q", 0x1122334455667788)
IMM = struct.pack(">I", 0xDEADBEEF)
IETH = struct.pack(">I", 0x00000C03)
DETH = struct.pack(">II", 0x80010000, 0x000001)
FETH = struct.pack(">I", 0x00000011)

# name: (opcode, extension headers, payload length)
SEEDS = {
    "rc_send_first": (0x00, b"", 256),
    "rc_send_middle": (0x01, b"", 256),
    "rc_send_last": (0x02, b"", 13),
    "rc_send_last_imm": (0x03, IMM, 7),
    "rc_send_only": (0x04, b"", 5),
    "rc_send_only_empty": (0x04, b"", 0),
    "rc_send_only_imm": (0x05, IMM, 32),
    "rc_write_first": (0x06, RETH, 256),
    "rc_write_middle": (0x07, b"", 256),
    "rc_write_last": (0x08, b"", 1),
    "rc_write_last_imm": (0x09, IMM, 2),
    "rc_write_only": (0x0A, RETH, 64),
    "rc_write_only_imm": (0x0B, RETH + IMM, 3),
    "rc_read_request": (0x0C, RETH, 0),
    "rc_read_resp_first": (0x0D, AETH, 256),
    "rc_read_resp_middle": (0x0E, b"", 256),
    "rc_read_resp_last": (0x0F, AETH, 9),
    "rc_read_resp_only": (0x10, AETH, 64),
    "rc_ack": (0x11, AETH, 0),
    "rc_nak_seq": (0x11, NAK, 0),
    "rc_atomic_ack": (0x12, AETH + ATOMIC_ACK, 0),
    "rc_compare_swap": (0x13, ATOMIC, 0),
    "rc_fetch_add": (0x14, ATOMIC, 0),
    "rc_send_last_inv": (0x16, IETH, 6),
    "rc_send_only_inv": (0x17, IETH, 8),
    "rc_flush": (0x1C, FETH + RETH, 0),
    "rc_atomic_write": (0x1D, RETH, 8),
    "ud_send_only": (0x64, DETH, 256),
    "ud_send_only_imm": (0x65, DETH + IMM, 11),
    "cnp": (0x81, bytes(16), 0),
}

# fuzz_roce_parse.cpp's synthetic IPv4 header
IP = bytes([0x45, 0, 0, 0, 0, 1, 0x40, 0, 0x40, 0x11, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2])


def icrc(pkt_wo_icrc):
    udp_len = 8 + len(pkt_wo_icrc) + 4
    udp = struct.pack(">HHHH", 0xC000, 4791, udp_len, 0)
    ip = bytearray(IP)
    ip[1] = ip[8] = ip[10] = ip[11] = 0xFF
    mudp = bytearray(udp)
    mudp[6] = mudp[7] = 0xFF
    bth = bytearray(pkt_wo_icrc)
    bth[4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(mudp) + bytes(bth))
    return struct.pack("<I", crc)


def packet(seq, opcode, ext, plen):
    pad = (4 - plen % 4) % 4
    se_pad = (0x80 if opcode in (0x03, 0x05, 0x09, 0x0B) else 0) | pad << 4
    becn = 0x40 if opcode == 0x81 else 0
    ackreq = 0x80 if opcode < 0x0D or 0x13 <= opcode <= 0x1D else 0
    psn = 0 if opcode == 0x81 else (0xFFFFF0 + seq) & 0xFFFFFF
    bth = struct.pack(">BBHII", opcode, se_pad, 0xFFFF, becn << 24 | 0x000011,
                      ackreq << 24 | psn)
    payload = bytes((i * 7 + seq) & 0xFF for i in range(plen)) + bytes(pad)
    body = bth + ext + payload
    return body + icrc(body)


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        os.unlink(os.path.join(OUT, old))
    for seq, (name, (opcode, ext, plen)) in enumerate(sorted(SEEDS.items())):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(packet(seq, opcode, ext, plen))


if __name__ == "__main__":
    main()
