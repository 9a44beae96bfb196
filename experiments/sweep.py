"""Run every combination of a grid of config values with several seeds.

  python -m experiments.sweep --game connect_four --preset small \\
      --grid search.num_simulations=8,32,128 --grid network.blocks=2,6 --seeds 4

The seeds of one combination train in one XLA program (vmapped); --seeds-per-program caps that
when memory is short. Run the same command again (or with --out of an interrupted sweep) to
resume: finished runs are skipped and an unfinished one continues from its last checkpoint.
Output: results.csv (one row per run and evaluation point), summary.csv and summary.md (mean
and 95% interval per combination), elo.png and score_vs_random.png.
"""

from __future__ import annotations

import argparse
import sys
import time

from azjax import GAMES, PRESETS
from azjax.checkpoint import CheckpointError
from azjax.config import ConfigError


def parser() -> argparse.ArgumentParser:
  p = argparse.ArgumentParser(prog="python -m experiments.sweep", description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
  p.add_argument("--game", required=True, choices=GAMES)
  p.add_argument("--preset", default="small", choices=PRESETS)
  p.add_argument("--grid", action="append", default=[], metavar="SECTION.FIELD=V1,V2,...",
                 help="a field and its values (repeatable; the sweep runs every combination)")
  p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                 help="a fixed override for every run (repeatable)")
  p.add_argument("--seeds", type=int, default=4, help="seeds 0..N-1 per combination (default 4)")
  p.add_argument("--seeds-per-program", type=int, default=0, help="at most this many seeds per program (0: all)")
  p.add_argument("--out", help="sweep directory (default sweeps/<game>-<time>)")
  p.add_argument("--no-progress", action="store_true")
  return p


def main(argv=None) -> int:
  args = parser().parse_args(argv)
  if args.seeds < 1 or args.seeds_per_program < 0:
    parser().error("--seeds must be >= 1 and --seeds-per-program >= 0")
  from azjax.sweep import run_sweep
  out = args.out or f"sweeps/{args.game}-{time.strftime('%Y%m%d-%H%M%S')}"
  try:
    run_sweep(out, args.game, args.preset, args.overrides, args.grid, list(range(args.seeds)),
              args.seeds_per_program, progress=not args.no_progress)
  except (ConfigError, CheckpointError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  print(f"sweep directory: {out}")
  print(open(f"{out}/summary.md").read(), end="")
  return 0


if __name__ == "__main__":
  sys.exit(main())
