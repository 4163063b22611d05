# nested_pidns.py DIR - a tree with a pid namespace nested in it, for
# tests/cases/pidns_nested.sh.  The root R unshares CLONE_NEWPID and
# forks N, the init (pid 1) of the new namespace; N forks C (pid 2), C
# forks G (pid 3), which has a second thread, a POSIX timer aimed at
# its main thread, two signals pending (one its thread's), pidfds on R
# (outside its namespace) and on C, and counts into a pipe R reads.  Once DIR/go exists: G reports and exits, C reaps it and waits
# for SIGUSR1 from N, which N sends to pid 2 and then reaps C; R reaps
# N and checks it all: PASS or FAIL.
import ctypes, os, signal, struct, sys, threading, time

libc = ctypes.CDLL(None, use_errno=True)
d = sys.argv[1]
go = d + "/go"


def wait_go():
    while not os.path.exists(go):
        time.sleep(0.01)


def forever():
    while True:
        time.sleep(1)


def arm_timer():
    # SIGEV_THREAD_ID (4) to its own thread, by its tid here (3)
    ev = ctypes.create_string_buffer(64)
    struct.pack_into("qiii", ev, 0, 0, signal.SIGUSR2, 4, threading.get_native_id())
    tid = ctypes.c_int(-1)
    if libc.syscall(222, 1, ev, ctypes.byref(tid)):     # timer_create
        sys.exit("timer_create: errno %d" % ctypes.get_errno())
    its = ctypes.create_string_buffer(struct.pack("qqqq", 0, 0, 1000, 0))
    libc.syscall(223, tid.value, 0, its, None)          # timer_settime


def grandchild(w, rfd):
    pidfds = [rfd, os.pidfd_open(os.getppid())]
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2, signal.SIGRTMIN])
    threading.Thread(target=forever, daemon=True).start()
    os.kill(os.getpid(), signal.SIGUSR2)
    signal.pthread_kill(threading.get_ident(), signal.SIGRTMIN)
    arm_timer()
    i = 0
    while not os.path.exists(go):
        os.write(w, b"%d\n" % i)
        i += 1
        time.sleep(0.05)
    # R is outside its namespace, where no signal goes: it is a pidfd
    live = int("pidfd" in os.readlink("/proc/self/fd/%d" % pidfds[0]))
    signal.pidfd_send_signal(pidfds[1], 0)
    live += 1
    os.write(w, b"G %d %d %d %d %d\n" % (os.getpid(), os.getppid(), threading.active_count(),
                                          len(signal.sigpending()), live))
    os._exit(0)


def child(w, rfd):
    got = []
    signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
    g = os.fork()
    if g == 0:
        grandchild(w, rfd)
    _, st = os.waitpid(g, 0)
    while not got:
        time.sleep(0.01)
    os.write(w, b"C %d %d %d %d\n" % (os.getpid(), os.getppid(), g, st))
    os._exit(5)


def nested_init(w, rfd):
    c = os.fork()
    if c == 0:
        child(w, rfd)
    print("NESTED", os.getpid(), c, flush=True)
    wait_go()
    os.kill(c, signal.SIGUSR1)
    p, st = os.waitpid(c, 0)
    os.write(w, b"N %d %d %d %d\n" % (os.getpid(), os.getppid(), p, os.WEXITSTATUS(st)))
    os._exit(0)


r, w = os.pipe()
rfd = os.pidfd_open(os.getpid())    # R's: it has no pid in the nested namespace
if libc.unshare(0x20000000):    # CLONE_NEWPID
    sys.exit("unshare: errno %d" % ctypes.get_errno())
n = os.fork()
if n == 0:
    os.close(r)
    nested_init(w, rfd)
os.close(w)
print("READY", os.getpid(), n, flush=True)
data = b""
while True:
    b = os.read(r, 4096)
    if not b:
        break
    data += b
_, st = os.waitpid(n, 0)
lines = data.decode().splitlines()
counts = [int(x) for x in lines if x.isdigit()]
rest = sorted(x for x in lines if not x.isdigit())
want = ["C 2 1 3 0", "G 3 2 2 2 2", "N 1 0 2 5"]
ok = counts == list(range(len(counts))) and rest == want and st == 0 and len(counts) > 0
print("COUNTED", len(counts), flush=True)
print("PASS" if ok else "FAIL %r %r st=%d" % (rest, counts[-5:], st), flush=True)
