"""Starting an engine: the command line, and a UCI/USI handshake answered before the network loads.

A GUI sends `uci` (`usi`) first and waits a few seconds for `uciok` (python-chess:
10 s). Importing jax, pgx (its chess tables) and restoring the network took
10-14 s (chess) and 25 s (shogi) on a slow 2-core CPU (results/engines), so the
handshake is answered from the checkpoint's meta alone, read as JSON
(checkpoint_files; this module imports neither jax nor orbax), while the engine
loads in a thread. Every other command waits for it; `quit`, or the end of
input, does not.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import sys
import threading
from typing import Callable, Iterator, TextIO

from azjax.checkpoint_files import CheckpointError, config_from_meta, meta_of, warning
from azjax.config import ConfigError, search_overrides

MAX_SIMULATIONS = 100_000  # a tree holds arrays of simulations x children (chess, compact: 87 MB each at this size)


def default_compile_cache() -> str:
  return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "azjax", "xla")


def engine_parser(description: str) -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(description=description)
  parser.add_argument("--checkpoint", required=True, help="a run directory, its checkpoints/ or one step's folder")
  parser.add_argument("--step", type=int, default=None, help="checkpoint step (default: the latest)")
  parser.add_argument("--simulations", type=int, default=None,
                      help="simulations per search (default: the checkpoint's own setting)")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--compile-cache", default=default_compile_cache(), metavar="DIR",
                      help="keep compiled searches here, so a restarted engine is ready sooner (default: %(default)s; "
                           "'' for none; JAX_COMPILATION_CACHE_DIR, if set, wins)")
  parser.add_argument("--set", action="append", default=[], metavar="search.FIELD=VALUE",
                      help="search with another setting than the checkpoint's (repeatable), e.g. "
                           "search.go_fill_eyes=false for Go, search.draw_value=-0.5 (contempt) for chess")
  return parser


@dataclasses.dataclass(frozen=True)
class Facts:
  """What an engine says of itself before its network loads, and which step that network is."""
  game: str
  step: int
  simulations: int  # a search's default size: --simulations, else the checkpoint's at play


def facts_of(args, games: tuple[str, ...]) -> Facts:
  """The engine's facts from its command line and checkpoint; SystemExit names a missing or damaged checkpoint,
  another game's, a --set field that is not search.* or not valid, or --simulations out of range."""
  try:
    meta = meta_of(args.checkpoint, args.step, warn=warning)
    config = search_overrides(config_from_meta(meta), args.set)
  except (CheckpointError, ConfigError, OSError) as e:
    raise SystemExit(f"error: {e}") from None
  if config.game not in games:
    raise SystemExit(f"error: {args.checkpoint} holds a {config.game} agent; this engine plays {' or '.join(games)}")
  if args.simulations is not None and not 1 <= args.simulations <= MAX_SIMULATIONS:
    raise SystemExit(f"error: --simulations must be between 1 and {MAX_SIMULATIONS}")
  return Facts(config.game, int(meta["step"]), args.simulations or config.search.simulations_at_play)


def hello(protocol: str, facts: Facts) -> list[str]:
  """The answer to `uci` / `usi`."""
  return [f"id name azjax {facts.game} step {facts.step}", "id author the azjax authors",
          f"option name Simulations type spin default {facts.simulations} min 1 max {MAX_SIMULATIONS}",
          f"{protocol}ok"]


def readable(stdin: TextIO) -> TextIO:
  """stdin with bytes that are not UTF-8 read as U+FFFD instead of ending the loop."""
  if hasattr(stdin, "reconfigure"):
    stdin.reconfigure(errors="replace")
  return stdin


class Loading:
  """`build()` in a daemon thread: a `quit` before it ends does not wait for it."""

  def __init__(self, build: Callable[[], object]):
    self._done = threading.Event()
    self._result, self._error = None, None
    threading.Thread(target=self._run, args=(build,), daemon=True).start()

  def _run(self, build) -> None:
    try:
      self._result = build()
    except BaseException as e:  # noqa: BLE001  (handed to the thread that waits for it)
      self._error = e
    finally:
      self._done.set()

  def done(self) -> bool:
    return self._done.is_set()

  def result(self):
    self._done.wait()
    if self._error is not None:
      raise self._error
    return self._result


def launch(protocol: str, games: tuple[str, ...], description: str, build: Callable[[object, Facts], object],
           argv=None, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> None:
  """Runs a UCI or USI engine on stdin: `build(args, facts)` makes it (in a thread: it imports jax and loads
  the network); until it is made, `<protocol>` is answered from the facts, and `quit` or the end of input exits at
  once (the loading thread may be inside an import: no interpreter shutdown beside it)."""
  args = engine_parser(description).parse_args(argv)
  facts = facts_of(args, games)
  loading = Loading(lambda: build(args, facts))
  lines: Iterator[str] = iter(readable(stdin))
  for line in lines:
    if not loading.done():
      words = line.split()
      if words == [protocol]:
        out.write("".join(f"{text}\n" for text in hello(protocol, facts)))
        out.flush()
        continue
      if words[:1] == ["quit"]:
        break
    try:
      engine = loading.result()
    except SystemExit:
      raise
    except Exception as e:  # noqa: BLE001  (said on stdout for the GUI's log, and on stderr)
      message = f"could not load {args.checkpoint} step {facts.step}: {type(e).__name__}: {e}"
      out.write(f"info string error: {message[:200]}\n")
      out.flush()
      raise SystemExit(f"error: {message}") from None
    engine.loop(itertools.chain([line], lines))
    return
  if not loading.done():
    exit_now(out)


def exit_now(out: TextIO = sys.stdout) -> None:
  """Ends the process at once, its answers flushed: after `quit`, a thread may still be loading the network or
  compiling a search (no interpreter shutdown beside it, and no GUI kept waiting for it)."""
  for stream in (out, sys.stdout, sys.stderr):
    stream.flush()
  os._exit(0)
