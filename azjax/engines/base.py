"""What the UCI, USI and GTP engines share: the command loop, searching one position, time.

The loop never dies on input: a command that fails answers in the protocol's
error form and the engine reads the next line (undecodable bytes included).
Searches have a fixed number of simulations (the checkpoint's at play,
`search.simulations_at_play`, or --simulations). A time or node limit picks
the largest rung of a small ladder (the full count, a quarter, a sixteenth)
that the measured speed says fits; all rungs, and a move of the game, compile
at the first `isready` (GTP: before the first answer), so a clock never pays
for compilation after that.

UCI and USI differ only in their words, which `SearchingEngine`'s subclasses
set as class attributes.
"""

from __future__ import annotations

import argparse
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
from azjax.config import ConfigError
from azjax.engines.positions import IllegalMove, Position

MAX_SIMULATIONS = 100_000  # a search tree holds arrays of simulations x children (chess, compact: 87 MB each at this size)
MAX_ERROR_CHARS = 200  # an error quotes at most this much of what it was sent


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
    self.simulations = agent.simulations(simulations)
    self.seconds_per_sim: dict[int, float] = {}
    self.key = jax.random.PRNGKey(seed)
    self.searches = 0

  def ladder(self) -> list[int]:
    s = self.simulations
    return sorted({max(1, s // 16), max(1, s // 4), s})

  def think(self, state, simulations: int, env: pgx.Env | None = None) -> tuple[np.ndarray, float, float]:
    """(search policy [A], root value for the mover, seconds) of one search of `simulations`.

    `env` is the one the state was made in, when not the agent's own (a Position's `env`)."""
    self.searches += 1
    batch = jax.tree.map(lambda x: x[None], state)
    key = jax.random.fold_in(self.key, self.searches)
    started = time.perf_counter()
    if env is None or env is self.agent.env:
      weights, value = self.agent.search(batch, key, num_simulations=simulations)
    else:
      out = jitted(searcher(self.agent.config, simulations, env))((self.agent.params, self.agent.bn_state), key, batch)
      weights, value = out.weights, out.value
    weights, value = jax.device_get((weights[0], value[0]))
    seconds = time.perf_counter() - started
    self.seconds_per_sim[simulations] = seconds / simulations
    return np.asarray(weights), float(value), seconds

  def warm_up(self, state, env: pgx.Env | None = None, sizes: list[int] | None = None) -> None:
    """Compiles and times the searches of `sizes` (default: the whole ladder)."""
    for sims in sizes or self.ladder():
      if sims not in self.seconds_per_sim:
        self.think(state, sims, env)  # compiles
        self.think(state, sims, env)  # times

  def simulations_for(self, seconds: float | None, nodes: int | None = None) -> int:
    """The search size for a limit: the largest rung within `nodes` or that fits `seconds`, else the smallest.

    Only rungs are searched, so no search compiles after the warm-up (an arbitrary node count would)."""
    rungs = self.ladder()
    if nodes:
      fits = [r for r in rungs if r <= nodes]
    elif seconds is None:
      return self.simulations
    else:
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


def engine_parser(description: str) -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(description=description)
  parser.add_argument("--checkpoint", required=True, help="a run directory, its checkpoints/ or one step's folder")
  parser.add_argument("--step", type=int, default=None, help="checkpoint step (default: the latest)")
  parser.add_argument("--simulations", type=int, default=None,
                      help="simulations per search (default: the checkpoint's own setting)")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--set", action="append", default=[], metavar="search.FIELD=VALUE",
                      help="search with another setting than the checkpoint's (repeatable), e.g. "
                           "search.go_fill_eyes=false for Go, search.draw_value=-0.5 (contempt) for chess")
  return parser


def load(args, games: tuple[str, ...]) -> Agent:
  try:
    agent = load_agent(args.checkpoint, args.step).with_search(args.set)
  except ConfigError as e:
    raise SystemExit(f"error: {e}") from None
  if agent.config.game not in games:
    raise SystemExit(f"error: {args.checkpoint} holds a {agent.config.game} agent; this engine plays "
                     f"{' or '.join(games)}")
  if args.simulations is not None and not 1 <= args.simulations <= MAX_SIMULATIONS:
    raise SystemExit(f"error: --simulations must be between 1 and {MAX_SIMULATIONS}")
  return agent


def thinker_for(args, games: tuple[str, ...]) -> Thinker:
  return Thinker(load(args, games), args.simulations, args.seed)


def serve(engine: Engine, stdin: TextIO = sys.stdin) -> None:
  """Runs the engine on stdin; bytes that are not UTF-8 arrive as U+FFFD instead of ending the loop."""
  if hasattr(stdin, "reconfigure"):
    stdin.reconfigure(errors="replace")
  engine.loop(stdin)


class SearchingEngine(Engine):
  """UCI and USI: `go` searches in a worker thread, so `isready`, `stop` and `quit` are answered meanwhile.

  A subclass gives the protocol's words: its name (`uci`: `uciok`, `ucinewgame`), the position
  class and its setup word and field count (`fen`, 6), the `go` arguments, which clock and
  increment belong to each colour, and the move that means "no legal move"."""

  protocol: str
  position_cls: type[Position]
  setup_word: str
  setup_fields: int
  start_setup: str  # the initial position in the setup notation (the warm-up compiles its reader)
  go_words: tuple[str, ...]
  clocks: tuple[tuple[str, str], tuple[str, str]]  # (time, increment) words of colour 0 and colour 1
  resign_word: str
  ready_word = "readyok"

  def __init__(self, thinker: Thinker, out: TextIO = sys.stdout):
    super().__init__(out)
    self.thinker = thinker
    self.position = self.position_cls()
    self.warm = False
    self._stop = threading.Event()
    self._worker: threading.Thread | None = None
    self.commands.update({self.protocol: self.hello, "isready": self.ready, f"{self.protocol}newgame": self.new_game,
                          "setoption": self.set_option, "position": self.set, "go": self.go, "stop": self.stop,
                          "quit": self.quit, "ponderhit": lambda a: None})

  def error(self, message: str) -> None:
    self.send(f"info string error: {message}")

  def hello(self, _args) -> None:
    agent = self.thinker.agent
    self.send(f"id name azjax {agent.config.game} step {agent.step}")
    self.send("id author the azjax authors")
    self.send(f"option name Simulations type spin default {self.thinker.simulations} min 1 max {MAX_SIMULATIONS}")
    self.send(f"{self.protocol}ok")

  def searching(self) -> bool:
    return self._worker is not None and self._worker.is_alive()

  def halt(self) -> None:
    """Ends a running search (an infinite one at once, a timed one when its search returns)."""
    if self._worker is not None:
      self._stop.set()
      self._worker.join()
      self._worker = None

  def ready(self, _args) -> None:
    """Compiles what a search and a move need (once), then answers; a GUI's clock starts after this."""
    if not self.warm and not self.searching():
      try:
        start = self.position_cls(self.start_setup)  # compiles the setup reader
        rehearse(start)
        self.thinker.warm_up(start.state, start.env)
        self.warm = True
      except Exception as e:  # noqa: BLE001  (a GUI waits for the answer whatever happens)
        self.error(printable(f"warm-up failed: {type(e).__name__}: {e}"))
    self.send(self.ready_word)

  def new_game(self, _args) -> None:
    self.halt()
    self.position = self.position_cls()

  def set_simulations(self, value: str) -> None:
    """The `Simulations` option: the full search size (its ladder compiles at the next `isready`)."""
    try:
      sims = protocol_int(value.strip())
    except ValueError:
      raise ProtocolError(f"setoption: Simulations needs a number, not {value!r}") from None
    if not 1 <= sims <= MAX_SIMULATIONS:
      raise ProtocolError(f"setoption: Simulations must be between 1 and {MAX_SIMULATIONS}")
    self.halt()
    self.thinker.simulations = sims
    self.warm = False

  def set_option(self, args) -> None:
    raise NotImplementedError

  def set(self, args) -> None:
    """position startpos|<setup word> <fields> [moves ...]"""
    if not args:
      raise ProtocolError(f"position: expected startpos or {self.setup_word}")
    moves = args[args.index("moves") + 1:] if "moves" in args else []
    head = args[:args.index("moves")] if "moves" in args else args
    if head == ["startpos"]:
      self.set_position(None, moves)
    elif head[:1] == [self.setup_word] and len(head) == self.setup_fields + 1:
      self.set_position(" ".join(head[1:]), moves)
    else:
      raise ProtocolError(f"position: expected 'startpos' or '{self.setup_word}' with {self.setup_fields} fields, "
                          f"then optional 'moves ...'")

  def set_position(self, setup: str | None, moves: list[str]) -> None:
    """The position after `moves` from `setup` (None: the initial one); a bad move leaves the current one as it was.

    A GUI sends the whole game before each `go`: when it extends the current position, only the new moves
    are played (replaying a long game would eat into the clock)."""
    self.halt()
    position = self.position
    played = 0
    try:
      if position.setup != setup or position.moves != moves[:len(position.moves)]:
        position = self.position_cls(setup)
      for move in moves[len(position.moves):]:
        position.play(move)
        played += 1
    except IllegalMove as e:
      for _ in range(played if position is self.position else 0):
        position.undo()
      raise ProtocolError(f"position not changed: {e}") from None
    self.position = position

  def go(self, args) -> None:
    try:
      limits = parse_limits(args, self.go_words)
    except ProtocolError as e:
      self.error(printable(f"{e}; searching with the default settings"))
      limits = {}
    clock, increment = self.clocks[self.position.color]
    seconds = clock_budget(limits.get(clock), limits.get(increment, 0), limits.get("movestogo"),
                           limits.get("movetime"))
    if limits.get("byoyomi"):
      seconds = (seconds or 0.0) + 0.8 * limits["byoyomi"] / 1000.0
    self.start_search(seconds, limits.get("nodes"), bool(limits.get("infinite")))

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
      weights, value, seconds = self.thinker.think(position.state, sims, position.env)
      best = int(legal[np.argmax(weights[legal])])
      move = position.move_of(best)
      self.send(f"info nodes {sims} nps {int(sims / max(seconds, 1e-6))} time {int(seconds * 1000)} "
                f"score cp {value_to_cp(value)} pv {move}")
      if infinite:
        self._stop.wait()
      self.send(f"bestmove {move}")
    except Exception as e:  # noqa: BLE001  (a protocol still needs its bestmove)
      self.error(printable(f"search failed: {type(e).__name__}: {e}"))
      self.send(f"bestmove {self.resign_word}")

  def stop(self, _args) -> None:
    self.halt()

  def quit(self, _args) -> None:
    self.halt()
    self.running = False

  def close(self) -> None:
    self.halt()


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


def parse_limits(args: list[str], names) -> dict:
  """`go` arguments as a dict of ints; `names` are the protocol's words, flags map to True."""
  limits, i = {}, 0
  while i < len(args):
    word = args[i]
    if word not in names:
      raise ProtocolError(f"go: unknown argument {word!r}")
    if word in ("infinite", "ponder"):
      limits[word] = True
      i += 1
      continue
    if i + 1 >= len(args):
      raise ProtocolError(f"go: {word} needs a number")
    try:
      limits[word] = protocol_int(args[i + 1])
    except ValueError:
      raise ProtocolError(f"go: {word} needs a number, not {args[i + 1]!r}") from None
    if limits[word] < 0 and word not in ("wtime", "btime"):  # a clock may run negative in some GUIs
      raise ProtocolError(f"go: {word} must be >= 0")
    i += 2
  return limits
