"""What the UCI, USI and GTP engines share: the command loop and searching one position.

The loop never dies on input: a command that fails answers in the protocol's
error form and the engine reads the next line (undecodable bytes included).
Searches have a fixed number of simulations (the checkpoint's at play,
`search.play_simulations`, or --simulations). A time or node limit picks
the largest rung of a small ladder (the full count, a quarter, a sixteenth)
that the measured speed says fits. The full count and a move of the game
compile at the first `isready` (GTP: before the first answer); the smaller
rungs then compile in the background, and a clock only ever picks a rung that
has compiled, so it never pays for compilation. UCI and USI live in
searching.py; their command line and early handshake in launch.py.
"""

from __future__ import annotations

import math
import re
import sys
import threading
import time
from typing import Callable, TextIO

import jax
import numpy as np
import pgx

from azjax.agent import Agent, load_agent, searcher
from azjax.arena import jitted
from azjax.engines.launch import Facts, facts_of, readable
from azjax.engines.positions import IllegalMove, Position

MAX_ERROR_CHARS = 200  # an error quotes at most this much of what it was sent


class ProtocolError(ValueError):
  """A command the engine understood the name of but could not carry out."""


class Thinker:
  """Searches one position with the agent; knows how fast each search size runs."""

  def __init__(self, agent: Agent, simulations: int | None = None, seed: int = 0):
    self.agent = agent
    self.simulations = agent.simulations(simulations)
    self.seconds_per_sim: dict[int, float] = {}  # the rungs compiled so far, and their measured speed
    self.key = jax.random.PRNGKey(seed)
    self.searches = 0
    self._compiling: threading.Thread | None = None

  def ladder(self) -> list[int]:
    s = self.simulations
    return sorted({max(1, s // 16), max(1, s // 4), s})

  def think(self, state, simulations: int, env: pgx.Env | None = None) -> tuple[np.ndarray, float, float]:
    """(move ranks [A], root value for the mover, seconds) of one search of `simulations`. The engines play the
    move of highest rank (`SearchOutput.move_rank`: PUCT's most visited, ties by Q; Gumbel's search policy on the
    moves the search visited unless search.play_unvisited; under search.gumbel_act=halving Sequential Halving's
    winner, then the improved policy, so that a winner a referee refuses (Go's superko) gives way to the next
    best move, not to pass).

    `env` is the one the state was made in, when not the agent's own (a Position's `env`)."""
    self.searches += 1
    return self._search(state, simulations, env, jax.random.fold_in(self.key, self.searches))

  def _search(self, state, simulations: int, env, key) -> tuple[np.ndarray, float, float]:
    batch = jax.tree.map(lambda x: x[None], state)
    started = time.perf_counter()
    env = None if env is self.agent.env else env
    out = jitted(searcher(self.agent.config, simulations, env))((self.agent.params, self.agent.bn_state), key, batch)
    weights, value = jax.device_get((out.move_rank[0], out.value[0]))
    seconds = time.perf_counter() - started
    self.seconds_per_sim[simulations] = seconds / simulations
    return np.asarray(weights), float(value), seconds

  def _compile(self, state, env, sizes: list[int]) -> None:
    """Compiles and times each size not yet compiled (warm-up searches draw no key from `think`'s sequence)."""
    key = jax.random.PRNGKey(0)
    for sims in sizes:
      if sims not in self.seconds_per_sim:
        self._search(state, sims, env, key)  # compiles
        self._search(state, sims, env, key)  # times

  def warm_up(self, state, env: pgx.Env | None = None, sizes: list[int] | None = None,
              background: bool = False) -> None:
    """Compiles and times the searches of `sizes` (default: the whole ladder, largest first).

    With `background`, only the largest compiles before it returns, the rest in a daemon thread: an
    engine answers `readyok` after one compile instead of three (the smaller rungs serve tight clocks,
    and a clock picks only compiled rungs)."""
    sizes = sorted(sizes or self.ladder(), reverse=True)
    self.wait()
    self._compile(state, env, sizes[:1] if background else sizes)
    if background and sizes[1:]:
      # Not a daemon: an interpreter that exits while XLA compiles in a daemon thread aborts ("FATAL: exception not
      # rethrown", exit 134), so a script or test that ends here waits for it. The engines exit with os._exit.
      self._compiling = threading.Thread(target=self._compile, args=(state, env, sizes[1:]))
      self._compiling.start()

  def wait(self) -> None:
    """Until the background compiles (if any) are done."""
    if self._compiling is not None:
      self._compiling.join()
      self._compiling = None

  def simulations_for(self, seconds: float | None, nodes: int | None = None) -> int:
    """The search size for a limit: the largest rung within `nodes`, or the largest compiled rung that fits
    `seconds` (else the smallest compiled one); no limit: the full count.

    Only rungs are searched, so no search compiles after the warm-up (an arbitrary node count would). A
    node limit waits for the background compiles: it is not on a clock, and its answer must not depend on
    how far they got."""
    rungs = self.ladder()
    if nodes is not None:  # `go nodes 0` too: the smallest rung
      self.wait()
      fits = [r for r in rungs if r <= nodes]
      return fits[-1] if fits else rungs[0]
    if seconds is None:
      return self.simulations
    ready = [r for r in rungs if r in self.seconds_per_sim] or rungs
    fits = [r for r in ready if r * self.seconds_per_sim.get(r, math.inf) <= seconds]
    return fits[-1] if fits else ready[0]


class Engine:
  """A line protocol engine: subclasses fill `commands` and say how answers and errors look."""

  unknown_text = "unknown command: {line}"

  def __init__(self, out: TextIO = sys.stdout):
    self.out = out
    self._lock = threading.Lock()
    self.commands: dict[str, Callable[[list[str]], str | None]] = {}
    self.running = True

  def send(self, text: str) -> None:
    with self._lock:
      self.out.write(text + "\n")
      self.out.flush()

  def error(self, message: str) -> None:
    raise NotImplementedError

  def answer(self, result: str | None) -> None:
    """What a command returned; UCI and USI commands answer by themselves."""

  def handle(self, line: str) -> bool:
    """Carries out one command line; returns False once the engine should quit."""
    return self.run(line.split())

  def run(self, words: list[str]) -> bool:
    if not words:
      return self.running
    try:
      command = self.commands.get(words[0])
      if command is None:
        raise ProtocolError(self.unknown_text.format(line=" ".join(words)[:80]))
      self.answer(command(words[1:]))
    except ProtocolError as e:
      self.error(printable(str(e)))
    except Exception as e:  # noqa: BLE001  (the engine must outlive any command)
      self.error(printable(f"internal error in {words[0]!r}: {type(e).__name__}: {e}"))
    return self.running

  def loop(self, lines) -> None:
    for line in lines:
      if not self.handle(line):
        break
    self.close()

  def close(self) -> None:
    pass


def protocol_int(text: str) -> int:
  """An integer as protocols write it (ASCII digits, at most 18); anything else is a ValueError."""
  if not re.fullmatch(r"[+-]?[0-9]{1,18}", text):
    raise ValueError(f"not a number: {text[:40]!r}")
  return int(text)


def printable(text: str) -> str:
  """One line of at most MAX_ERROR_CHARS printable characters (an error may quote a hostile input)."""
  text = "".join(c if c.isprintable() else "?" for c in text)
  return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 3] + "..."


def load(args, games: tuple[str, ...], facts: Facts | None = None) -> Agent:
  """The network an engine's command line names (SystemExit names a bad one: launch.facts_of), at the step
  `facts` names when given (the one its handshake announced)."""
  facts = facts or facts_of(args, games)
  return load_agent(args.checkpoint, facts.step).with_search(args.set)


def use_compile_cache(directory: str) -> None:
  """jax's persistent compilation cache in `directory` (none if empty, or if jax already has one): a restarted
  engine then skips XLA's compile of its searches (results/engines, chess on a slow 2-core CPU: the first
  `readyok` 35 s without a cache, 23 s from a warm one).
  Set before anything compiles: jax decides once whether to use a cache."""
  if directory and jax.config.jax_compilation_cache_dir is None:
    jax.config.update("jax_compilation_cache_dir", directory)
    if jax.config.jax_compilation_cache_max_size < 0:
      jax.config.update("jax_compilation_cache_max_size", 1 << 30)  # least recently used entries go beyond 1 GiB


def thinker_for(args, games: tuple[str, ...], facts: Facts | None = None) -> Thinker:
  use_compile_cache(args.compile_cache)
  return Thinker(load(args, games, facts), args.simulations, args.seed)


def serve(engine: Engine, stdin: TextIO = sys.stdin) -> None:
  """Runs the engine on stdin (launch.readable)."""
  engine.loop(readable(stdin))


def rehearse(position: Position) -> None:
  """Plays a move and takes it back, so the first real move does not compile the game's step."""
  legal = position.legal_actions()
  if position.over or len(legal) == 0:
    return
  try:
    position.push(int(legal[0]))
  except IllegalMove:
    return
  position.undo()


