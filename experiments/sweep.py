"""Run every combination of a grid of config values with several seeds.

  python -m experiments.sweep --game connect_four --preset small \\
      --grid search.num_simulations=8,32,128 --grid network.blocks=2,6 --seeds 4

The seeds of one combination train in one XLA program (vmapped); --seeds-per-program caps that
when memory is short. Run the same command again with the same --out to resume (without --out
each sweep gets a new directory named by the time): finished runs are skipped and an unfinished
one continues from its last checkpoint. A run's seed is its place in --seeds.
Output: results.csv (one row per run and evaluation point), summary.csv and summary.md (mean
and 95% interval per combination), elo.png and score_vs_random.png.
"""

from __future__ import annotations

import argparse
import sys
import time

from azjax import distributed
from azjax.config import GAMES, ConfigError


def parser() -> argparse.ArgumentParser:
  from azjax.presets import PRESETS
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
  distributed.add_arguments(p)
  return p


def main(argv=None) -> int:
  try:  # first: building the parser imports the games, and pgx's import starts JAX's backend
    joined = distributed.initialize(distributed.parse_known(argv))
  except ValueError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  args = parser().parse_args(argv)
  if not 1 <= args.seeds <= 2 ** 32 or args.seeds_per_program < 0:
    parser().error("--seeds must be in 1..2^32 and --seeds-per-program >= 0")
  print(joined, flush=True)
  from azjax.checkpoint import CheckpointError
  from azjax.loop import DivergenceError
  from azjax.sweep import run_sweep
  if args.out is None and distributed.topology(args) is not None:
    parser().error("--out is needed on several processes (each must name the same directory)")
  out = args.out or f"sweeps/{args.game}-{time.strftime('%Y%m%d-%H%M%S')}"
  if args.out is None and distributed.is_main():
    print(f"sweep directory: {out} (the same command with --out {out} resumes it)", flush=True)
  try:
    run_sweep(out, args.game, args.preset, args.overrides, args.grid, list(range(args.seeds)),
              args.seeds_per_program, progress=not args.no_progress)
  except (ConfigError, CheckpointError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  except DivergenceError as e:
    print(f"error: {e}", file=sys.stderr)
    return 3
  except OSError as e:  # WriteError names the file; the earlier checkpoints are intact
    print(f"error: {e}", file=sys.stderr)
    return 4
  if not distributed.is_main():
    return 0
  print(f"sweep directory: {out}")
  print(open(f"{out}/summary.md").read(), end="")
  return 0


if __name__ == "__main__":
  sys.exit(main())
