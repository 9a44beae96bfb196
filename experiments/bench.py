"""Benchmark the compiled step: throughput, compile time, memory, and the ratio to its floor.

  python -m experiments.bench --game connect_four --preset small [--set section.field=value ...] [--repeats 5] [--json out.json]

The floor is the same network passes with nothing else around them (see azjax/bench.py).
"""

from __future__ import annotations

import argparse
import json
import sys

from azjax import GAMES, PRESETS
from azjax.config import ConfigError, apply_overrides


def main(argv=None) -> int:
  p = argparse.ArgumentParser(prog="python -m experiments.bench", description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
  p.add_argument("--game", required=True, choices=GAMES)
  p.add_argument("--preset", default="small", choices=PRESETS)
  p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.FIELD=VALUE")
  p.add_argument("--repeats", type=int, default=5, help="timed calls after warm-up; the median is reported")
  p.add_argument("--json", help="also write the figures to this JSON file")
  args = p.parse_args(argv)
  if args.repeats < 1:
    p.error("--repeats must be >= 1")
  from azjax import bench
  from azjax.presets import preset
  try:
    config = apply_overrides(preset(args.game, args.preset), args.overrides)
  except ConfigError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  result = bench.run(config, args.repeats)
  print(bench.table(result))
  if args.json:
    with open(args.json, "w") as f:
      json.dump(result, f, indent=2)
  return 0


if __name__ == "__main__":
  sys.exit(main())
