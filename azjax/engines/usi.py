"""A USI shogi engine: `python -m azjax.engines.usi --checkpoint PATH [--simulations N]`.

Speaks the Universal Shogi Interface in the order GUIs send it: usi, setoption,
isready, usinewgame, position startpos|sfen ... moves ..., go (btime, wtime,
byoyomi, binc, winc, nodes, infinite, ponder; `go mate` is answered `checkmate
notimplemented`), ponderhit, stop, gameover, quit. Moves are in SFEN
notation (7g7f, 8h2b+, P*5e); `bestmove resign` when no move is legal. Errors
are `info string error: ...`; a rejected `position` leaves the previous one.
`usi` is answered at once; the network loads meanwhile (launch.py) and compiles
at the first `isready`. The engine itself is `searching.UsiEngine`.
"""

from __future__ import annotations

from azjax.engines.launch import exit_now, launch


def build(args, facts):
  """The engine (imports jax and pgx: launch runs this in a thread while it answers `usi`)."""
  from azjax.engines.base import thinker_for  # noqa: PLC0415
  from azjax.engines.searching import UsiEngine  # noqa: PLC0415
  return UsiEngine(thinker_for(args, ("shogi",), facts))


def main(argv=None) -> None:
  launch("usi", ("shogi",), "azjax as a USI shogi engine", build, argv)
  exit_now()  # quit: smaller searches may still be compiling in the background


if __name__ == "__main__":
  main()
