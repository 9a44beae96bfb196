"""Side by side with the pgx AlphaZero example: wall time per million positions generated and trained on.

  python -m experiments.peer --pgx PATH/TO/pgx-checkout [--game go9] [--iterations 4] [--selfplay-batch 1024]
      [--plies 256] [--training-batch 4096] [--channels 128] [--blocks 6] [--simulations 32] [--out DIR]

--game picks any game both sides play (go9, chess, shogi, ...: the example takes any pgx env_id).
The defaults are the issue's settings, which are also the example's own defaults: go_9x9, a
128 x 6 network, 32 simulations of Gumbel search, 1024 games x 256 plies per iteration, training
batches of 4096, Adam 1e-3. The example runs from the checkout as it is (`pip install omegaconf
pydantic` first). Two things around it are swapped, both outside the part it times: its wandb
logging (a no-op here) and the baseline model it downloads for its evaluation (this machine is
offline; a uniform policy stands in); and where jax no longer has `device_put_replicated`, a
two-line equivalent is supplied. Its own clock (`hours`, self-play to the last update of an
iteration) is the figure. azjax runs the same work as one train_step per iteration: the same games
x plies generated, as many positions trained on (updates_per_step = games x plies / training batch),
Gumbel search, Adam 1e-3 and the same network size. The first two iterations of each side are
left out (the example compiles in its first and compiles its update again in its second, when its
inputs come back from pmap); the median of the others is reported.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import time

from azjax.config import GAMES

# Runs the example's train.py unchanged; only the two imports named above are replaced.
RUNNER = """
import os, runpy, sys, types
import jax, jax.numpy as jnp, pgx
if not hasattr(jax, "device_put_replicated"):  # removed from jax since the example was written
    jax.device_put_replicated = lambda x, devices: jax.tree.map(lambda a: jnp.stack([a] * len(devices)), x)
sys.modules["wandb"] = types.SimpleNamespace(init=lambda **kw: None, log=lambda *a, **kw: None)
def uniform_baseline(model_id, *args, **kwargs):
    actions = pgx.make(model_id.rsplit("_v", 1)[0]).num_actions
    return lambda obs: (jnp.zeros((obs.shape[0], actions)), jnp.zeros(obs.shape[0]))
pgx.make_baseline_model = uniform_baseline
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
"""


def peer_seconds(checkout: str, args, out: str) -> list[float]:
  """Seconds of each of the example's iterations, from the `hours` it prints."""
  script = os.path.join(checkout, "examples", "alphazero", "train.py")
  from azjax.games import spec
  overrides = [f"env_id={spec(args.game).pgx_id}", f"num_channels={args.channels}", f"num_layers={args.blocks}",
               f"selfplay_batch_size={args.selfplay_batch}", f"num_simulations={args.simulations}",
               f"max_num_steps={args.plies}", f"training_batch_size={args.training_batch}", "learning_rate=0.001",
               f"max_num_iters={args.iterations}", f"eval_interval={args.iterations + 1}", f"seed={args.seed}"]
  log = os.path.join(out, "peer.log")
  with open(log, "w") as f:
    r = subprocess.run([sys.executable, "-c", RUNNER, script, *overrides], cwd=out, stdout=f, stderr=subprocess.STDOUT,
                       env=dict(os.environ, WANDB_MODE="disabled"))
  if r.returncode != 0:
    raise RuntimeError(f"the pgx example failed (exit {r.returncode}); its output is in {log}")
  hours = []
  for line in open(log):
    if line.startswith("{") and "'hours'" in line:
      entry = ast.literal_eval(line.strip())
      if entry.get("iteration", 0) > 0:
        hours.append(entry["hours"])
  return [3600 * (b - a) for a, b in zip([0.0] + hours, hours)]


def azjax_config(args):
  from azjax.config import apply_overrides
  from azjax.presets import preset
  positions = args.selfplay_batch * args.plies
  return apply_overrides(preset(args.game, "small"), [
      f"network.blocks={args.blocks}", f"network.channels={args.channels}", f"network.value_hidden={args.channels}",
      "search.algorithm=gumbel", f"search.num_simulations={args.simulations}",
      f"selfplay.batch_size={args.selfplay_batch}", f"selfplay.chunk_plies={args.plies}",
      f"replay.window={positions}", f"train.batch_size={args.training_batch}",
      f"train.updates_per_step={positions // args.training_batch}", "train.optimizer=adam",
      "train.learning_rate=0.001", "train.lr_boundaries=", f"seed={args.seed}"])


def azjax_seconds(args) -> list[float]:
  """Seconds of each train_step at the same settings."""
  import jax

  from azjax import train_step as train_lib
  program, mesh = train_lib.build(azjax_config(args)), train_lib.make_mesh()
  state = train_lib.init_state(program, mesh)
  step = train_lib.make_train_step(program, mesh)
  times = []
  for _ in range(args.iterations):
    started = time.perf_counter()
    state, metrics = step(state)
    jax.block_until_ready(metrics)
    times.append(time.perf_counter() - started)
  return times


WARMUP = 2  # iterations left out of the timing


def summary(name: str, seconds: list[float], positions: int) -> dict:
  median = statistics.median(seconds[WARMUP:])
  return {"system": name, "iterations": len(seconds), "warmup_s": sum(seconds[:WARMUP]), "median_s": median,
          "positions_per_iteration": positions, "seconds_per_million_positions": median / positions * 1e6}


def main(argv=None) -> int:
  p = argparse.ArgumentParser(prog="python -m experiments.peer", description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
  p.add_argument("--pgx", required=True, help="a checkout of github.com/sotetsuk/pgx (its examples/alphazero runs)")
  p.add_argument("--game", default="go9", choices=GAMES, help="the game both sides play (default go9)")
  p.add_argument("--iterations", type=int, default=5, help=f"iterations per side; the first {WARMUP} are left out")
  p.add_argument("--selfplay-batch", type=int, default=1024)
  p.add_argument("--plies", type=int, default=256, help="plies per iteration (the example's max_num_steps)")
  p.add_argument("--training-batch", type=int, default=4096)
  p.add_argument("--channels", type=int, default=128)
  p.add_argument("--blocks", type=int, default=6)
  p.add_argument("--simulations", type=int, default=32)
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--only", choices=("peer", "azjax"), help="run one side only")
  p.add_argument("--out", default="peer-comparison", help="directory for the logs and results.json")
  args = p.parse_args(argv)
  script = os.path.join(args.pgx, "examples", "alphazero", "train.py")
  if args.only != "azjax" and not os.path.isfile(script):
    p.error(f"--pgx {args.pgx}: no examples/alphazero/train.py there; give a checkout of the pgx repository")
  positions = args.selfplay_batch * args.plies
  if args.iterations <= WARMUP or positions % args.training_batch:
    p.error(f"--iterations must be > {WARMUP}, and --selfplay-batch x --plies a multiple of --training-batch")
  os.makedirs(args.out, exist_ok=True)
  rows = []
  if args.only != "peer":
    rows.append(summary("azjax", azjax_seconds(args), positions))
  if args.only != "azjax":
    rows.append(summary("pgx example", peer_seconds(args.pgx, args, args.out), positions))
  import jax
  result = {"settings": {k: v for k, v in vars(args).items() if k not in ("out", "only")},
            "device": f"{len(jax.devices())} x {jax.devices()[0].device_kind}", "rows": rows}
  if len(rows) == 2:
    result["azjax_speedup"] = rows[1]["seconds_per_million_positions"] / rows[0]["seconds_per_million_positions"]
  with open(os.path.join(args.out, "results.json"), "w") as f:
    json.dump(result, f, indent=2)
  print(f"{args.game}, {args.blocks}x{args.channels}, {args.simulations} simulations, {args.selfplay_batch} games x "
        f"{args.plies} plies, training batch {args.training_batch}; {result['device']}")
  print(f"| system | first {WARMUP} iterations (compile) | median iteration | s per million positions |")
  print("|---|---|---|---|")
  for r in rows:
    print(f"| {r['system']} | {r['warmup_s']:.1f} s | {r['median_s']:.2f} s | "
          f"{r['seconds_per_million_positions']:,.0f} |")
  if "azjax_speedup" in result:
    print(f"azjax is {result['azjax_speedup']:.2f}x faster per position")
  return 0


if __name__ == "__main__":
  sys.exit(main())
