#!/usr/bin/python3
"""forge.py - take a ckpt image apart into records and put it back together
with every checksum recomputed, so that tests can make images that pass the
checksum checks and reach the semantic validation (tests/bad_images.sh).

Record layout (src/image_format.h): a 24-byte header {u32 type, u32 flags,
u64 len, u32 hcrc, u32 reserved}, the payload, zero padding to 8 bytes, an
8-byte trailer {u32 crc, u32 reserved}.  The TAIL record's payload is
{u64 magic, u64 nr_records, u64 offset, u32 chain, u32 reserved}.

On output, every record's hcrc and payload crc, and the TAIL's record count,
offset and crc chain, are recomputed (edits asked for on the TAIL itself are
applied after that).  A PAGES record that lands at another file offset than
it had gets its pad_len recomputed so that its page data stays page-aligned.

usage:
  forge.py list IMG                         records: index offset type len crc
  forge.py pieces IMG                       pieces of compressed records:
                                            index type method raw_len
                                            offset total
  forge.py get IMG -r SPEC FIELD            print one field of one record
  forge.py copy IMG OUT                     re-serialize unchanged
  forge.py batch IMG                        many commands, the image read once:
                                            stdin lines `COMMAND OUT [OPTIONS]`,
                                            stdout lines `ok OUT` or
                                            `error OUT: why`
  forge.py edit IMG OUT -r SPEC EDIT...     change payload bytes of a record
      --offset K --bytes HEX                overwrite bytes at payload offset K
                                            (K: a number, negative from the
                                            end, or a field name)
      --set NAME=VAL                        a named field (see FIELDS; a
                                            FILE's own state: KIND.NAME
                                            for eventfd/timerfd/signalfd,
                                            x.NAME by kind number, see
                                            FILE_EXTRA_NAMED, FILE_EXTRA)
      --add NAME=DELTA  --or NAME=BITS      relative to its current value
      --set-u8/--set-u16/--set-u32/--set-u64 OFF=VAL   raw little-endian
      --resize N                            cut or zero-extend the payload
      --zbomb N [--zbomb-size M]            a piece's stored bytes made a zstd
                                            frame of N zeros (saying M)
  forge.py zpiece IMG OUT -r SPEC [--method M]  the record made a piece of
                                            a compressed one (REC_F_ZFRAME;
                                            M 1: a zstd frame of raw
                                            blocks, 0: stored raw)
  forge.py drop IMG OUT -r SPEC             remove a record
  forge.py dup IMG OUT -r SPEC [--at POS]   copy a record (default: after it)
  forge.py move IMG OUT -r SPEC --at POS    move a record to index POS
  forge.py insert IMG OUT --at POS --type T [--payload HEX] [--text STR]
                                            (--type/--payload repeated: several
                                            records in a row; --text: a string
                                            and its NUL after the last payload)
  forge.py setlen IMG OUT -r SPEC --len N   header len field (valid hcrc);
                                            the payload itself is unchanged
  forge.py sethdr IMG OUT -r SPEC [--type N] [--flags N] [--reserved N]
  forge.py error IMG OUT [--msg TEXT]       an ERROR record before the TAIL

SPEC picks a record: an index (0 = first, -1 = last), or a type name, alone
(the first of that type) or as TYPE#K (the K-th of that type, from 0;
negative counts from the end).  POS is an index into the record list (the
new record gets that index), or before:SPEC / after:SPEC.  Numbers may be
written in any Python integer literal form (0x.., 1_000_000), negative
values are stored in two's complement.
"""
import argparse
import shlex
import signal
import struct
import sys

MASK32 = 0xffffffff
POLY = 0x82f63b78
PAGE = 4096
HDR = 24
TRL = 8
TAIL_MAGIC = 0x00444e4554504b43

TYPES = {
    'HEAD': 1, 'TASK': 100, 'THREAD': 101, 'REGS': 102, 'XSTATE': 103,
    'SIGPENDING': 104, 'MM': 110, 'VMA': 111, 'PAGES': 112, 'PAGES_REF': 113, 'SIGHAND': 120,
    'ITIMERS': 121, 'POSIX_TIMER': 122, 'RLIMITS': 130, 'FS': 131,
    'CREDS': 132, 'FILE': 140, 'FD': 141, 'FIFO': 145, 'LOCK': 146,
    'FOWN': 147, 'FILE_MORE': 148, 'TTY': 150, 'TTY_DATA': 151, 'UNIX_SK': 152, 'UNIX_SCM': 153, 'IA32': 160, 'IA32_THREAD': 161,
    'TAIL': 9001, 'ERROR': 9999,
}
TYPES.update({'FILE_OBJ': 143, 'FILE_DATA': 144})
TYPES.update({'SYSV_SHM': 170, 'SYSV_DATA': 171})
TYPES.update({'SECCOMP_FILTER': 180, 'SECCOMP': 181})
TYPES.update({'PROCATTR': 133, 'THREAD_ATTR': 134, 'THREAD_CPUS': 149,
              'THREAD_MORE': 135, 'PROC_MORE': 136})
TYPES.update({'VMA_GUARDS': 115, 'AIO': 114})
TYPES.update({'PARENT': 295, 'PAGES_PARENT': 296, 'MM_TRACK': 297, 'PAGES_AT': 298})
TYPES.update({'CGROUP': 200, 'CGROUP_MEMBER': 201, 'CGROUP_PROP': 202})
TYPES.update({'NS_UTS': 210, 'NS': 211, 'NS_TIME': 212, 'NSPID': 213, 'NSTID': 214,
              'NS_USER': 215})
TYPES.update({'AUTH': 9002})
NAMES = {v: k for k, v in TYPES.items()}

# ---- CRC32C (Castagnoli, reflected), zlib-style crc(crc, data) ----

_T = []
for _i in range(256):
    _v = _i
    for _k in range(8):
        _v = (_v >> 1) ^ (POLY if _v & 1 else 0)
    _T.append(_v)


def crc32c(data, crc=0):
    crc ^= MASK32
    t = _T
    for b in data:
        crc = t[(crc ^ b) & 0xff] ^ (crc >> 8)
    return crc ^ MASK32


def _multmodp(a, b):
    """a * b modulo the polynomial, both reflected (zlib's multmodp)."""
    m = 1 << 31
    p = 0
    while True:
        if a & m:
            p ^= b
            if (a & (m - 1)) == 0:
                break
        m >>= 1
        b = (b >> 1) ^ POLY if b & 1 else b >> 1
    return p


_X2N = []
_p = 1 << 30            # x^1
for _k in range(32):
    _X2N.append(_p)
    _p = _multmodp(_p, _p)


def _x8nmodp(n):
    """x^(8n) modulo the polynomial."""
    p = 1 << 31         # x^0
    k = 3
    while n:
        if n & 1:
            p = _multmodp(_X2N[k & 31], p)
        n >>= 1
        k += 1
    return p


def crc_combine(crc1, crc2, len2):
    """crc of A+B from crc(A), crc(B) and len(B)."""
    return _multmodp(_x8nmodp(len2), crc1) ^ crc2


def crc_uncombine(crc_ab, crc_a, len_b):
    """crc of B from crc(A+B), crc(A) and len(B)."""
    return _multmodp(_x8nmodp(len_b), crc_a) ^ crc_ab


assert crc32c(b'123456789') == 0xe3069283
assert crc_combine(crc32c(b'12345'), crc32c(b'6789'), 4) == 0xe3069283

# ---- fields of the payloads: name -> (offset, struct format) ----

FIELDS = {
    'AUTH': dict(magic=(0, 'Q'), alg=(8, 'I'), reserved=(12, 'I'),
                 covered=(16, 'Q'), mac=(24, '32s')),
    'HEAD': dict(magic=(0, 'Q'), major=(8, 'H'), minor=(10, 'H'),
                 arch=(12, 'I'), page_size=(16, 'I'), xstate_size=(20, 'I'),
                 xfeatures=(24, 'Q'), time_ns=(32, 'Q'), flags=(40, 'Q'),
                 root_pid=(48, 'I'), nr_tasks=(52, 'I'), kernel=(56, '65s'),
                 host=(121, '65s'), tool=(186, '22s')),
    'TASK': dict(pid=(0, 'I'), ppid=(4, 'I'), pgid=(8, 'I'), sid=(12, 'I'),
                 nr_threads=(16, 'I'), personality=(20, 'I'),
                 exit_signal=(24, 'I'), flags=(28, 'I'), comm=(32, '16s')),
    'THREAD': dict(tid=(0, 'I'), rseq_len=(4, 'I'), clear_child_tid=(8, 'Q'),
                   rseq_ptr=(16, 'Q'), rseq_sig=(24, 'I'),
                   rseq_flags=(28, 'I'), sigmask=(32, 'Q'), ss_sp=(40, 'Q'),
                   ss_size=(48, 'Q'), ss_flags=(56, 'I'),
                   xcomp_perm_set=(60, 'I'), xcomp_perm=(64, 'Q'),
                   comm=(72, '16s')),
    'REGS': {n: (8 * i, 'Q') for i, n in enumerate(
        'r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax '
        'rip cs eflags rsp ss fs_base gs_base ds es fs gs'.split())},
    'XSTATE': dict(xstate_bv=(512, 'Q'), xcomp_bv=(520, 'Q'),
                   **{'hdr_rsv%d' % i: (528 + 8 * i, 'Q') for i in range(6)}),
    'SIGPENDING': dict(shared=(0, 'I'), reserved=(4, 'I'), signo=(8, 'i'),
                       errno=(12, 'i'), code=(16, 'i')),
    'MM': dict(start_code=(0, 'Q'), end_code=(8, 'Q'), start_data=(16, 'Q'),
               end_data=(24, 'Q'), start_brk=(32, 'Q'), brk=(40, 'Q'),
               start_stack=(48, 'Q'), arg_start=(56, 'Q'), arg_end=(64, 'Q'),
               env_start=(72, 'Q'), env_end=(80, 'Q'), auxv_len=(88, 'I'),
               exe_len=(92, 'I')),
    'VMA': dict(start=(0, 'Q'), end=(8, 'Q'), pgoff=(16, 'Q'), prot=(24, 'I'),
                flags=(28, 'I'), kind=(32, 'I'), madv=(36, 'I'),
                file_size=(40, 'Q'), file_mtime_ns=(48, 'q'),
                path_len=(56, 'I'), reserved=(60, 'I')),
    'PARENT': dict(size=(0, 'Q'), nr_records=(8, 'Q'), time_ns=(16, 'Q'),
                   chain=(24, 'I'), path_len=(28, 'I')),
    'PAGES_PARENT': dict(vma_start=(0, 'Q'), npages=(8, 'Q'), nr_runs=(16, 'I'),
                         reserved=(20, 'I'), run0_addr=(24, 'Q'),
                         run0_npages=(32, 'Q')),
    'MM_TRACK': dict(fd=(0, 'I'), reserved=(4, 'I'), ino=(8, 'Q')),
    'PAGES': dict(vma_start=(0, 'Q'), npages=(8, 'Q'), nr_runs=(16, 'I'),
                  pad_len=(20, 'I'),
                  **{k: v for i in range(4) for k, v in (
                      ('run%d.addr' % i, (24 + 16 * i, 'Q')),
                      ('run%d.npages' % i, (32 + 16 * i, 'Q')))}),
    # sigN.*: the disposition of signal N (1..64)
    'SIGHAND': {k: v for s in range(1, 65) for k, v in (
        ('sig%d.handler' % s, (32 * (s - 1), 'Q')),
        ('sig%d.flags' % s, (32 * (s - 1) + 8, 'Q')),
        ('sig%d.restorer' % s, (32 * (s - 1) + 16, 'Q')),
        ('sig%d.mask' % s, (32 * (s - 1) + 24, 'Q')))},
    # tN: 0 ITIMER_REAL, 1 VIRTUAL, 2 PROF
    'ITIMERS': {k: v for i in range(3) for k, v in (
        ('t%d.interval_ns' % i, (16 * i, 'q')),
        ('t%d.value_ns' % i, (16 * i + 8, 'q')))},
    'POSIX_TIMER': dict(id=(0, 'i'), clock=(4, 'i'), notify=(8, 'i'),
                        signo=(12, 'i'), sigval=(16, 'Q'), tid=(24, 'I'),
                        reserved=(28, 'I'), interval_ns=(32, 'q'),
                        value_ns=(40, 'q')),
    'RLIMITS': dict(nr=(0, 'I'), reserved=(4, 'I'),
                    **{k: v for i in range(16) for k, v in (
                        ('lim%d.cur' % i, (8 + 16 * i, 'Q')),
                        ('lim%d.max' % i, (16 + 16 * i, 'Q')))}),
    'FS': dict(umask=(0, 'I'), cwd_len=(4, 'I'), root_len=(8, 'I'),
               flags=(12, 'I'), cwd_mode=(16, 'I'), cwd_uid=(20, 'I'),
               cwd_gid=(24, 'I'), cwd_fd=(28, 'I')),
    'CREDS': dict(uid=(0, 'I'), euid=(4, 'I'), suid=(8, 'I'), fsuid=(12, 'I'),
                  gid=(16, 'I'), egid=(20, 'I'), sgid=(24, 'I'),
                  fsgid=(28, 'I'), cap_inh=(32, 'Q'), cap_prm=(40, 'Q'),
                  cap_eff=(48, 'Q'), cap_bnd=(56, 'Q'), cap_amb=(64, 'Q'),
                  securebits=(72, 'I'), no_new_privs=(76, 'I'),
                  nr_groups=(80, 'I'), reserved=(84, 'I')),
    'PROCATTR': dict(oom_score_adj=(0, 'i'), loginuid=(4, 'I'),
                     dumpable=(8, 'I'), thp_disable=(12, 'I'),
                     membarrier=(16, 'I'), reserved=(20, 'I')),
    'THREAD_CPUS': dict(w0=(0, 'Q')),
    'THREAD_MORE': dict(timerslack_ns=(0, 'Q'), ioprio=(8, 'I'), reserved=(12, 'I')),
    'PROC_MORE': dict(coredump_filter=(0, 'I'), mdwe=(4, 'I'), reserved=(8, 'Q')),
    'THREAD_ATTR': dict(pdeathsig=(0, 'I'), policy=(4, 'I'), flags=(8, 'Q'),
                        nice=(16, 'i'), priority=(20, 'I'), runtime=(24, 'Q'),
                        deadline=(32, 'Q'), period=(40, 'Q'),
                        robust_list=(48, 'Q'), robust_len=(56, 'Q')),
    'FILE': dict(id=(0, 'I'), kind=(4, 'I'), flags=(8, 'I'), mode=(12, 'I'),
                 pos=(16, 'Q'), size=(24, 'Q'), mtime_ns=(32, 'q'),
                 rdev=(40, 'Q'), path_len=(48, 'I'), extra_len=(52, 'I')),
    'FD': dict(fd=(0, 'I'), file_id=(4, 'I'), cloexec=(8, 'I'),
               reserved=(12, 'I')),
    'TTY': dict(id=(0, 'I'), kind=(4, 'I'), index=(8, 'I'), flags=(12, 'I'),
                sid=(16, 'I'), fg_pgrp=(20, 'I'), iflag=(24, 'I'),
                oflag=(28, 'I'), cflag=(32, 'I'), lflag=(36, 'I'),
                ispeed=(40, 'I'), ospeed=(44, 'I'), cc=(48, '32s'),
                line=(80, 'B'), pad=(81, '3s'), ws_row=(84, 'H'),
                ws_col=(86, 'H'), ws_xpixel=(88, 'H'), ws_ypixel=(90, 'H'),
                reserved=(92, 'I')),
    'FIFO': dict(id=(0, 'I'), capacity=(4, 'I'), data_len=(8, 'I'),
                 reserved=(12, 'I')),
    'LOCK': dict(fd=(0, 'I'), kind=(4, 'I'), type=(8, 'I'), reserved=(12, 'I'),
                 start=(16, 'Q'), len=(24, 'Q')),
    'FOWN': dict(fd=(0, 'I'), owner_type=(4, 'i'), owner=(8, 'i'),
                 signo=(12, 'I')),
    'FILE_OBJ': dict(id=(0, 'I'), kind=(4, 'I'), size=(8, 'Q'),
                     mode=(16, 'I'), uid=(20, 'I'), gid=(24, 'I'),
                     seals=(28, 'I'), name_len=(32, 'I'),
                     reserved=(36, 'I')),
    'FILE_DATA': dict(id=(0, 'Q'), bytes=(8, 'Q'), nr_runs=(16, 'I'),
                      pad_len=(20, 'I'),
                      **{k: v for i in range(4) for k, v in (
                          ('run%d.off' % i, (24 + 16 * i, 'Q')),
                          ('run%d.len' % i, (32 + 16 * i, 'Q')))}),
    'SYSV_SHM': dict(id=(0, 'I'), shmid=(4, 'i'), key=(8, 'i'),
                     mode=(12, 'I'), size=(16, 'Q'), uid=(24, 'I'),
                     gid=(28, 'I'), cpid=(32, 'I'), lpid=(36, 'I'),
                     flags=(40, 'I'), reserved=(44, 'I')),
    'SYSV_DATA': dict(id=(0, 'Q'), bytes=(8, 'Q'), nr_runs=(16, 'I'),
                      pad_len=(20, 'I'),
                      **{k: v for i in range(4) for k, v in (
                          ('run%d.off' % i, (24 + 16 * i, 'Q')),
                          ('run%d.len' % i, (32 + 16 * i, 'Q')))}),
    'UNIX_SK': dict(id=(0, 'I'), type=(4, 'I'), state=(8, 'I'), peer=(12, 'I'),
                    shutdown=(16, 'I'), flags=(20, 'I'), backlog=(24, 'I'),
                    peek_off=(28, 'i'), rcvbuf=(32, 'I'), sndbuf=(36, 'I'),
                    rcvtimeo_ns=(40, 'q'), sndtimeo_ns=(48, 'q'),
                    file_mode=(56, 'I'), file_uid=(60, 'I'), file_gid=(64, 'I'),
                    name_len=(68, 'I'), nr_msgs=(72, 'I'), data_len=(76, 'I')),
    'IA32': dict(abi=(0, 'I'), reserved=(4, 'I')),
    # the program (8 bytes an instruction) follows
    'SECCOMP_FILTER': dict(id=(0, 'I'), parent=(4, 'I'), flags=(8, 'I'),
                           nr_insns=(12, 'I')),
    'SECCOMP': dict(mode=(0, 'I'), filter=(4, 'I'), no_new_privs=(8, 'I'),
                    reserved=(12, 'I')),
    # the hierarchy's name, then the path, follow
    'CGROUP': dict(id=(0, 'I'), flags=(4, 'I'), uid=(8, 'I'), gid=(12, 'I'),
                   mode=(16, 'I'), ctrl_len=(20, 'I'), path_len=(24, 'I'),
                   reserved=(28, 'I')),
    'CGROUP_PROP': dict(group=(0, 'I'), flags=(4, 'I'), uid=(8, 'I'),
                        gid=(12, 'I'), mode=(16, 'I'), name_len=(20, 'I'),
                        value_len=(24, 'I'), reserved=(28, 'I')),
    'CGROUP_MEMBER': dict(nr=(0, 'I'), ns=(4, 'I'), group0=(8, 'I'),
                          ns_root0=(12, 'I')),
    # tlsN: the GDT TLS entry 12 + N (struct user_desc)
    'IA32_THREAD': dict(robust_list=(48, 'I'), robust_len=(52, 'I'),
                        **{k: v for i in range(3) for k, v in (
                            ('tls%d.entry' % i, (16 * i, 'I')),
                            ('tls%d.base' % i, (16 * i + 4, 'I')),
                            ('tls%d.limit' % i, (16 * i + 8, 'I')),
                            ('tls%d.flags' % i, (16 * i + 12, 'I')))}),
    'TAIL': dict(magic=(0, 'Q'), nr_records=(8, 'Q'), offset=(16, 'Q'),
                 chain=(24, 'I'), reserved=(28, 'I')),
}

# The FILE kinds' own state, after the path (src/image_format.h): a FILE
# field KIND.NAME is at 56 + path_len + its offset here.
FILE_HEAD = 56
FILE_EXTRA_NAMED = {
    'eventfd': dict(count=(0, 'Q'), flags=(8, 'I'), reserved=(12, 'I')),
    'timerfd': dict(clockid=(0, 'i'), settime_flags=(4, 'I'),
                    ticks=(8, 'Q'), interval_ns=(16, 'q'),
                    value_ns=(24, 'q'), now_ns=(32, 'q')),
    'signalfd': dict(sigmask=(0, 'Q')),
}


# A FILE's kind-specific extra follows its path: these names are offsets
# into the extra (FILE payload offset 56 + path_len), by FILE kind.
FILE_HDR = 56
FILE_EXTRA = {
    # FILE_EPOLL: {u32 nr, u32 reserved}, then nr registrations
    # {u32 file_id, u32 tfd, u32 events, u32 reserved, u64 data}
    13: dict(nr=(0, 'I'), reserved=(4, 'I'),
             **{k: v for i in range(4) for k, v in (
                 ('r%d.file_id' % i, (8 + 24 * i, 'I')),
                 ('r%d.tfd' % i, (12 + 24 * i, 'I')),
                 ('r%d.events' % i, (16 + 24 * i, 'I')),
                 ('r%d.reserved' % i, (20 + 24 * i, 'I')),
                 ('r%d.data' % i, (24 + 24 * i, 'Q')))}),
    # FILE_INOTIFY: {u32 nr, u32 reserved}, then nr watches {i32 wd,
    # u32 mask, u64 ino, u32 sdev, u32 path_len, path}: the first's fields
    12: dict(nr=(0, 'I'), reserved=(4, 'I'), **{'w0.wd': (8, 'i'),
             'w0.mask': (12, 'I'), 'w0.ino': (16, 'Q'), 'w0.sdev': (24, 'I'),
             'w0.path_len': (28, 'I')}),
}


# The kind's own bytes of a FILE_INET record (struct rec_inet), after the
# FILE's path; the edit/get field names for them are "inet.NAME".
INET_OPTS = ('reuseaddr reuseport keepalive broadcast rcvbuf sndbuf linger '
             'v6only nodelay keepidle keepintvl keepcnt').split()
INET = dict(family=(0, 'H'), protocol=(2, 'H'), state=(4, 'H'),
            shutdown=(6, 'H'), laddr=(8, '16s'), raddr=(24, '16s'),
            lport=(40, 'H'), rport=(42, 'H'), scope_id=(44, 'I'),
            backlog=(48, 'I'), type=(52, 'I'),
            **{'opt.' + n: (56 + 4 * i, 'i') for i, n in enumerate(
                INET_OPTS + ['slot%d' % k for k in range(12, 16)])},
            rcvtimeo_us=(120, 'q'), sndtimeo_us=(128, 'q'),
            snd_seq=(136, 'I'), rcv_seq=(140, 'I'), snd_len=(144, 'I'),
            unsent_len=(148, 'I'), rcv_len=(152, 'I'), mss=(156, 'I'),
            tcpi_opts=(160, 'I'), snd_wscale=(164, 'B'),
            rcv_wscale=(165, 'B'), reserved2=(166, 'H'),
            timestamp=(168, 'I'), snd_wl1=(172, 'I'), snd_wnd=(176, 'I'),
            max_window=(180, 'I'), rcv_wnd=(184, 'I'), rcv_wup=(188, 'I'))
INET_SIZE = 192


def inet_file(args):
    """The payload (hex) of a FILE record of kind inet: a well-formed TCP
    connection on IPv4 loopback with 3 bytes queued to send and 2
    received (or, first arg `listen`, `udp4`, `udp6` or `syn`, a listener
    on it, a UDP socket bound on IPv4 or IPv6 loopback, or a connection
    being opened (SYN_SENT)), changed by NAME=VALUE
    args (INET names, file.NAME for the FILE's own fields, path=, data=N:
    how many queue bytes follow, queue=HEX: those bytes, opts=HEX: the
    rec_sockopt entries after them)."""
    ri = bytearray(INET_SIZE)
    vals = dict(family=2, protocol=6, state=1, lport=5000, rport=6000,
                mss=65483, tcpi_opts=7, snd_wscale=7, rcv_wscale=7,
                snd_len=3, unsent_len=1, rcv_len=2, snd_wnd=65536,
                max_window=65536, rcv_wnd=65536, **{
                    'opt.rcvbuf': 131072, 'opt.sndbuf': 16384,
                    'opt.linger': -1, 'opt.keepidle': 7200,
                    'opt.keepintvl': 75, 'opt.keepcnt': 9})
    ri[8:12] = ri[24:28] = bytes([127, 0, 0, 1])
    path, data, fvals, queue, opts = 'socket:[4242]', None, {}, None, b''
    if args and args[0] in ('listen', 'udp6', 'udp4', 'syn'):   # presets
        conn = [k for k in INET if INET[k][0] >= 136]
        vals = {k: 0 if k in conn else v for k, v in vals.items()}
        if args[0] == 'syn':
            vals.update(state=2)
        else:
            vals.update(rport=0, state=10 if args[0] == 'listen' else 7)
            ri[24:40] = bytes(16)
        if args[0] in ('udp4', 'udp6'):
            vals.update(protocol=17, **{
                'opt.keepidle': 0, 'opt.keepintvl': 0, 'opt.keepcnt': 0})
        if args[0] == 'udp6':
            vals.update(family=10, **{'opt.v6only': 1})
            ri[8:24] = bytes(15) + b'\1'
        elif args[0] == 'listen':
            vals['backlog'] = 5
        args = args[1:]
    for a in args:
        k, v = keyval(a)
        if k == 'path':
            path = v
        elif k == 'data':
            data = num(v)
        elif k == 'queue':          # the queue's bytes themselves
            queue = bytes.fromhex(v)
            vals['rcv_len'] = len(queue)     # unless rcv_len= follows
        elif k == 'opts':
            opts = bytes.fromhex(v)
        elif k.startswith('file.'):
            fvals[k[5:]] = num(v)
        elif k in ('laddr', 'raddr'):
            ri[INET[k][0]:INET[k][0] + 16] = bytes.fromhex(v.ljust(32, '0'))
        elif k in INET:
            vals[k] = num(v)
        else:
            raise ForgeError('inet has no field %r' % k)
    for k, v in vals.items():
        off, fmt = INET[k]
        ri[off:off + struct.calcsize(fmt)] = pack(fmt, v)
    if data is None:
        data = vals['snd_len'] + vals['rcv_len']
    p = path.encode() + b'\0'
    extra = bytes(ri) + (queue if queue is not None else
                         bytes(i & 0xff for i in range(data))) + opts
    f = dict(id=1000, kind=16, flags=2, mode=0o140777, pos=0, size=0,
             mtime_ns=0, rdev=0, path_len=len(p), extra_len=len(extra))
    f.update(fvals)
    head = b''.join(pack(FIELDS['FILE'][k][1], v) for k, v in f.items())
    return (head + p + extra).hex()


class ForgeError(Exception):
    pass


def num(s):
    try:
        return int(s, 0)
    except ValueError:
        raise ForgeError('not a number: %r' % s)


class Record:
    def __init__(self, rtype, flags, payload, crc, off, reserved=0,
                 trailer_reserved=0):
        self.type = rtype
        self.flags = flags
        self.reserved = reserved
        self.trailer_reserved = trailer_reserved
        self.orig = bytes(payload)      # payload as read
        self.orig_crc = crc             # its crc, from the trailer
        self.payload = bytearray(payload)
        self.orig_off = off             # header offset it was read at
        self.hdr_len = None             # override of the header len field
        self.post_edits = []            # (offset, bytes), for the TAIL

    def name(self):
        return NAMES.get(self.type, str(self.type))

    def copy(self):
        r = Record(self.type, self.flags, b'', self.orig_crc, self.orig_off,
                   self.reserved, self.trailer_reserved)
        r.orig = self.orig
        r.payload = bytearray(self.payload)
        r.hdr_len = self.hdr_len
        r.post_edits = list(self.post_edits)
        return r

    def crc(self):
        """crc of the current payload, without rereading what is unchanged."""
        new, old = self.payload, self.orig
        if new == old:
            return self.orig_crc
        # the longest common suffix, found by halving steps at C speed
        n = min(len(new), len(old))
        suf = 0
        step = 1 << 24
        while step:
            while suf + step <= n and \
                    new[len(new) - suf - step:len(new) - suf] == \
                    old[len(old) - suf - step:len(old) - suf]:
                suf += step
            step >>= 1
        if suf < 4096:
            return crc32c(new)
        crc_suffix = crc_uncombine(self.orig_crc, crc32c(old[:len(old) - suf]),
                                   suf)
        return crc_combine(crc32c(new[:len(new) - suf]), crc_suffix, suf)


def pad8(n):
    return (8 - (n & 7)) & 7


def parse(data):
    recs = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < HDR + TRL:
            raise ForgeError('%d stray bytes at offset %d' %
                             (len(data) - pos, pos))
        rtype, flags, ln, hcrc, rsv = struct.unpack_from('<IIQII', data, pos)
        end = pos + HDR + ln + pad8(ln) + TRL
        if end > len(data):
            raise ForgeError('record at offset %d (type %d) runs past the end'
                             % (pos, rtype))
        payload = data[pos + HDR:pos + HDR + ln]
        crc, trsv = struct.unpack_from('<II', data, end - TRL)
        recs.append(Record(rtype, flags, payload, crc, pos, rsv, trsv))
        pos = end
    return recs


def fix_pages_pad(rec, hdr_off):
    """Recompute pad_len so the page data starts page-aligned at hdr_off."""
    p = rec.payload
    if len(p) < 24:
        return
    nr_runs, pad_len = struct.unpack_from('<II', p, 16)
    head = 24 + 16 * nr_runs
    if head + pad_len > len(p) or (len(p) - head - pad_len) % PAGE:
        return                          # not a well-formed one: leave it
    data = p[head + pad_len:]
    new_pad = -(hdr_off + HDR + head) % PAGE
    if new_pad == pad_len:
        return
    np = bytearray(p[:head])
    struct.pack_into('<I', np, 20, new_pad)
    np += bytes(new_pad)
    np += data
    rec.payload = np


def serialize(recs):
    out = bytearray()
    chain = 0
    nr = 0
    for r in recs:
        off = len(out)
        if r.type == TYPES["PAGES"] and not r.flags and off != r.orig_off:
            fix_pages_pad(r, off)
        if r.type == TYPES['TAIL']:
            p = bytearray(r.payload)
            if len(p) >= 32:
                struct.pack_into('<QQQI', p, 0, TAIL_MAGIC, nr, off, chain)
            for o, b in r.post_edits:
                p[o:o + len(b)] = b
            r.payload = p
        ln = len(r.payload) if r.hdr_len is None else r.hdr_len
        h = struct.pack('<IIQ', r.type, r.flags, ln)
        hcrc = crc32c(h)
        crc = r.crc()
        out += h + struct.pack('<II', hcrc, r.reserved)
        out += r.payload
        out += bytes(pad8(len(r.payload)))
        out += struct.pack('<II', crc, r.trailer_reserved)
        if r.type != TYPES['TAIL']:
            chain = crc32c(struct.pack('<I', hcrc), chain)
            chain = crc32c(struct.pack('<I', crc), chain)
            nr += 1
    return bytes(out)


def type_num(s):
    if s.upper() in TYPES:
        return TYPES[s.upper()]
    try:
        return int(s, 0)
    except ValueError:
        raise ForgeError('unknown record type %r' % s)


def select(recs, spec):
    """Index of the record SPEC names."""
    try:
        i = int(spec, 0)
    except ValueError:
        i = None
    if i is not None:
        if not -len(recs) <= i < len(recs):
            raise ForgeError('no record %d (the image has %d)' %
                             (i, len(recs)))
        return i % len(recs)
    name, _, k = spec.partition('#')
    t = type_num(name)
    k = num(k) if k else 0
    idx = [j for j, r in enumerate(recs) if r.type == t]
    if not -len(idx) <= k < len(idx):
        raise ForgeError('no %s record #%d (the image has %d)' %
                         (name, k, len(idx)))
    return idx[k]


def position(recs, pos):
    if pos.startswith('before:'):
        return select(recs, pos[7:])
    if pos.startswith('after:'):
        return select(recs, pos[6:]) + 1
    i = num(pos)
    return i if i >= 0 else len(recs) + 1 + i


# A piece of a compressed record (rec_hdr.flags REC_F_ZFRAME): its head,
# struct rec_zframe, whatever the record's type.
ZF_FLAG = 1
ZFRAME = dict(total=(0, 'Q'), offset=(8, 'Q'), raw_len=(16, 'I'),
              raw_crc=(20, 'I'), method=(24, 'I'), reserved=(28, 'I'))


def zstd_rle(n, content_size=None):
    """A zstd frame of RLE blocks giving n zero bytes from 4 bytes a
    128 KiB block: a decompression bomb.  content_size: declared in its
    header (else none)."""
    if content_size is None:
        out = struct.pack('<IBB', 0xFD2FB528, 0x00, 0x58)  # window 2 MiB
    else:
        out = struct.pack('<IBQ', 0xFD2FB528, 0xC0, content_size)
    blk = 128 << 10
    while n > 0:
        k = min(n, blk)
        n -= k
        hdr = (k << 3) | (1 << 1) | (1 if n == 0 else 0)
        out += struct.pack('<I', hdr)[:3] + b'\0'
    return out


def zstd_raw(data):
    """A zstd frame holding data in raw blocks: what any zstd decoder
    takes, made without one."""
    out = struct.pack('<IBI', 0xFD2FB528, 0xA0, len(data))  # single segment
    blk = 128 << 10
    for i in range(0, max(len(data), 1), blk):
        part = data[i:i + blk]
        last = 1 if i + blk >= len(data) else 0
        out += struct.pack('<I', (len(part) << 3) | last)[:3] + part
    return out


def to_piece(rec, method):
    """rec made one whole piece of a compressed record (method 0: stored
    raw, 1: a zstd frame of raw blocks)."""
    p = bytes(rec.payload)
    body = zstd_raw(p) if method else p
    rec.payload = bytearray(struct.pack('<QQIIII', len(p), 0, len(p),
                                        crc32c(p), method, 0) + body)
    rec.flags |= ZF_FLAG


def field(rec, name):
    """(offset, format) of a field of rec, by name or numeric offset."""
    f = ZFRAME if rec.flags & ZF_FLAG else FIELDS.get(rec.name(), {})
    if name in f:
        return f[name]
    kind, dot, sub = name.partition('.')
    if rec.name() == 'FILE' and dot and sub in FILE_EXTRA_NAMED.get(kind, {}):
        off, fmt = FILE_EXTRA_NAMED[kind][sub]
        return FILE_HEAD + get(rec, 48, 'I') + off, fmt
    if rec.name() == 'FILE' and name.startswith('x.') and \
            len(rec.payload) >= FILE_HDR:
        kind, = struct.unpack_from('<I', rec.payload, 4)
        path_len, = struct.unpack_from('<I', rec.payload, 48)
        x = FILE_EXTRA.get(kind, {})
        if name[2:] in x:
            off, fmt = x[name[2:]]
            return FILE_HDR + path_len + off, fmt
    if rec.name() == 'FILE' and name[5:] in INET and name[:5] == 'inet.':
        off, fmt = INET[name[5:]]
        return 56 + get(rec, 48, 'I') + off, fmt
    try:
        return num(name), None
    except ForgeError:
        raise ForgeError('%s has no field %r (known: %s)' %
                         (rec.name(), name, ' '.join(f)))


def pack(fmt, v):
    if fmt.endswith('s'):
        raise ForgeError('use --offset/--bytes for a byte field')
    bits = struct.calcsize(fmt) * 8
    lo = -(1 << (bits - 1))
    hi = (1 << bits) - 1
    if not lo <= v <= hi:
        raise ForgeError('%d does not fit in %d bits' % (v, bits))
    if fmt.islower():           # signed
        v = v - (1 << bits) if v >= 1 << (bits - 1) else v
    else:
        v &= hi
    return struct.pack('<' + fmt, v)


def get(rec, off, fmt):
    p = bytes(rec.payload)
    size = struct.calcsize(fmt)
    if off + size > len(p):
        raise ForgeError('field at %d beyond the %d-byte payload of %s' %
                         (off, len(p), rec.name()))
    return struct.unpack_from('<' + fmt, p, off)[0]


def put(rec, off, b):
    if off < 0:                 # from the end of the payload
        off += len(rec.payload)
    if off < 0 or off + len(b) > len(rec.payload):
        raise ForgeError('bytes %d..%d beyond the %d-byte payload of %s' %
                         (off, off + len(b), len(rec.payload), rec.name()))
    if rec.type == TYPES['TAIL']:
        rec.post_edits.append((off, bytes(b)))
    else:
        rec.payload[off:off + len(b)] = b


def keyval(s):
    k, sep, v = s.partition('=')
    if not sep:
        raise ForgeError('want NAME=VALUE, got %r' % s)
    return k, v


def do_edit(recs, a):
    rec = recs[select(recs, a.record)]
    if a.bytes is not None:
        if a.offset is None:
            raise ForgeError('--bytes needs --offset')
        put(rec, field(rec, a.offset)[0], bytes.fromhex(a.bytes))
    for opt, fmt in (('set_u8', 'B'), ('set_u16', 'H'), ('set_u32', 'I'),
                     ('set_u64', 'Q')):
        for s in getattr(a, opt) or []:
            k, v = keyval(s)
            put(rec, field(rec, k)[0], pack(fmt, num(v)))
    for how in ('set', 'add', 'or'):
        for s in getattr(a, how) or []:
            k, v = keyval(s)
            off, fmt = field(rec, k)
            if fmt is None:
                raise ForgeError('--%s wants a field name, not %r' % (how, k))
            v = num(v)
            if how != 'set':    # wraps around, as the C types do
                bits = 8 * struct.calcsize(fmt)
                v = v + get(rec, off, fmt) if how == 'add' else \
                    v | get(rec, off, fmt)
                v &= (1 << bits) - 1
                if fmt.islower() and v >= 1 << (bits - 1):
                    v -= 1 << bits
            put(rec, off, pack(fmt, v))
    if a.zbomb is not None:    # the stored bytes: a zstd bomb
        bomb = zstd_rle(a.zbomb, a.zbomb_size)
        rec.payload[32:] = bomb
        put(rec, 24, pack('I', 1))
    if a.resize is not None:
        n = a.resize
        if n < len(rec.payload):
            del rec.payload[n:]
        else:
            rec.payload.extend(bytes(n - len(rec.payload)))


def make_parser():
    ap = argparse.ArgumentParser(
        prog='forge.py', description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)

    def cmd(name, out=True, rec=True):
        p = sub.add_parser(name)
        p.add_argument('img')
        if out:
            p.add_argument('out')
        if rec:
            p.add_argument('-r', '--record', required=True, help='SPEC')
        return p

    cmd('list', out=False, rec=False)
    p = cmd('get', out=False)
    p.add_argument('field')
    cmd('batch', out=False, rec=False)
    cmd('copy', rec=False)
    p = cmd('edit')
    p.add_argument('--offset')
    p.add_argument('--bytes')
    for o in ('--set-u8', '--set-u16', '--set-u32', '--set-u64', '--set',
              '--add', '--or'):
        p.add_argument(o, action='append', metavar='NAME=VAL')
    p.add_argument('--resize', type=num)
    p.add_argument('--zbomb', type=num, metavar='N',
                   help='a piece: its stored bytes a zstd frame of N zeros')
    p.add_argument('--zbomb-size', type=num, metavar='N',
                   help='... whose header says it holds N')
    cmd('drop')
    cmd('pieces', out=False, rec=False)
    p = cmd('zpiece')
    p.add_argument('--method', type=num, default=1)
    p = cmd('dup')
    p.add_argument('--at')
    p = cmd('move')
    p.add_argument('--at', required=True)
    p = cmd('insert', rec=False)
    p.add_argument('--at', required=True)
    p.add_argument('--type', required=True, action='append')
    p.add_argument('--payload', action='append')
    p.add_argument('--text')
    p = cmd('setlen')
    p.add_argument('--len', type=num, required=True)
    p = cmd('sethdr')
    p.add_argument('--type')
    p.add_argument('--flags', type=num)
    p.add_argument('--reserved', type=num)
    p = cmd('error', rec=False)
    p.add_argument('--msg', default='forged failure')
    return ap


def run(a, recs):
    """Carry out one parsed command on the records of an image."""
    if a.cmd == 'list':
        for i, r in enumerate(recs):
            print('%d %d %s %d 0x%08x' % (i, r.orig_off, r.name(),
                                          len(r.payload), r.orig_crc))
        return
    if a.cmd == 'pieces':
        for i, r in enumerate(recs):
            if r.flags & ZF_FLAG and len(r.payload) >= 32:
                t, o, n, c, m, _ = struct.unpack_from('<QQIIII', r.payload)
                print('%d %s %d %d %d %d' % (i, r.name(), m, n, o, t))
        return
    if a.cmd == 'get':
        rec = recs[select(recs, a.record)]
        off, fmt = field(rec, a.field)
        v = get(rec, off, fmt or 'Q')
        print(v.rstrip(b'\0').decode('latin-1') if isinstance(v, bytes)
              else v)
        return
    if a.cmd == 'edit':
        do_edit(recs, a)
    elif a.cmd == 'zpiece':
        to_piece(recs[select(recs, a.record)], a.method)
    elif a.cmd == 'drop':
        del recs[select(recs, a.record)]
    elif a.cmd == 'dup':
        i = select(recs, a.record)
        recs.insert(position(recs, a.at) if a.at else i + 1, recs[i].copy())
    elif a.cmd == 'move':
        r = recs.pop(select(recs, a.record))
        recs.insert(position(recs, a.at), r)
    elif a.cmd == 'insert':
        payloads = [bytes.fromhex(p) for p in a.payload or []]
        payloads += [b''] * (len(a.type) - len(payloads))
        if len(payloads) != len(a.type):
            raise ForgeError('more --payload than --type')
        if a.text is not None:
            payloads[-1] += a.text.encode() + b'\0'
        at = position(recs, a.at)
        for t, p in reversed(list(zip(a.type, payloads))):
            recs.insert(at, Record(type_num(t), 0, p, crc32c(p), -1))
    elif a.cmd == 'setlen':
        recs[select(recs, a.record)].hdr_len = a.len
    elif a.cmd == 'sethdr':
        r = recs[select(recs, a.record)]
        if a.type is not None:
            r.type = type_num(a.type)
        if a.flags is not None:
            r.flags = a.flags
        if a.reserved is not None:
            r.reserved = a.reserved
    elif a.cmd == 'error':
        payload = a.msg.encode() + b'\0'
        r = Record(TYPES['ERROR'], 0, payload, crc32c(payload), -1)
        recs.insert(select(recs, 'TAIL'), r)
    out = serialize(recs)
    with open(a.out, 'wb') as f:
        f.write(out)


def batch(ap, img, recs):
    """Many commands on one image, read once: each line of stdin is
    `COMMAND OUT [OPTIONS]` (shell quoting), and gets a line on stdout,
    `ok OUT` or `error OUT: why`."""
    for line in sys.stdin:
        words = shlex.split(line)
        if not words:
            continue
        out = words[1] if len(words) > 1 else '?'
        try:
            a = ap.parse_args([words[0], img] + words[1:])
            run(a, [r.copy() for r in recs])
            print('ok %s' % out)
        except SystemExit:
            print('error %s: bad command: %s' % (out, line.strip()))
        except (ForgeError, OSError, struct.error, ValueError) as e:
            print('error %s: %s' % (out, e))
        sys.stdout.flush()
    return 0


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)     # `forge.py list | head`
    ap = make_parser()
    a = ap.parse_args(argv)
    try:
        with open(a.img, 'rb') as f:
            recs = parse(f.read())
        if a.cmd == 'batch':
            return batch(ap, a.img, recs)
        run(a, recs)
    except (ForgeError, OSError, struct.error, ValueError) as e:
        print('forge.py: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
