#!/usr/bin/env python3
"""rpc_client.py - a client of `ckpt swrk FD` for the tests: CRIU's RPC
messages encoded here by hand (the protobuf wire format is small), so
that the tests need no generated Python.  Hostile on purpose: it sends
what it is told, garbage included, and reports what came back.

usage: rpc_client.py CKPT hostile DIR    the fixed hostile cases (DIR: an
                                        empty directory, left empty)
       rpc_client.py - seeds DIR        the messages below as files, seeds
                                        for fuzz/rpc_fuzz.c
       rpc_client.py CKPT fuzz N     N random and mutated messages
Exit 0 when every case got an error response or a clean close, and ckpt
exited by itself, non-zero only where that was expected, never by a
signal or a sanitizer's exit code (99)."""
import os, random, socket, subprocess, sys

def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

def field(num, val):
    if isinstance(val, bool) or isinstance(val, int):
        return varint(num << 3) + varint(int(val) & ((1 << 64) - 1))
    if isinstance(val, str):
        val = val.encode()
    return varint(num << 3 | 2) + varint(len(val)) + val

def req(type_, opts=None, **kw):
    m = field(1, type_)
    if opts is not None:
        m += field(2, opts)
    if "notify_success" in kw:
        m += field(3, kw["notify_success"])
    return m

def opts(images_dir_fd=-1, **fields):
    """criu_opts: images_dir_fd (1) and FIELD=(NUMBER, VALUE) pairs."""
    m = field(1, images_dir_fd)
    for num, val in fields.values():
        m += field(num, val)
    return m

def parse(buf):
    """The top-level fields of a message: {number: [values]}."""
    out, i = {}, 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, i = read_varint(buf, i)
        elif wt == 2:
            n, i = read_varint(buf, i)
            val, i = buf[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        out.setdefault(num, []).append(val)
    return out

def read_varint(buf, i):
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i

DUMP, RESTORE, CHECK, PRE_DUMP, NOTIFY, FEATURE_CHECK, VERSION = 1, 2, 3, 4, 6, 9, 10

class Swrk:
    def __init__(self, ckpt):
        self.me, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.p = subprocess.Popen([ckpt, "swrk", str(other.fileno())], pass_fds=[other.fileno()],
                                  stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
        other.close()
        self.me.settimeout(60)

    def ask(self, msg):
        """Send msg; the response's fields, or None on a clean close."""
        try:
            self.me.send(msg)
            r = self.me.recv(1 << 20)
        except (ConnectionResetError, BrokenPipeError):
            return None
        return parse(r) if r else None

    def end(self):
        self.me.close()
        err = self.p.stderr.read().decode(errors="replace")
        rc = self.p.wait(60)
        if rc < 0 or rc == 99 or "Sanitizer" in err or "runtime error" in err:
            sys.exit("ckpt swrk died: exit %d\n%s" % (rc, err))
        return rc

def error_or_close(r, what):
    if r is not None and r.get(2) != [0]:
        sys.exit("%s: not an error response: %r" % (what, r))
    return r

def msg_of(r):
    return r[9][0].decode() if r and 9 in r else ""

def one(ckpt, msg, what):
    s = Swrk(ckpt)
    r = error_or_close(s.ask(msg), what)
    s.end()
    return r

def hostile(ckpt, d):
    # the good ones first: what runc asks before it dumps
    s = Swrk(ckpt)
    r = s.ask(req(VERSION))
    v = parse(r[10][0])
    if r[1] != [VERSION] or r[2] != [1] or v[1] != [4] or v[2] != [2]:
        sys.exit("VERSION: %r" % r)
    r = s.ask(req(FEATURE_CHECK) + field(5, field(1, True) + field(2, True)))
    f = parse(r[8][0])
    if r[2] != [1] or f.get(1) != [1] or f.get(2) != [0]:  # memory tracking, no lazy pages
        sys.exit("FEATURE_CHECK: %r" % r)
    if s.ask(req(CHECK))[2] != [1]:
        sys.exit("CHECK failed")
    if s.end() != 0:
        sys.exit("swrk: not 0 after good requests")
    good = req(DUMP, opts(-1, pid=(2, 1), leave_running=(3, True)))
    cases = [
        (b"\xff\xff\xff\xff\xff", "garbage"),
        (good[:len(good) - 3], "truncated DUMP"),
        (good[:1], "a lone key"),
        (field(2, opts(-1)), "no type (required)"),
        (req(DUMP, b"\x08"), "opts truncated"),
        (req(DUMP, field(2, 1)), "opts without images_dir_fd (required)"),
        (req(77), "unknown request type"),
        (varint(1 << 3) + b"\x80" * 12, "a varint too long"),
        (field(1, 1) + varint(2 << 3 | 2) + varint(1 << 40), "a length past the end"),
        (b"\x00" * (150 << 10), "150 KiB, over the 128 KiB limit"),
    ]
    for msg, what in cases:
        one(ckpt, msg, what)
    # refusals that name what is refused, nothing done
    named = [
        (req(PRE_DUMP, opts(-1)), "images_dir"),
        (req(DUMP, opts(-1, images_dir=(68, d), pid=(2, os.getpid()), leave_running=(3, True), parent_img=(14, "/p"))), "parent_img"),
        (req(DUMP, opts(-1, images_dir=(68, d), pid=(2, os.getpid()), leave_running=(3, True), parent_img=(14, "../p"))), "parent image"),
        (req(DUMP, opts(-1, images_dir=(68, d), pid=(2, os.getpid()), leave_running=(3, True), lazy=(48, True))), "lazy_pages"),
        (req(DUMP, opts(-1, pid=(2, os.getpid()), leave_running=(3, True))), "images_dir"),
        (req(DUMP, opts(9999, pid=(2, os.getpid()), leave_running=(3, True))), "images_dir_fd 9999"),
        (req(RESTORE, opts(-1, images_dir=(68, "/nonexistent-ckpt-dir"))), "/nonexistent-ckpt-dir"),
        (req(DUMP, opts(-1, images_dir=(68, d), pid=(2, os.getpid()), leave_running=(3, True), log_file=(10, "../x"))), "log_file"),
    ]
    for msg, what in named:
        r = one(ckpt, msg, what)
        if what not in msg_of(r):
            sys.exit("%s: the error does not name it: %r" % (what, msg_of(r)))
        print("refused:", msg_of(r))
    if os.listdir(d):
        sys.exit("refused requests left files: %r" % os.listdir(d))
    bad_answer(ckpt, d)

def bad_answer(ckpt, d):
    """A DUMP whose first notification gets garbage back: one error
    response, the DUMP's, and the process it was to dump runs on."""
    kid = subprocess.Popen(["sleep", "60"])
    s = Swrk(ckpt)
    r = s.ask(req(DUMP, opts(-1, images_dir=(68, d), pid=(2, kid.pid), leave_running=(3, True),
                             notify_scripts=(12, True))))
    if not r or r.get(1) != [NOTIFY]:
        sys.exit("DUMP with notify_scripts: no notification first: %r" % r)
    r = error_or_close(s.ask(b"\xff\xff\xff"), "garbage for an answer")
    if r is None or r.get(1) != [DUMP]:
        sys.exit("garbage for an answer: not the DUMP's error: %r" % r)
    s.me.settimeout(2)
    try:
        extra = s.me.recv(1 << 20)
    except socket.timeout:
        extra = b""
    if extra:
        sys.exit("garbage for an answer: a second response %r" % parse(extra))
    s.end()
    if kid.poll() is not None:
        sys.exit("the process to dump did not run on")
    kid.kill()
    kid.wait()
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))

def seed_messages():
    return [req(VERSION), req(CHECK), req(FEATURE_CHECK) + field(5, field(1, True)),
             req(NOTIFY, notify_success=True),
             req(RESTORE, opts(-1, images_dir=(68, "/nonexistent-ckpt-dir"), root=(13, "/x"),
                               inh=(27, field(1, "extRootNetNS") + field(2, 7)),
                               mnt=(23, field(1, "/data") + field(2, "/srv/data")),
                               ext=(37, "mnt[/usr]:/usr"))),
             req(DUMP, opts(-1, images_dir=(68, "/nonexistent-ckpt-dir"), pid=(2, 999999),
                            tcp=(5, True), empty=(38, 0x40000000), cfg=(51, "/nonexistent.conf"),
                            mnt=(23, field(1, "/proc/kcore") + field(2, "/dev/null")),
                            frz=(44, "/nonexistent-cgroup")))]

def fuzz(ckpt, n):
    rnd = random.Random(int(os.environ.get("SEED", "1")))
    seeds = seed_messages()
    for i in range(n):
        m = bytearray(rnd.choice(seeds))
        for _ in range(rnd.randint(1, 4)):
            k = rnd.randrange(4)
            if k == 0 and m:
                m[rnd.randrange(len(m))] = rnd.randrange(256)
            elif k == 1 and m:
                del m[rnd.randrange(len(m)):]
            elif k == 2:
                m[rnd.randrange(len(m) + 1):0] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
            else:
                m += rnd.choice(seeds)
        s = Swrk(ckpt)
        s.ask(bytes(m))
        s.end()

if __name__ == "__main__":
    if sys.argv[2] == "seeds":
        for i, m in enumerate(seed_messages()):
            open(os.path.join(sys.argv[3], "seed%d" % i), "wb").write(m)
        sys.exit(0)
    if sys.argv[2] == "hostile":
        hostile(sys.argv[1], sys.argv[3])
    else:
        fuzz(sys.argv[1], int(sys.argv[3]))
    print("ok")
