"""Issue 17 section 1: is the whole train_step slower than its two halves? An ablation.

  python docs/results/bench/step/ablate.py GAME [--preset cpu] [--rounds 5] [section.field=value ...]

Compiles the train_step and variants of it, each its own program, then times them in interleaved
rounds (one call of each per round, so a noisy machine slows all alike) and reports the medians:
  all        the train_step
  selfplay   its self-play half alone (phase="selfplay")
  train      its training half alone (phase="train"), on a replay that holds finished games
  all/0      the whole step with train.updates_per_step=0: self-play and all but the updates
  all/scan   the whole step with the updates as a loop (train.update_loop=scan)
The base config is issue 17's small chess one (2x32, 16 simulations, 64 games x 8 plies, 1 x 256 updates);
--preset NAME starts from that preset instead. Every variant but all/0 (which has no updates) starts from a
replay filled by 64 plies of self-play, or by self-play past selfplay.max_plies where that is longer, so that
every lane holds a finished game and the updates run (train_step skips them until then).
"""

import argparse
import json
import statistics
import time

import jax

from azjax import train_step as train_lib
from azjax.config import apply_overrides
from azjax.presets import preset

SMALL = ["network.blocks=2", "network.channels=32", "network.value_hidden=64", "search.num_simulations=16",
         "selfplay.batch_size=64", "selfplay.chunk_plies=8", "train.batch_size=256", "train.updates_per_step=1",
         "replay.window=8192"]


def main():
  p = argparse.ArgumentParser()
  p.add_argument("game")
  p.add_argument("overrides", nargs="*")
  p.add_argument("--preset", default=None, help="start from this preset instead of issue 17's small config")
  p.add_argument("--rounds", type=int, default=5)
  p.add_argument("--variants", default="all,selfplay,train,all/0,all/scan")
  args = p.parse_intermixed_args()
  overrides = (SMALL if args.preset is None else []) + args.overrides
  base = apply_overrides(preset(args.game, args.preset or "small"), overrides)
  extra = {"all/0": ["train.updates_per_step=0"], "all/scan": ["train.update_loop=scan"]}
  steps, states, compile_s = {}, {}, {}
  for name in args.variants.split(","):
    phase = name.split("/")[0]
    config = apply_overrides(base, extra.get(name, []))
    program, mesh = train_lib.build(config), train_lib.make_mesh()
    started = time.perf_counter()
    step = train_lib.make_train_step(program, mesh, phase=phase)
    state = train_lib.init_state(program, mesh)
    if name != "all/0":  # train on a replay already holding finished games (past the cap, when one is set)
      fill = train_lib.make_train_step(program, mesh, phase="selfplay")
      chunk = config.selfplay.chunk_plies
      for _ in range(max(2, 64 // chunk, -(-config.selfplay.max_plies // chunk) + 1)):
        state, _ = fill(state)
    state = jax.block_until_ready(step(state)[0])  # compile and warm up
    compile_s[name] = time.perf_counter() - started
    steps[name], states[name] = step, state
    print(f"{args.game} {name:<9} ready after {compile_s[name]:.0f} s", flush=True)
  times = {name: [] for name in steps}
  for r in range(args.rounds):
    for name, step in steps.items():
      started = time.perf_counter()
      states[name] = jax.block_until_ready(step(states[name])[0])
      times[name].append(time.perf_counter() - started)
    print(f"round {r}: " + ", ".join(f"{n} {t[-1]:.3f}" for n, t in times.items()), flush=True)
  out = {"game": args.game, "preset": args.preset or "small", "overrides": overrides, "device": jax.devices()[0].device_kind,
         "rounds": args.rounds, "median_s": {n: statistics.median(t) for n, t in times.items()}, "times_s": times,
         "compile_and_warmup_s": compile_s}
  m = out["median_s"]
  if {"all", "selfplay", "train"} <= m.keys():
    out["all_over_halves"] = m["all"] / (m["selfplay"] + m["train"])
  print(json.dumps(out))


if __name__ == "__main__":
  main()
