"""Issue 19.8: host memory, step time and disk over a long smoke-size run (tic-tac-toe smoke preset).

python docs/results/reliability/long_run.py RUN_DIR 1000
Prints RSS and the step time around steps 10, 100, 1000 and every 1000 steps after, and the run
directory's size on disk."""
import os
import subprocess
import sys
import threading
import time

import azjax

run_dir, steps = sys.argv[1], int(sys.argv[2])
config = azjax.apply_overrides(azjax.preset("tictactoe", "smoke"), [
    f"train.num_steps={steps}", "run.log_every=10", "run.checkpoint_every=50", "run.eval_every=250"])


def rss_mb() -> float:
  with open("/proc/self/status") as f:
    return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024


# One whole run through the loop; step times from run.log's timestamps, RSS sampled by a watcher thread.

samples = []
stop = threading.Event()


def watch():
  while not stop.is_set():
    samples.append((time.time(), rss_mb()))
    time.sleep(0.5)


threading.Thread(target=watch, daemon=True).start()
started = time.time()
azjax.train(config, run_dir, progress=False)
stop.set()
log = open(os.path.join(run_dir, "run.log")).read().splitlines()
stamps = {}
for line in log:
  if " step " in line and ": positions=" in line:
    t = time.mktime(time.strptime(line[:19], "%Y-%m-%d %H:%M:%S")) + int(line[20:23]) / 1000
    stamps[int(line.split(" step ")[1].split(":")[0])] = t
for s in sorted({10, 100, *range(1000, steps + 1, 1000)}):
  near = [k for k in sorted(stamps) if k >= s][:1]
  if near:
    k = near[0]
    prev = max(p for p in stamps if p < k) if any(p < k for p in stamps) else None
    per_step = (stamps[k] - stamps[prev]) / (k - prev) if prev is not None else float("nan")
    at = stamps[k]
    rss = min(samples, key=lambda x: abs(x[0] - at))[1]
    print(f"step {k}: RSS {rss:.0f} MB, {per_step * 1000:.0f} ms per step (steps {prev}-{k})")
size = subprocess.run(["du", "-sk", run_dir], capture_output=True, text=True).stdout.split()[0]
ckpts = sorted(os.listdir(os.path.join(run_dir, "checkpoints")))
print(f"run directory {int(size) / 1024:.1f} MB; checkpoints kept: {ckpts}; total {time.time() - started:.0f} s")
