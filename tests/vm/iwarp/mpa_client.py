#!/usr/bin/env python3
"""A hostile MPA initiator for tests/vm/iwarp_cm_faults.sh.

mpa_client.py ADDR PORT CASE: connects over TCP and plays CASE against an
iWARP listener, then prints what the listener did:
  silent    send nothing: the listener must close within its MPA timeout
  garbage   100 bytes that are no MPA Request: closed at once
  bigpd     a Request whose PD_Length is 0xffff: closed at once
  rev3      a Request with revision 3: closed at once
  trunc     half a Request, then nothing: closed by the timeout
  markers   a valid rev 2 Request asking for markers: a Reply with R
Exit status 0 when the listener behaved, 1 otherwise; the time to the
close is printed.
"""
import socket
import struct
import sys
import time

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"


def request(flags=0x10, rev=2, pd=b"", pd_len=None, words=True):
    body = (struct.pack(">HH", 4, 4) if words else b"") + pd
    n = len(body) if pd_len is None else pd_len
    return KEY_REQ + bytes([flags, rev]) + struct.pack(">H", n) + body


def wait_close(s, limit):
    """Seconds until the peer closed (EOF or reset), None if it did not."""
    s.settimeout(0.2)
    t0 = time.monotonic()
    data = b""
    while time.monotonic() - t0 < limit:
        try:
            b = s.recv(4096)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return time.monotonic() - t0, data
        if not b:
            return time.monotonic() - t0, data
        data += b
    return None, data


def main():
    addr, port, case = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    s = socket.create_connection((addr, port), timeout=5)
    if case == "silent":
        t, _ = wait_close(s, 30)
        ok = t is not None and t >= 5
    elif case == "trunc":
        s.sendall(request()[:10])
        t, _ = wait_close(s, 30)
        ok = t is not None and t >= 5
    elif case in ("garbage", "bigpd", "rev3"):
        msg = {"garbage": bytes(range(100)),
               "bigpd": request(pd_len=0xFFFF),
               "rev3": request(rev=3)}[case]
        s.sendall(msg)
        t, _ = wait_close(s, 5)
        ok = t is not None
    elif case == "markers":
        s.sendall(request(flags=0x90))
        t, data = wait_close(s, 10)
        ok = (t is not None and len(data) >= 20 and data[:16] == KEY_REP
              and data[16] & 0x20)
        print("reply: %s" % data[:24].hex())
    else:
        sys.exit("unknown case " + case)
    print("%s: %s after %s s" % (case, "closed" if t is not None else
                                 "still open", "%.1f" % t if t else "-"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
