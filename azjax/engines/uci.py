"""A UCI chess engine: `python -m azjax.engines.uci --checkpoint PATH [--simulations N]`.

Speaks the Universal Chess Interface as GUIs and python-chess's `chess.engine`
expect: uci, isready, ucinewgame, setoption, position startpos|fen ... moves
..., go (movetime, nodes, wtime/btime/winc/binc/movestogo, infinite), stop,
quit. Errors are `info string error: ...` lines; the engine keeps running and a
rejected `position` leaves the previous position in place.
"""

from __future__ import annotations

import sys

from azjax.engines.base import (ProtocolError, SearchingEngine, Thinker, clock_budget, engine_args, load,
                                parse_limits)
from azjax.engines.positions import ChessPosition

GO_WORDS = {w: w for w in ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate",
                           "infinite", "ponder")}


class UciEngine(SearchingEngine):
  ready_word = "readyok"
  resign_word = "(none)"

  def __init__(self, thinker: Thinker, out=sys.stdout):
    super().__init__(thinker, ChessPosition, out)
    self.commands.update(uci=self.uci, isready=self.ready, ucinewgame=self.new_game, setoption=self.set_option,
                         position=self.set, go=self.go, stop=self.stop, quit=self.quit, debug=lambda a: None,
                         ponderhit=lambda a: None)

  def uci(self, _args) -> None:
    agent = self.thinker.agent
    self.send(f"id name azjax {agent.config.game} step {agent.step}")
    self.send("id author the azjax authors")
    self.send(f"option name Simulations type spin default {self.thinker.simulations} min 1 max 1000000")
    self.send("uciok")

  def new_game(self, _args) -> None:
    self.halt()
    self.position = ChessPosition()

  def set_option(self, args) -> None:
    text = " ".join(args)
    if not text.startswith("name ") or " value " not in text:
      raise ProtocolError("setoption: expected 'setoption name <name> value <value>'")
    name, value = text[5:].split(" value ", 1)
    if name.strip().lower() != "simulations":
      raise ProtocolError(f"setoption: no option named {name.strip()!r}")
    try:
      sims = int(value)
    except ValueError:
      raise ProtocolError(f"setoption: Simulations needs a number, not {value!r}") from None
    if sims < 1:
      raise ProtocolError("setoption: Simulations must be >= 1")
    self.halt()
    self.thinker.simulations = sims
    self.warm = False

  def set(self, args) -> None:
    if not args:
      raise ProtocolError("position: expected startpos or fen")
    moves = args[args.index("moves") + 1:] if "moves" in args else []
    head = args[:args.index("moves")] if "moves" in args else args
    if head == ["startpos"]:
      self.set_position(ChessPosition, moves)
    elif head[0] == "fen" and len(head) == 7:
      fen = " ".join(head[1:])
      self.set_position(lambda: ChessPosition(fen), moves)
    else:
      raise ProtocolError("position: expected 'startpos' or 'fen' with six fields, then optional 'moves ...'")

  def go(self, args) -> None:
    try:
      limits = parse_limits(args, GO_WORDS)
    except ProtocolError as e:
      self.error(f"{e}; searching with the default settings")
      limits = {}
    white = self.position.color == 0
    seconds = clock_budget(limits.get("wtime" if white else "btime"), limits.get("winc" if white else "binc", 0),
                           limits.get("movestogo"), limits.get("movetime"))
    self.start_search(seconds, limits.get("nodes"), bool(limits.get("infinite")))


def main(argv=None) -> None:
  args = engine_args("azjax as a UCI chess engine", argv)
  engine = UciEngine(Thinker(load(args, ("chess",)), args.simulations, args.seed))
  engine.loop(sys.stdin)


if __name__ == "__main__":
  main()
