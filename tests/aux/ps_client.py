#!/usr/bin/env python3
# ps_client.py - a client of `ckpt page-server` (src/pageserver.c) that
# says hello without a key as restart does, takes the image it is sent,
# then asks for LEN bytes at OFF, whatever they are, and prints the
# server's answer: "got N bytes" or "refused: status S".
#   ps_client.py HOST PORT IMAGE-NAME OFF LEN
import os, socket, struct, sys

MAGIC, VERSION, GET = 0x53506b63, 1, 1


def read(s, n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            sys.exit('connection closed after %d of %d bytes' % (len(b), n))
        b += c
    return b


host, port, name, off, length = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
s = socket.create_connection((host, port))
s.sendall(struct.pack('<IIII32s128s', MAGIC, VERSION, 0, 0, os.urandom(32), name.encode()))
read(s, 16 + 32 + 128)          # its hello
read(s, 32)                     # its MAC (none: zeros)
s.sendall(bytes(32))            # ours
magic, status, size, nr = struct.unpack('<IIQQ', read(s, 24))
if status:
    sys.exit('no image: status %d' % status)
holes = [struct.unpack('<QQ', read(s, 16)) for _ in range(nr)]
read(s, size - sum(h[1] for h in holes))
s.sendall(struct.pack('<IIQQ', MAGIC, GET, off, length))
magic, status, roff, rlen = struct.unpack('<IIQQ', read(s, 24))
if status:
    print('refused: status %d' % status)
else:
    read(s, rlen)
    print('got %d bytes' % rlen)
