"""A UCI chess engine: `python -m azjax.engines.uci --checkpoint PATH [--simulations N]`.

Speaks the Universal Chess Interface as GUIs and python-chess's `chess.engine`
expect: uci, isready, ucinewgame, setoption, position startpos|fen ... moves
..., go (movetime, nodes, wtime/btime/winc/binc/movestogo, searchmoves, infinite, ponder:
its bestmove after ponderhit or stop), ponderhit, stop, quit. Errors are
`info string error: ...` lines; the engine keeps running and a rejected
`position` leaves the previous position in place. A game goes on past a
threefold repetition or fifty moves, which the rules leave to a claim
(`positions.PlayOnChessPosition`). `uci` is answered
at once; the network loads meanwhile (launch.py) and compiles at the first
`isready`. The engine itself is `searching.UciEngine`.
"""

from __future__ import annotations

from azjax.engines.launch import exit_now, launch


def build(args, facts):
  """The engine (imports jax and pgx: launch runs this in a thread while it answers `uci`)."""
  from azjax.engines.base import thinker_for  # noqa: PLC0415
  from azjax.engines.searching import UciEngine  # noqa: PLC0415
  return UciEngine(thinker_for(args, ("chess",), facts))


def main(argv=None) -> None:
  launch("uci", ("chess",), "azjax as a UCI chess engine", build, argv)
  exit_now()  # quit: smaller searches may still be compiling in the background


if __name__ == "__main__":
  main()
