"""Seconds from starting a UCI/USI engine process to its `uciok`/`usiok` and to its first `readyok`.

  python docs/results/engines/handshake.py --checkpoint runs/chess_play32_s0 [--repo PATH] [--repeats 3] \
      [-- --compile-cache DIR]

`--repo` runs the engine module from another checkout (e.g. a `git worktree` of an earlier commit), so the
same checkpoint and machine time both versions. The `readyok` includes loading the network and compiling
every search of the engine's ladder (the first `isready`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def start_once(repo: Path, protocol: str, checkpoint: str, simulations: int, extra: list[str]) -> dict:
  engine = subprocess.Popen([sys.executable, "-m", f"azjax.engines.{protocol}", "--checkpoint", checkpoint,
                             "--simulations", str(simulations), *extra], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
  started, seen = time.perf_counter(), {}
  engine.stdin.write(f"{protocol}\n")
  engine.stdin.flush()
  for word, command in ((f"{protocol}ok", "isready"), ("readyok", "quit")):
    while True:
      line = engine.stdout.readline()
      if not line:
        raise SystemExit(f"the engine ended before {word}")
      if line.strip() == word:
        seen[word] = round(time.perf_counter() - started, 2)
        break
    engine.stdin.write(f"{command}\n")
    engine.stdin.flush()
  engine.wait(timeout=120)
  return seen


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--checkpoint", required=True)
  parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[3]))
  parser.add_argument("--protocol", default="uci", choices=["uci", "usi"])
  parser.add_argument("--simulations", type=int, default=8)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("engine_args", nargs="*", help="more arguments for the engine, after --")
  args = parser.parse_args()
  checkpoint = str(Path(args.checkpoint).resolve())
  runs = [start_once(Path(args.repo), args.protocol, checkpoint, args.simulations, args.engine_args)
          for _ in range(args.repeats)]
  summary = {word: {"runs": [r[word] for r in runs], "median": statistics.median(r[word] for r in runs)}
             for word in runs[0]}
  print(json.dumps({"repo": args.repo, "checkpoint": args.checkpoint, "simulations": args.simulations,
                    "engine_args": args.engine_args, **summary}))


if __name__ == "__main__":
  main()
