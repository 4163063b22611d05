#!/usr/bin/env python3
"""cow_frames.py PID... - how many pages of the first private anonymous
area of at least 16 MiB in the first PID map the same physical frame in
every PID (pagemap, as root): the pages still copy-on-write shared."""
import struct
import sys

PFN = (1 << 55) - 1
PRESENT = 1 << 63


def area(pid):
    for line in open(f'/proc/{pid}/maps'):
        f = line.split()
        a, b = (int(x, 16) for x in f[0].split('-'))
        if b - a >= 16 << 20 and f[1].endswith('p') and len(f) == 5:
            return a, b
    sys.exit(f'pid {pid}: no 16 MiB private area')


def frames(pid, a, b):
    with open(f'/proc/{pid}/pagemap', 'rb') as f:
        f.seek(a // 4096 * 8)
        raw = f.read((b - a) // 4096 * 8)
    return [e & PFN if e & PRESENT else None
            for e in struct.unpack(f'<{len(raw) // 8}Q', raw)]


pids = sys.argv[1:]
a, b = area(pids[0])
cols = [frames(p, a, b) for p in pids]
print(sum(1 for row in zip(*cols) if row[0] and all(x == row[0] for x in row)))
