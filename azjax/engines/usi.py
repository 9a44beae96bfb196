"""A USI shogi engine: `python -m azjax.engines.usi --checkpoint PATH [--simulations N]`.

Speaks the Universal Shogi Interface in the order GUIs send it: usi, setoption,
isready, usinewgame, position startpos|sfen ... moves ..., go (btime, wtime,
byoyomi, binc, winc, nodes, infinite), stop, gameover, quit. Moves are in SFEN
notation (7g7f, 8h2b+, P*5e); `bestmove resign` when no move is legal. Errors
are `info string error: ...`; a rejected `position` leaves the previous one.
"""

from __future__ import annotations

import sys

from azjax.engines.base import (ProtocolError, SearchingEngine, Thinker, clock_budget, engine_args, load,
                                parse_limits)
from azjax.engines.positions import ShogiPosition

GO_WORDS = {w: w for w in ("btime", "wtime", "byoyomi", "binc", "winc", "nodes", "movetime", "infinite", "ponder",
                           "mate")}


class UsiEngine(SearchingEngine):
  ready_word = "readyok"
  resign_word = "resign"

  def __init__(self, thinker: Thinker, out=sys.stdout):
    super().__init__(thinker, ShogiPosition, out)
    self.commands.update(usi=self.usi, isready=self.ready, usinewgame=self.new_game, setoption=self.set_option,
                         position=self.set, go=self.go, stop=self.stop, quit=self.quit,
                         gameover=lambda a: self.halt(), ponderhit=lambda a: None)

  def usi(self, _args) -> None:
    agent = self.thinker.agent
    self.send(f"id name azjax {agent.config.game} step {agent.step}")
    self.send("id author the azjax authors")
    self.send(f"option name Simulations type spin default {self.thinker.simulations} min 1 max 1000000")
    self.send("usiok")

  def new_game(self, _args) -> None:
    self.halt()
    self.position = ShogiPosition()

  def set_option(self, args) -> None:
    if len(args) < 2 or args[0] != "name":
      raise ProtocolError("setoption: expected 'setoption name <name> value <value>'")
    if args[1] != "Simulations":
      return  # USI GUIs send their own options (USI_Hash, USI_Ponder); they do not apply here
    try:
      sims = int(args[args.index("value") + 1])
    except (ValueError, IndexError):
      raise ProtocolError("setoption: Simulations needs 'value <number>'") from None
    if sims < 1:
      raise ProtocolError("setoption: Simulations must be >= 1")
    self.halt()
    self.thinker.simulations = sims
    self.warm = False

  def set(self, args) -> None:
    if not args:
      raise ProtocolError("position: expected startpos or sfen")
    moves = args[args.index("moves") + 1:] if "moves" in args else []
    head = args[:args.index("moves")] if "moves" in args else args
    if head == ["startpos"]:
      self.set_position(ShogiPosition, moves)
    elif head[0] == "sfen" and len(head) == 5:
      sfen = " ".join(head[1:])
      self.set_position(lambda: ShogiPosition(sfen), moves)
    else:
      raise ProtocolError("position: expected 'startpos' or 'sfen' with four fields, then optional 'moves ...'")

  def go(self, args) -> None:
    try:
      limits = parse_limits(args, GO_WORDS)
    except ProtocolError as e:
      self.error(f"{e}; searching with the default settings")
      limits = {}
    sente = self.position.color == 0
    left = limits.get("btime" if sente else "wtime")
    increment = limits.get("binc" if sente else "winc", 0)
    byoyomi = limits.get("byoyomi", 0)
    seconds = clock_budget(left, increment, None, limits.get("movetime"))
    if byoyomi:
      seconds = (seconds or 0.0) + 0.8 * byoyomi / 1000.0
    self.start_search(seconds, limits.get("nodes"), bool(limits.get("infinite")))


def main(argv=None) -> None:
  args = engine_args("azjax as a USI shogi engine", argv)
  engine = UsiEngine(Thinker(load(args, ("shogi",)), args.simulations, args.seed))
  engine.loop(sys.stdin)


if __name__ == "__main__":
  main()
