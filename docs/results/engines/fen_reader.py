"""Seconds to read a FEN into a pgx state: pgx's own reader against azjax's (`pgx_private.from_fen`), each warmed
up first on the start position. `python docs/results/engines/fen_reader.py`."""

import time

import jax

from azjax.engines import pgx_private

FENS = ["rnbqkbnr/pppp1ppp/8/8/3pP3/8/PPP2PPP/RNBQKBNR b KQkq e3 0 3", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
        "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "8/5k2/8/8/8/8/1K6/8 b - - 10 60"]
START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

for name, read in (("pgx.experimental.chess.from_fen", pgx_private.symbol("from_fen")),
                   ("azjax pgx_private.from_fen", pgx_private.from_fen)):
  jax.block_until_ready(read(START))
  times = []
  for fen in FENS:
    t = time.perf_counter()
    jax.block_until_ready(read(fen))
    times.append(time.perf_counter() - t)
  print(f"{name}: " + ", ".join(f"{s:.3f}" for s in times) + " s")
