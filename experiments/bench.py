"""Benchmark the compiled step: throughput, compile time, memory, and the ratio to its floor.

  python -m experiments.bench --game connect_four --preset small [--set section.field=value ...] [--repeats 5]
      [--json out.json]
  python -m experiments.bench --game chess --preset paper --measure memory [--budget-gb 80]
  python -m experiments.bench --game connect_four --preset small --measure precision [--checkpoint RUN_DIR]
  python -m experiments.bench --game chess --preset cpu --cpu-devices 1   # one CPU device (default: one a core)

The floor is the same network passes with nothing else around them (see azjax/bench.py). The step runs on every
device, as the experiments' command runs it (a CPU split as `--cpu-devices` says), and so do the floors.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from azjax import distributed


def main(argv=None) -> int:
  try:  # first: the presets import the games, and pgx's import starts JAX's backend with the devices it has
    distributed.split_cpu(distributed.parse_known(argv))
  except ValueError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  from azjax import GAMES, PRESETS
  from azjax.config import ConfigError, apply_overrides
  p = argparse.ArgumentParser(prog="python -m experiments.bench", description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
  p.add_argument("--game", required=True, choices=GAMES)
  p.add_argument("--preset", default="small", choices=PRESETS)
  p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.FIELD=VALUE")
  p.add_argument("--repeats", type=int, default=5, help="timed calls after warm-up; the median is reported")
  p.add_argument("--measure", default="throughput",
                 help="comma-separated: throughput (default), memory (self-play memory per game, the largest batch "
                      "in --budget-gb), precision (bfloat16 against float32 inference)")
  p.add_argument("--budget-gb", type=float, default=80.0, help="device memory budget for --measure memory")
  p.add_argument("--checkpoint", help="a run directory or checkpoint whose network --measure precision uses")
  p.add_argument("--json", help="also write the figures to this JSON file")
  distributed.add_cpu_devices_argument(p)
  args = p.parse_args(argv)
  if args.repeats < 1:
    p.error("--repeats must be >= 1")
  from azjax import bench
  from azjax.presets import preset
  measures = [m.strip() for m in args.measure.split(",")]
  if not measures or any(m not in bench.MEASURES for m in measures):
    p.error(f"--measure {args.measure!r}: comma-separated, each one of {', '.join(bench.MEASURES)}")
  try:
    config = apply_overrides(preset(args.game, args.preset), args.overrides)
  except ConfigError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  variables = None
  from azjax.checkpoint import CheckpointError
  if args.checkpoint:
    from azjax import load_agent
    try:
      agent = load_agent(args.checkpoint)
    except CheckpointError as e:
      print(f"error: --checkpoint: {e}", file=sys.stderr)
      return 2
    if agent.config.game != config.game or agent.config.network != dataclasses.replace(
        config.network, inference_dtype=agent.config.network.inference_dtype):
      p.error(f"--checkpoint {args.checkpoint}: its network ({agent.config.game}, {agent.config.network}) is not "
              "the benchmarked one; pass the same --game and network --set values")
    variables = (agent.params, agent.bn_state)
  try:
    result = bench.run(config, args.repeats, measures, variables, args.budget_gb * 1e9)
  except ConfigError as e:  # what depends on the devices found (a batch that their count does not divide)
    print(f"error: {e}", file=sys.stderr)
    return 2
  print(bench.table(result))
  if args.json:
    with open(args.json, "w") as f:
      json.dump(result, f, indent=2)
  return 0


if __name__ == "__main__":
  sys.exit(main())
