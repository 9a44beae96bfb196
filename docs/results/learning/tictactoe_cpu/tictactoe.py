"""Tic-tac-toe's default on a CPU as it was before results section 73 (the `cpu` preset with Gumbel search and a
constant learning rate) and variants, one of them the preset since (`puct_drops`), seeds 0 and 1: each trained run against the exhaustive minimax player of the test suite (tests/minimax.py, 64 games, the
agent first in half) and against uniform random (64 games).

  python docs/results/learning/tictactoe_cpu/tictactoe.py runs/tictactoe_cpu [VARIANT ...]   # -> results.md beside this
"""
import subprocess
import sys
import time
from pathlib import Path

import jax

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tests"))
import azjax  # noqa: E402
from azjax.games import make_env  # noqa: E402
from test_learning import play_minimax  # noqa: E402

# The cpu preset before section 73: Gumbel search, every move drawn (play_unvisited), a constant learning rate.
GUMBEL = ["search.algorithm=gumbel", "search.play_unvisited=true", "train.lr_boundaries="]
VARIANTS = {  # name: (preset, overrides)
    "policy": ("cpu", GUMBEL),  # the cpu preset before section 73
    "halving": ("cpu", [*GUMBEL, "search.gumbel_act=halving"]),
    "cpu_drops": ("cpu", [*GUMBEL[:2], "train.lr_boundaries=600,900"]),  # small's two tenfold drops (steps 75, 112)
    "puct_drops": ("cpu", ["search.algorithm=puct", "search.play_unvisited=false", "train.lr_boundaries=600,900"]),
}  # puct_drops is the cpu preset since section 73 (play_unvisited is the same draw under PUCT)
runs = Path(sys.argv[1])
out = Path(__file__).parent / "results.md"
lines = out.read_text().splitlines() if out.exists() else [
    "| variant | overrides of the preset | seed | minimax, as first player: L-D-W | as second | uniform random: W-D-L | run's seconds |",
    "|---|---|---|---|---|---|---|"]
for name in sys.argv[2:] or list(VARIANTS):
  preset, overrides = VARIANTS[name]
  for seed in (0, 1):
    run = runs / f"{name}_s{seed}"
    if not (run / "checkpoints").exists():
      started = time.time()
      subprocess.run([sys.executable, "-m", "experiments.tictactoe", "--preset", preset, "--run-dir", str(run), "--seed",
                      str(seed), "--no-progress", "--cpu-devices", "1", *[a for o in overrides for a in ("--set", o)]],
                     check=True, cwd=ROOT)
      (run / "seconds.txt").write_text(f"{time.time() - started:.0f}\n")  # the command's, compile included
    seconds = (run / "seconds.txt").read_text().strip() if (run / "seconds.txt").exists() else "-"
    agent = azjax.load_agent(run)
    outcome, first = play_minimax(agent, games=64, seed=7)
    tally = lambda o: f"{(o < 0).sum()}-{(o == 0).sum()}-{(o > 0).sum()}"
    r = azjax.match(make_env("tictactoe"), agent.player(), azjax.random_player, jax.random.PRNGKey(3), 64)
    row = (f"| {name} | {preset}: {' '.join(overrides)} | {seed} | {tally(outcome[first])} | {tally(outcome[~first])} | "
           f"{r.wins}-{r.draws}-{r.losses} | {seconds} |")
    lines = [l for l in lines if not l.startswith(f"| {name} | ") or f" | {seed} | " not in l] + [row]
    print(row, flush=True)
    out.write_text("\n".join(lines) + "\n")
