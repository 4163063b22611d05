"""train.py - a PyTorch training run on the GPU, for tests/gpu/run.sh.

usage: train.py STEPS STOP_AT DIR
A 2-layer model with Adam on synthetic data, every seed fixed and the
algorithms deterministic; each step prints its loss exactly (float.hex).
After step STOP_AT (0: never) it prints "READY <pid>" and waits, doing
nothing on the GPU, until DIR/go exists; it ends with "DONE".
"""
import os
import sys
import time

import torch

steps, stop_at, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
dev = torch.device("cuda")
g = torch.Generator(device=dev).manual_seed(1)
X = torch.randn(8192, 256, device=dev, generator=g)
w = torch.randn(256, 1, device=dev, generator=g)
y = torch.sin(X @ w) + 0.1 * torch.randn(8192, 1, device=dev, generator=g)
model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 1)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(1, steps + 1):
    idx = torch.randint(0, X.shape[0], (512,), device=dev, generator=g)
    loss = torch.nn.functional.mse_loss(model(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item().hex()}", flush=True)
    if step == stop_at:
        torch.cuda.synchronize()
        print(f"READY {os.getpid()}", flush=True)
        while not os.path.exists(os.path.join(d, "go")):
            time.sleep(0.01)
print("DONE", flush=True)
