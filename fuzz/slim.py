#!/usr/bin/python3
"""slim.py IMG OUT - IMG with each PAGES record cut to its first page (and
no PAGES_REF), so
that a fuzzer's input is the records that matter, not megabytes of page
data every run must checksum.  The result is a sound image (an area's
pages not in the image read as zeros)."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tests'))
import forge  # noqa: E402

PAGE = 4096


def slim(rec):
    p = rec.payload
    if len(p) < 24:
        return
    vma_start, npages, nr_runs, pad = struct.unpack_from('<QQII', p, 0)
    head = 24 + 16 * nr_runs
    if nr_runs < 1 or head + pad + PAGE > len(p):
        return
    addr, _ = struct.unpack_from('<QQ', p, 24)
    n = bytearray(struct.pack('<QQII', vma_start, 1, 1, 0))
    n += struct.pack('<QQ', addr, 1)
    n += p[head + pad:head + pad + PAGE]
    rec.payload = n
    rec.orig_off = -1           # serialize() recomputes its pad


ZF_KEEP = 64 << 10


def pieces_slim(recs):
    """The pieces of compressed records (--compress): a record's pieces
    kept all, if they are small, or dropped all (a record of pages
    dropped is an area that reads as zeros)."""
    out, group, size = [], [], 0
    for r in recs:
        if not r.flags:
            out.append(r)
            continue
        total, off, raw_len = struct.unpack_from('<QQI', r.payload, 0)
        group.append(r)
        size += len(r.payload)
        if off + raw_len == total:
            if size <= ZF_KEEP:
                out += group
            group, size = [], 0
    return out


def main():
    with open(sys.argv[1], 'rb') as f:
        recs = forge.parse(f.read())
    # a child's pages shared with its parent name the parent's pages,
    # cut away: they go too
    # and each process keeps the pages of two areas: every PAGES costs a
    # page of data and up to a page of alignment
    out, kept = [], 0
    recs = pieces_slim(recs)
    for r in recs:
        if r.flags:         # a compressed record's piece: kept whole
            out.append(r)
            continue
        if r.type == forge.TYPES['TASK']:
            kept = 0
        if r.type == forge.TYPES['PAGES_REF']:
            continue
        if r.type == forge.TYPES['PAGES']:
            kept += 1
            if kept > 2:
                continue
            slim(r)
        out.append(r)
    recs = out
    with open(sys.argv[2], 'wb') as f:
        f.write(forge.serialize(recs))


if __name__ == '__main__':
    main()
