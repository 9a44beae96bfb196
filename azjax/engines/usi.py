"""A USI shogi engine: `python -m azjax.engines.usi --checkpoint PATH [--simulations N]`.

Speaks the Universal Shogi Interface in the order GUIs send it: usi, setoption,
isready, usinewgame, position startpos|sfen ... moves ..., go (btime, wtime,
byoyomi, binc, winc, nodes, infinite), stop, gameover, quit. Moves are in SFEN
notation (7g7f, 8h2b+, P*5e); `bestmove resign` when no move is legal. Errors
are `info string error: ...`; a rejected `position` leaves the previous one.
"""

from __future__ import annotations

import sys

from azjax.engines.base import ProtocolError, SearchingEngine, Thinker, engine_parser, serve, thinker_for
from azjax.engines.positions import ShogiPosition


class UsiEngine(SearchingEngine):
  protocol = "usi"
  position_cls = ShogiPosition
  setup_word, setup_fields = "sfen", 4
  start_setup = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
  go_words = ("btime", "wtime", "byoyomi", "binc", "winc", "nodes", "movetime", "infinite", "ponder", "mate")
  clocks = (("btime", "binc"), ("wtime", "winc"))  # black (sente) moves first
  resign_word = "resign"

  def __init__(self, thinker: Thinker, out=sys.stdout):
    super().__init__(thinker, out)
    self.commands["gameover"] = lambda a: self.halt()

  def set_option(self, args) -> None:
    if len(args) < 2 or args[0] != "name":
      raise ProtocolError("setoption: expected 'setoption name <name> value <value>'")
    if args[1] == "Simulations":  # GUIs also send their own options (USI_Hash, USI_Ponder): they do not apply
      if "value" not in args[2:-1]:
        raise ProtocolError("setoption: Simulations needs 'value <number>'")
      self.set_simulations(args[args.index("value") + 1])


def main(argv=None) -> None:
  serve(UsiEngine(thinker_for(engine_parser("azjax as a USI shogi engine").parse_args(argv), ("shogi",))))


if __name__ == "__main__":
  main()
