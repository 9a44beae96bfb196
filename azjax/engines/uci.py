"""A UCI chess engine: `python -m azjax.engines.uci --checkpoint PATH [--simulations N]`.

Speaks the Universal Chess Interface as GUIs and python-chess's `chess.engine`
expect: uci, isready, ucinewgame, setoption, position startpos|fen ... moves
..., go (movetime, nodes, wtime/btime/winc/binc/movestogo, infinite), stop,
quit. Errors are `info string error: ...` lines; the engine keeps running and a
rejected `position` leaves the previous position in place.
"""

from __future__ import annotations

import re
import sys

from azjax.engines.base import ProtocolError, SearchingEngine, Thinker, engine_parser, serve, thinker_for
from azjax.engines.positions import ChessPosition


class UciEngine(SearchingEngine):
  protocol = "uci"
  position_cls = ChessPosition
  setup_word, setup_fields = "fen", 6
  start_setup = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
  go_words = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate", "infinite",
              "ponder")
  clocks = (("wtime", "winc"), ("btime", "binc"))  # white moves first
  resign_word = "(none)"

  def __init__(self, thinker: Thinker, out=sys.stdout):
    super().__init__(thinker, out)
    self.commands["debug"] = lambda a: None

  def set_option(self, args) -> None:
    given = re.fullmatch(r"name (.+?) value (.*)", " ".join(args))
    if not given:
      raise ProtocolError("setoption: expected 'setoption name <name> value <value>'")
    if given[1].strip().lower() != "simulations":
      raise ProtocolError(f"setoption: no option named {given[1].strip()!r}")
    self.set_simulations(given[2])


def main(argv=None) -> None:
  serve(UciEngine(thinker_for(engine_parser("azjax as a UCI chess engine").parse_args(argv), ("chess",))))


if __name__ == "__main__":
  main()
