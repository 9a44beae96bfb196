"""Play a trained agent against a real engine.

  python -m experiments.match --game chess --checkpoint runs/chess --opponent stockfish --skill 0 --games 100 --movetime 100
  python -m experiments.match --game go9 --checkpoint runs/go9 --opponent gnugo --level 10 --games 50
  python -m experiments.match --game go9 --checkpoint runs/go9 --opponent gnugo --level 1 --set search.go_fill_eyes=false
  python -m experiments.match --game go9 --checkpoint runs/go9 --opponent gnugo --level 1 --capture-all-dead
  python -m experiments.match --game shogi --checkpoint runs/shogi --opponent fairy-stockfish --games 20

Engines come from Debian packages: sudo apt-get install stockfish gnugo fairy-stockfish.
Records (games.pgn / games.sgf / games.usi and kif/game_NNN.kif), results.csv and summary.txt go to --out.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

from azjax.checkpoint import CheckpointError
from azjax.config import ConfigError
from azjax.engines import match as m
from azjax.engines.base import Thinker
from azjax.agent import load_agent


def parse(argv):
  p = argparse.ArgumentParser(prog="python -m experiments.match", description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
  p.add_argument("--game", required=True, choices=sorted(m.OPPONENTS))
  p.add_argument("--checkpoint", required=True, help="run directory or checkpoint of an agent of --game")
  p.add_argument("--opponent", required=True, choices=sorted({o for os_ in m.OPPONENTS.values() for o in os_}))
  p.add_argument("--games", type=int, default=10)
  p.add_argument("--simulations", type=int, default=None, help="the agent's simulations per move")
  p.add_argument("--movetime", type=int, default=100, help="the engine's milliseconds per move (chess, shogi)")
  p.add_argument("--skill", type=int, default=None, help="Stockfish / Fairy-Stockfish Skill Level")
  p.add_argument("--elo", type=int, default=None, help="Stockfish UCI_Elo (with UCI_LimitStrength)")
  p.add_argument("--depth", type=int, default=None, help="Stockfish: search at most this many plies a move")
  p.add_argument("--level", type=int, default=10, help="GNU Go --level (0-10)")
  p.add_argument("--komi", type=float, default=7.5)
  p.add_argument("--capture-all-dead", action="store_true",
                 help="GNU Go plays the game out under Tromp-Taylor, capturing every dead stone before it passes "
                      "(default: it passes when it judges the game over, and its count removes dead stones)")
  p.add_argument("--opening-plies", type=int, default=2, help="seeded random first plies; a game pair shares one")
  p.add_argument("--max-plies", type=int, default=1000)
  p.add_argument("--engine-path", default=None)
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--set", action="append", default=[], metavar="search.FIELD=VALUE",
                 help="play with another search setting than the checkpoint's (repeatable)")
  p.add_argument("--out", default=None, help="output directory (default matches/<game>-<opponent>-<time>)")
  args = p.parse_args(argv)
  if args.opponent not in m.OPPONENTS[args.game]:
    p.error(f"--opponent {args.opponent} does not play {args.game}; choose {', '.join(m.OPPONENTS[args.game])}")
  if args.capture_all_dead and args.opponent != "gnugo":
    p.error("--capture-all-dead is GNU Go's (--opponent gnugo)")
  for name in ("games", "simulations", "movetime", "depth", "elo"):
    if getattr(args, name) is not None and getattr(args, name) < 1:
      p.error(f"--{name} must be >= 1")
  if not 0 <= args.level <= 10:
    p.error(f"--level {args.level}: GNU Go's levels are 0-10")
  low = -20 if args.opponent == "fairy-stockfish" else 0  # Fairy-Stockfish goes below Stockfish's 0
  if args.skill is not None and not low <= args.skill <= 20:
    p.error(f"--skill {args.skill}: {args.opponent}'s Skill Level is {low}-20")
  if args.engine_path is not None and not (os.path.isfile(args.engine_path) and os.access(args.engine_path, os.X_OK)):
    p.error(f"--engine-path {args.engine_path}: no executable file there")
  return args


def opponent_factory(args):
  path = m.find_engine(args.opponent, args.engine_path)
  if args.opponent == "stockfish":
    return functools.partial(m.Stockfish, path, args.movetime, args.skill, args.elo, depth=args.depth)
  if args.opponent == "gnugo":
    return functools.partial(m.GnuGo, path, args.level, 9 if args.game == "go9" else 19, args.komi,
                             capture_all_dead=args.capture_all_dead)
  return functools.partial(m.FairyStockfish, path, args.movetime, args.skill)


def main(argv=None) -> int:
  args = parse(argv)
  try:
    agent = load_agent(args.checkpoint).with_search(args.set)
  except (CheckpointError, ConfigError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  if agent.config.game != args.game:
    print(f"error: {args.checkpoint} holds a {agent.config.game} agent, not {args.game}", file=sys.stderr)
    return 2
  out = Path(args.out or f"matches/{args.game}-{args.opponent}-{time.strftime('%Y%m%d-%H%M%S')}")
  thinker = Thinker(agent, args.simulations, args.seed)
  try:
    result, outcomes = m.run_match(thinker, opponent_factory(args), args.game, args.games, out,
                                   opening_plies=args.opening_plies, seed=args.seed, max_plies=args.max_plies)
  except m.EngineFailure as e:
    print(f"error: the engine could not start: {e}", file=sys.stderr)
    return 1
  aborted = sum(o.points is None for o in outcomes)
  d, lo, hi = result.elo()
  slo, shi = result.interval()
  settings = "".join(f", {s}" for s in args.set)
  opponent = args.opponent + (" (Tromp-Taylor: --capture-all-dead)" if args.capture_all_dead else "")
  margins = m.mean_margin(outcomes)
  summary = (f"azjax {args.game} step {agent.step} ({thinker.simulations} simulations{settings}) against {opponent}\n"
             f"games {result.games} (+{aborted} aborted): {result.wins} wins, {result.draws} draws, "
             f"{result.losses} losses\n"
             f"score {result.score:.3f} (95% CI {slo:.3f}-{shi:.3f})\n"
             f"Elo difference {d:+.0f} (95% CI {lo:+.0f} to {hi:+.0f})\n"
             + (f"mean margin by the engine's count {margins[0]:+.1f} points over {margins[1]} games\n"
                if margins else ""))
  (out / "summary.txt").write_text(summary)
  print(summary + f"records in {out}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
