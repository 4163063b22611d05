"""ipcns.py - the content of the ipc namespace it runs in, for
tests/cases/ipcns.sh.

  ipcns.py make   make what the test checkpoints: a SysV message queue
                  (made by uid 1000, given to 1001, mode 0640) holding
                  four messages, an empty private one, a semaphore set of
                  three values, a POSIX queue holding four messages of
                  three priorities (owned by 1003:1004, mode 0620), a
                  SysV segment no one attaches holding two words, and
                  changed sysctls
  ipcns.py show   print all of it, one canonical text (times and pids
                  left out: the kernel's own); the POSIX queue's messages
                  are received and sent back in order
"""
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT, IPC_NOWAIT, MSG_COPY = 0o1000, 0o4000, 0o40000
GETALL, SETALL = 13, 17
O_RDWR, O_CREAT, O_NONBLOCK = 0o2, 0o100, 0o4000
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.msgrcv.restype = ctypes.c_ssize_t
libc.mq_receive.restype = ctypes.c_ssize_t


class MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long),
                ("pad", ctypes.c_long * 4)]


def ok(ret, what):
    if ret < 0:
        e = ctypes.get_errno()
        sys.exit("ipcns.py: %s: %s" % (what, os.strerror(e)))
    return ret


def put(name, value):
    with open("/proc/sys/" + name, "w") as f:
        f.write(value)


def msgsnd(q, mtype, text):
    buf = ctypes.create_string_buffer(8 + len(text) + 1)
    ctypes.memmove(buf, mtype.to_bytes(8, "little") + text, 8 + len(text))
    ok(libc.msgsnd(q, buf, len(text), IPC_NOWAIT), "msgsnd")


def make():
    put("kernel/msgmax", "9000")
    put("kernel/sem", "250 32000 40 128")
    put("fs/mqueue/msg_max", "20")
    put("kernel/msg_next_id", "7")
    os.seteuid(1000)
    q = ok(libc.msgget(0x1234, IPC_CREAT | 0o600), "msgget")
    os.seteuid(0)
    for t, s in ((3, b"first"), (1, b"second, longer"), (3, b""), (2, b"fourth")):
        msgsnd(q, t, s)
    ok(libc.msgget(0, 0o604), "msgget private")
    s = ok(libc.semget(0x4321, 3, IPC_CREAT | 0o660), "semget")
    vals = (ctypes.c_ushort * 3)(5, 0, 32767)
    ok(libc.semctl(s, 0, SETALL, vals), "SETALL")
    put("kernel/shm_next_id", "3")
    m = ok(libc.shmget(0x5678, 10000, IPC_CREAT | 0o644), "shmget")
    p = libc.shmat(m, None, 0)
    ctypes.memmove(p + 100, b"hello", 5)
    ctypes.memmove(p + 9000, b"world", 5)
    libc.shmdt(ctypes.c_void_p(p))
    a = MqAttr(0, 5, 64, 0)
    fd = ok(libc.mq_open(b"/ckq", O_CREAT | O_RDWR, 0o620, ctypes.byref(a)), "mq_open")
    for prio, d in ((1, b"a"), (5, b"bb"), (1, b"ccc"), (0, b"")):
        ok(libc.mq_send(fd, d, len(d), prio), "mq_send")
    os.fchown(fd, 1003, 1004)
    os.fchmod(fd, 0o620)
    os.close(fd)
    set_msq_owner(q, 1001, 0o640)


def set_msq_owner(q, uid, mode):
    # struct msqid_ds begins with struct ipc_perm: key, uid, gid, cuid,
    # cgid (4 bytes each), mode
    buf = ctypes.create_string_buffer(256)
    ok(libc.msgctl(q, 2, buf), "IPC_STAT")     # IPC_STAT
    ctypes.memmove(ctypes.addressof(buf) + 4, uid.to_bytes(4, "little"), 4)
    ctypes.memmove(ctypes.addressof(buf) + 20, mode.to_bytes(2, "little"), 2)
    ok(libc.msgctl(q, 1, buf), "IPC_SET")      # IPC_SET


def table(name, cols):
    with open("/proc/sysvipc/" + name) as f:
        head = f.readline().split()
        rows = [dict(zip(head, line.split())) for line in f]
    return [[r[c] for c in cols] for r in rows]


def show():
    out = []
    for s in ("kernel/msgmax", "kernel/msgmnb", "kernel/sem", "kernel/shmmni",
              "kernel/shm_rmid_forced", "kernel/msg_next_id",
              "fs/mqueue/msg_max", "fs/mqueue/msgsize_max", "fs/mqueue/queues_max"):
        with open("/proc/sys/" + s) as f:
            out.append("%s %s" % (s, " ".join(f.read().split())))
    for r in sorted(table("msg", ("msqid", "key", "perms", "cbytes", "qnum", "uid", "gid",
                                  "cuid", "cgid"))):
        msgs = []
        buf = ctypes.create_string_buffer(8 + 9000)
        for i in range(int(r[4])):
            n = ok(libc.msgrcv(int(r[0]), buf, 9000, i, MSG_COPY | IPC_NOWAIT), "MSG_COPY")
            msgs.append("%d:%s" % (int.from_bytes(buf.raw[:8], "little"),
                                   buf.raw[8:8 + n].decode()))
        out.append("msq " + " ".join(r) + ": " + " ".join(msgs))
    for r in sorted(table("sem", ("semid", "key", "perms", "nsems", "uid", "gid", "cuid",
                                  "cgid"))):
        vals = (ctypes.c_ushort * int(r[3]))()
        ok(libc.semctl(int(r[0]), 0, GETALL, vals), "GETALL")
        out.append("sem " + " ".join(r) + ": " + " ".join(str(v) for v in vals))
    for r in sorted(table("shm", ("shmid", "key", "perms", "size", "nattch", "uid", "gid"))):
        p = libc.shmat(int(r[0]), None, 0o10000)   # SHM_RDONLY
        words = ctypes.string_at(p + 100, 5) + b" " + ctypes.string_at(p + 9000, 5)
        libc.shmdt(ctypes.c_void_p(p))
        out.append("shm " + " ".join(r) + ": " + words.decode())
    a = MqAttr()
    fd = ok(libc.mq_open(b"/ckq", O_RDWR | O_NONBLOCK), "mq_open")
    ok(libc.mq_getattr(fd, ctypes.byref(a)), "mq_getattr")
    st = os.fstat(fd)
    msgs, buf, prio = [], ctypes.create_string_buffer(a.msgsize), ctypes.c_uint()
    while True:
        n = libc.mq_receive(fd, buf, a.msgsize, ctypes.byref(prio))
        if n < 0:
            break
        msgs.append((prio.value, buf.raw[:n]))
    for p, d in msgs:
        ok(libc.mq_send(fd, d, len(d), p), "mq_send back")
    os.close(fd)
    out.append("mq /ckq maxmsg %d msgsize %d mode %o uid %d gid %d: %s" % (
        a.maxmsg, a.msgsize, st.st_mode & 0o777, st.st_uid, st.st_gid,
        " ".join("%d:%s" % (p, d.decode()) for p, d in msgs)))
    print("\n".join(out))


if __name__ == "__main__":
    {"make": make, "show": show}[sys.argv[1]]()
