#!/usr/bin/env python3
"""pgquery.py - the least of PostgreSQL's v3 protocol, for programs.sh
(no psql here): usage: pgquery.py SOCKET QUERY...; prints each query's
rows as a list of lists of strings; exits 1 on an error."""
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def msg(t, b): return t + struct.pack("!I", len(b) + 4) + b
body = struct.pack("!I", 196608) + b"user\0postgres\0database\0postgres\0\0"
s.sendall(struct.pack("!I", len(body) + 4) + body)
def read_until(kind):
    out = []
    buf = b""
    while True:
        while len(buf) < 5: buf += s.recv(65536)
        t = buf[:1]; n = struct.unpack("!I", buf[1:5])[0]
        while len(buf) < 1 + n: buf += s.recv(65536)
        body, buf = buf[5:1 + n], buf[1 + n:]
        if t == b"E": print("ERROR", body); sys.exit(1)
        if t == b"D":
            cnt = struct.unpack("!H", body[:2])[0]; off = 2; row = []
            for _ in range(cnt):
                l = struct.unpack("!i", body[off:off+4])[0]; off += 4
                row.append(body[off:off+l].decode()); off += l
            out.append(row)
        if t == kind: return out
read_until(b"Z")
for q in sys.argv[2:]:
    s.sendall(msg(b"Q", q.encode() + b"\0"))
    print(read_until(b"Z"))
