# counter.py N OUT - writes 0..N-1 to OUT, one a line, a few ms apart.
import sys
import time

n, out = int(sys.argv[1]), sys.argv[2]
total = 0
with open(out, "w") as f:
    for i in range(n):
        total += i * i
        f.write(f"{i}\n")
        f.flush()
        time.sleep(0.004)
    f.write(f"total {total}\n")
