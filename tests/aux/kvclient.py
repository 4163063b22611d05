#!/usr/bin/env python3
"""kvclient.py - the clients of tests/aux/kvserver.c, outside its tree.

usage: kvclient.py PORT SERVER_OUT [keepalive]
Connects A (a small receive buffer, so the server's bytes for it wait in
the server's send queue), B, H and E; sends "SET x 42" and "GET x" on B,
and "SET e 9" and "GET e" on E, whose side it then shuts down, before
the server reads anything; prints SENT once the server is READY
(then the server may be checkpointed, killed and restarted: this side
sends nothing until it answers).  Then checks: A's bytes arrive exactly
once, in order, then TAIL; B's two answers; H's bye and EOF, and a SET
sent on half-closed H; E's answers and EOF; a new client is served.  Prints PASS, or FAIL
and exits 1; a reset or a timeout is a failure.
With "keepalive", B sends a keepalive probe after each second idle: a
peer that talks while the server is gone (the network lock's test).
"""
import re
import socket
import sys
import time


def pattern(n):
    # kvserver's: byte i of each 64 KiB block is i * 7 + i // 256
    block = bytes((i * 7 + i // 256) & 0xff for i in range(1 << 16))
    return (block * (n // len(block) + 1))[:n]


def read_until(s, end, limit=1 << 24):
    got = b""
    while not got.endswith(end):
        chunk = s.recv(1 << 16)
        if not chunk:
            raise EOFError("EOF after %d bytes" % len(got))
        got += chunk
        if len(got) > limit:
            raise ValueError("too many bytes")
    return got


def server_line(path, key):
    for _ in range(2000):
        m = re.search(r"^%s ?(\d*)$" % key, open(path).read(), re.M)
        if m:
            return m.group(1)
        time.sleep(0.01)
    raise TimeoutError("server never said " + key)


STEP = ["connecting"]


def step(what):
    STEP[0] = what


def connect(port, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    return s


def main():
    port, srv_out = int(sys.argv[1]), sys.argv[2]
    a = connect(port, 4096)
    b = connect(port)
    if sys.argv[3:] == ["keepalive"]:
        b.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        b.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
        b.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 1)
        b.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 60)
    h = connect(port)
    e = connect(port)
    b.sendall(b"SET x 42\nGET x\n")
    e.sendall(b"SET e 9\nGET e\n")
    e.shutdown(socket.SHUT_WR)
    bulk = int(server_line(srv_out, "BULK"))
    server_line(srv_out, "READY")
    print("SENT", flush=True)

    fails = []
    step("B's answers")
    got = b.recv(64)
    while got.count(b"\n") < 2:
        got += b.recv(64)
    if got != b"OK\n42\n":
        fails.append("B's queued requests: %r" % got)
    step("H's bye")
    if read_until(h, b"bye\n") != b"bye\n" or h.recv(16) != b"":
        fails.append("H: no bye and EOF")
    h.sendall(b"SET h 5\n")        # into the server's half-closed side
    step("A's bytes")
    data = read_until(a, b"TAIL\n")
    if len(data) != bulk + 5 or data[:bulk] != pattern(bulk):
        fails.append("A: %d bytes, %d expected, or not the pattern" % (len(data) - 5, bulk))
    step("GET h")
    for _ in range(100):
        b.sendall(b"GET h\n")
        got = read_until(b, b"\n")
        if got == b"5\n":
            break
        time.sleep(0.02)
    if got != b"5\n":
        fails.append("SET on half-closed H not seen: %r" % got)
    step("E's answers")
    got = read_until(e, b"9\n")
    if got != b"OK\n9\n" or e.recv(16) != b"":
        fails.append("E (half-closed by us): %r, then no EOF" % got)
    step("a new client")
    c = connect(port)
    c.sendall(b"SET y 7\nGET y\nGET x\n")
    got = b""
    while got.count(b"\n") < 3:
        got += read_until(c, b"\n")
    if got != b"OK\n7\n42\n":
        fails.append("new client: %r" % got)
    b.sendall(b"SHUTDOWN\n")
    for f in fails:
        print("FAIL", f)
    print("FAIL" if fails else "PASS", flush=True)
    return 1 if fails else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:          # a reset, a timeout, an early EOF
        print("FAIL", type(e).__name__, e, "at", STEP[0], flush=True)
        sys.exit(1)
