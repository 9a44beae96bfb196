"""What the UCI, USI and GTP engines share: the command loop, searching one position, time.

The loop never dies on input: a command that fails answers in the protocol's
error form and the engine reads the next line. Searches have a fixed number
of simulations (the checkpoint's, or --simulations). A time limit picks the
largest rung of a small ladder (the full count, a quarter, a sixteenth) that
the measured speed says fits; all rungs compile at the first `isready`, so a
clock never pays for compilation after that.
"""

from __future__ import annotations

import argparse
import math
import sys
import threading
import time
from typing import Callable, TextIO

import jax
import numpy as np

from azjax.agent import Agent, load_agent


class ProtocolError(ValueError):
  """A command the engine understood the name of but could not carry out."""


def value_to_cp(value: float) -> int:
  """Centipawns for a value in [-1, 1] via the logistic model: 0.5 expected score is 0, 0.76 is +200."""
  p = min(max((value + 1.0) / 2.0, 1e-4), 1.0 - 1e-4)
  return int(round(400.0 * math.log10(p / (1.0 - p))))


class Thinker:
  """Searches one position with the agent; knows how fast each search size runs."""

  def __init__(self, agent: Agent, simulations: int | None = None, seed: int = 0):
    self.agent = agent
    self.simulations = simulations or agent.config.search.num_simulations
    self.seconds_per_sim: dict[int, float] = {}
    self.key = jax.random.PRNGKey(seed)
    self.searches = 0

  def ladder(self) -> list[int]:
    s = self.simulations
    return sorted({max(1, s // 16), max(1, s // 4), s})

  def think(self, state, simulations: int) -> tuple[np.ndarray, float, float]:
    """(search policy [A], root value for the mover, seconds) of one search of `simulations`."""
    self.searches += 1
    batch = jax.tree.map(lambda x: x[None], state)
    started = time.perf_counter()
    weights, value = self.agent.search(batch, jax.random.fold_in(self.key, self.searches),
                                       num_simulations=simulations)
    weights, value = jax.device_get((weights[0], value[0]))
    seconds = time.perf_counter() - started
    self.seconds_per_sim[simulations] = seconds / simulations
    return np.asarray(weights), float(value), seconds

  def warm_up(self, state) -> None:
    for sims in self.ladder():
      if sims not in self.seconds_per_sim:
        self.think(state, sims)  # compiles
        self.think(state, sims)  # times

  def simulations_for(self, seconds: float | None, nodes: int | None = None) -> int:
    """The search size for a limit: `nodes` exactly, else the largest rung that fits `seconds`."""
    if nodes:
      return max(1, nodes)
    if seconds is None:
      return self.simulations
    rungs = self.ladder()
    fits = [r for r in rungs if r * self.seconds_per_sim.get(r, math.inf) <= seconds]
    return fits[-1] if fits else rungs[0]


def clock_budget(time_left_ms: float | None, increment_ms: float = 0.0, moves_to_go: int | None = None,
                 fixed_ms: float | None = None) -> float | None:
  """Seconds to spend on a move: a fixed time, or a share of the clock plus most of the increment."""
  if fixed_ms is not None:
    return fixed_ms / 1000.0
  if time_left_ms is None:
    return None
  share = time_left_ms / max(moves_to_go or 30, 1) + 0.8 * increment_ms
  return max(0.0, min(share, 0.5 * time_left_ms)) / 1000.0


class Engine:
  """A line protocol engine: subclasses fill `commands` and say how errors look."""

  def __init__(self, out: TextIO = sys.stdout):
    self.out = out
    self._lock = threading.Lock()
    self.commands: dict[str, Callable[[list[str]], None]] = {}
    self.running = True

  def send(self, text: str) -> None:
    with self._lock:
      self.out.write(text + "\n")
      self.out.flush()

  def error(self, message: str) -> None:
    raise NotImplementedError

  def handle(self, line: str) -> bool:
    """Carries out one command line; returns False once the engine should quit."""
    words = line.strip().split()
    if not words:
      return self.running
    try:
      command = self.commands.get(words[0])
      if command is None:
        self.unknown(words)
      else:
        command(words[1:])
    except ProtocolError as e:
      self.error(str(e))
    except Exception as e:  # noqa: BLE001  (the engine must outlive any command)
      self.error(f"internal error in {words[0]!r}: {type(e).__name__}: {e}")
    return self.running

  def unknown(self, words: list[str]) -> None:
    self.error(f"unknown command: {' '.join(words)[:80]}")

  def loop(self, lines) -> None:
    for line in lines:
      if not self.handle(line):
        break
    self.close()

  def close(self) -> None:
    pass


def engine_args(description: str, argv=None) -> argparse.Namespace:
  parser = argparse.ArgumentParser(description=description)
  parser.add_argument("--checkpoint", required=True, help="a run directory, its checkpoints/ or one step's folder")
  parser.add_argument("--step", type=int, default=None, help="checkpoint step (default: the latest)")
  parser.add_argument("--simulations", type=int, default=None,
                      help="simulations per search (default: the checkpoint's own setting)")
  parser.add_argument("--seed", type=int, default=0)
  return parser.parse_args(argv)


def load(args, games: tuple[str, ...]) -> Agent:
  agent = load_agent(args.checkpoint, args.step)
  if agent.config.game not in games:
    raise SystemExit(f"error: {args.checkpoint} holds a {agent.config.game} agent; this engine plays "
                     f"{' or '.join(games)}")
  if args.simulations is not None and args.simulations < 1:
    raise SystemExit("error: --simulations must be >= 1")
  return agent


class SearchingEngine(Engine):
  """UCI and USI: `go` searches in a worker thread, so `isready`, `stop` and `quit` are answered meanwhile."""

  resign_word = "(none)"  # the bestmove when there is no legal move

  def __init__(self, thinker: Thinker, new_position: Callable, out: TextIO = sys.stdout):
    super().__init__(out)
    self.thinker = thinker
    self.new_position = new_position
    self.position = new_position()
    self.warm = False
    self._stop = threading.Event()
    self._worker: threading.Thread | None = None

  def error(self, message: str) -> None:
    self.send(f"info string error: {message}")

  def searching(self) -> bool:
    return self._worker is not None and self._worker.is_alive()

  def halt(self) -> None:
    """Ends a running search (an infinite one at once, a timed one when its search returns)."""
    if self._worker is not None:
      self._stop.set()
      self._worker.join()
      self._worker = None

  def ready(self, _args) -> None:
    if not self.warm and not self.searching():
      self.thinker.warm_up(self.position.state)
      self.warm = True
    self.send(self.ready_word)

  def set_position(self, make, moves: list[str]) -> None:
    """Builds the position off to the side: a bad move leaves the current one as it was."""
    self.halt()
    from azjax.engines.positions import IllegalMove
    try:
      position = make()
      for move in moves:
        position.play(move)
    except IllegalMove as e:
      raise ProtocolError(f"position not changed: {e}") from None
    self.position = position

  def start_search(self, seconds: float | None, nodes: int | None, infinite: bool) -> None:
    self.halt()
    self._stop.clear()
    sims = self.thinker.simulations_for(seconds, nodes)
    position = self.position
    self._worker = threading.Thread(target=self._search, args=(position, sims, infinite), daemon=True)
    self._worker.start()

  def _search(self, position, sims: int, infinite: bool) -> None:
    try:
      legal = position.legal_actions()
      if position.over or len(legal) == 0:
        if infinite:
          self._stop.wait()
        self.send(f"bestmove {self.resign_word}")
        return
      weights, value, seconds = self.thinker.think(position.state, sims)
      best = int(legal[np.argmax(weights[legal])])
      move = position.move_of(best)
      self.send(f"info nodes {sims} nps {int(sims / max(seconds, 1e-6))} time {int(seconds * 1000)} "
                f"score cp {value_to_cp(value)} pv {move}")
      if infinite:
        self._stop.wait()
      self.send(f"bestmove {move}")
    except Exception as e:  # noqa: BLE001  (a protocol still needs its bestmove)
      self.error(f"search failed: {type(e).__name__}: {e}")
      self.send(f"bestmove {self.resign_word}")

  def stop(self, _args) -> None:
    self.halt()

  def quit(self, _args) -> None:
    self.halt()
    self.running = False

  def close(self) -> None:
    self.halt()


def parse_limits(args: list[str], names: dict[str, str]) -> dict:
  """`go` arguments as a dict of ints; `names` maps each protocol word to our key, flags map to True."""
  limits, i = {}, 0
  while i < len(args):
    word = args[i]
    if word not in names:
      raise ProtocolError(f"go: unknown argument {word!r}")
    key = names[word]
    if key in ("infinite", "ponder"):
      limits[key] = True
      i += 1
      continue
    if i + 1 >= len(args):
      raise ProtocolError(f"go: {word} needs a number")
    try:
      limits[key] = int(args[i + 1])
    except ValueError:
      raise ProtocolError(f"go: {word} needs a number, not {args[i + 1]!r}") from None
    if limits[key] < 0 and key not in ("wtime", "btime"):  # a clock may run negative in some GUIs
      raise ProtocolError(f"go: {word} must be >= 0")
    i += 2
  return limits
