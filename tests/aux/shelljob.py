#!/usr/bin/python3
"""shelljob.py - the --shell-job test (tests/run.sh: shell_job).

A stand-in shell (a session leader on a pty it made its controlling
terminal) runs the job (this script, 'job') in the foreground.  The job
turns echo off and answers lines on fds 1 and 5 (/dev/tty).  It is
checkpointed with --shell-job --kill, then restarted by `ckpt restart
--shell-job` run as the foreground job of a second shell on a second pty,
with its stdio away from the terminal: the restored job must answer on the
second terminal, in the foreground, with echo off; ^Z stops it and restart
with it, and the shell's `fg` brings both back; when it ends, restart has
given the foreground and the termios back.  Also: without --shell-job the
checkpoint is refused (a terminal outside the tree at fd 5) and the job
runs on; the image restarts only with --shell-job.

usage: shelljob.py CKPT WORKDIR     the test; exit 0 if it passed
       shelljob.py job              the job
"""
import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
import time


def job():
    t = termios.tcgetattr(0)
    t[3] &= ~termios.ECHO
    termios.tcsetattr(0, termios.TCSANOW, t)
    fd = os.open("/dev/tty", os.O_RDWR)
    os.dup2(fd, 5)
    os.close(fd)
    os.write(1, b"ready\n")
    while True:
        d = os.read(0, 200)
        if not d:
            return 3
        line = d.decode().strip()
        if line == "quit":
            return 0
        fg = os.tcgetpgrp(0) == os.getpgrp()
        echo = bool(termios.tcgetattr(0)[3] & termios.ECHO)
        os.write(1, f"echo:{line} fg={fg} echo={echo}\n".encode())
        os.write(5, f"fd5:{line}\n".encode())


def shell(m, s, argv, stdio, report):
    """A session leader with the pty as its terminal, running argv as its
    foreground job, `fg`-ing it whenever it stops; reports on @report."""
    os.close(m)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os.read(r, 1)       # the terminal is ours now
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        for i, f in enumerate(stdio):
            os.dup2(f, i)
        os.closerange(3, 1024)
        os.execv(argv[0], argv)
    os.setpgid(pid, pid)
    os.tcsetpgrp(s, pid)
    os.write(report, f"job {pid}\n".encode())
    os.write(w, b"g")
    while True:
        _, st = os.waitpid(pid, os.WUNTRACED)
        if not os.WIFSTOPPED(st):
            break
        os.write(report, f"stopped fg={os.tcgetpgrp(s)}\n".encode())
        os.tcsetpgrp(s, pid)
        os.kill(-pid, signal.SIGCONT)
    echo = bool(termios.tcgetattr(s)[3] & termios.ECHO)
    os.write(report, f"done {st} fg={os.tcgetpgrp(s)} echo={echo}\n".encode())
    os._exit(0)


def spawn(argv, stdio=None):
    m, s = os.openpty()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rep_r)
            shell(m, s, argv, stdio or (s, s, s), rep_w)
        except BaseException as e:
            print("shell:", e, flush=True)
        os._exit(1)
    os.close(s)
    os.close(rep_w)
    return m, pid, rep_r


class Failed(Exception):
    pass


def expect(fd, want, secs=20):
    """Read @fd until @want has come; all that came (\\r dropped)."""
    got = ""
    end = time.time() + secs
    while want not in got:
        left = end - time.time()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise Failed(f"wanted {want!r}, got {got!r}")
        try:
            d = os.read(fd, 1000)
        except OSError:
            d = b""
        if not d:
            raise Failed(f"end of input waiting for {want!r}, got {got!r}")
        got += d.decode(errors="replace").replace("\r", "")
    return got


def ask(m, word):
    os.write(m, f"{word}\n".encode())
    got = expect(m, f"fd5:{word}\n")
    if f"echo:{word} fg=True echo=False\n" not in got:
        raise Failed(f"the job answered {got!r}")
    print(f"job answered {word}: {got.strip()!r}")


def ckpt(*args):
    p = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    print(f"$ {' '.join(args[1:])}: exit {p.returncode} {p.stderr.strip()}")
    return p


def wait_until(cond, what, secs=20):
    end = time.time() + secs
    while not cond():
        if time.time() > end:
            raise Failed(f"timed out waiting for {what}")
        time.sleep(0.01)


def pgid_of(pid):
    try:
        return os.getpgid(pid)
    except OSError:
        return 0


def test(ck, work):
    os.makedirs(work, exist_ok=True)
    img = os.path.join(work, "img")
    me = os.path.abspath(__file__)

    m1, sh1, rep1 = spawn([sys.executable, me, "job"])
    jid = int(expect(rep1, "\n").split()[1])
    expect(m1, "ready\n")
    ask(m1, "hello")

    p = ckpt(ck, "checkpoint", "-o", img, str(jid))
    if p.returncode != 1 or "--shell-job" not in p.stderr or f"pid {jid} fd 5" not in p.stderr:
        raise Failed("a terminal outside the tree at fd 5 was not refused")
    ask(m1, "still")
    if ckpt(ck, "checkpoint", "--shell-job", "--kill", "-o", img, str(jid)).returncode:
        raise Failed("checkpoint --shell-job failed")
    expect(rep1, "done")
    os.waitpid(sh1, 0)
    os.close(m1)

    p = ckpt(ck, "restart", img)
    if p.returncode != 125 or "--shell-job" not in p.stderr:
        raise Failed("a shell job's image restarted without --shell-job")

    log = os.open(os.path.join(work, "restart.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    null = os.open("/dev/null", os.O_RDONLY)
    m2, sh2, rep2 = spawn([ck, "restart", "--shell-job", img], (null, log, log))
    rid = int(expect(rep2, "\n").split()[1])
    # restored, a group of its own, in the foreground of the new terminal
    wait_until(lambda: pgid_of(jid) == jid and os.tcgetpgrp(m2) == jid, "the restored job")
    stat = open(f"/proc/{jid}/stat").read().rsplit(")", 1)[1].split()
    print(f"restored job {jid}: ppid {stat[1]} pgrp {stat[2]} sid {stat[3]}, restart {rid}")
    if int(stat[1]) != rid or int(stat[3]) != os.getsid(rid):
        raise Failed("the job is not restart's child in restart's session")
    ask(m2, "ping")

    os.write(m2, b"\x1a")       # ^Z: the job stops, restart with it
    got = expect(rep2, "\n")
    if got.strip() != f"stopped fg={rid}":
        raise Failed(f"^Z: the shell saw {got!r}, want restart stopped in the foreground")
    ask(m2, "pong")             # the shell's fg: both go on

    os.write(m2, b"quit\n")
    got = expect(rep2, "\n")
    print(f"shell: {got.strip()}")
    if got.strip() != f"done 0 fg={rid} echo=True":
        raise Failed("restart did not end 0 giving the terminal back as it found it")
    os.waitpid(sh2, 0)
    text = open(os.path.join(work, "restart.log")).read()
    if "Sanitizer" in text or "runtime error" in text:
        raise Failed(f"restart: {text}")


def main():
    if sys.argv[1:] == ["job"]:
        sys.exit(job())
    try:
        test(sys.argv[1], sys.argv[2])
    except Failed as e:
        print("FAIL:", e)
        sys.exit(1)
    print("PASS")


main()
