"""UCI and USI engines: `go` searches in a worker thread, so `isready`, `stop` and `quit` are answered meanwhile.

The two protocols differ only in their words, which `SearchingEngine`'s
subclasses set as class attributes. Their command lines are uci.py and usi.py.
"""

from __future__ import annotations

import math
import re
import sys
import threading
from typing import TextIO

import jax.numpy as jnp
import numpy as np

from azjax.engines.base import Engine, ProtocolError, Thinker, printable, protocol_int, rehearse
from azjax.engines.launch import MAX_SIMULATIONS, Facts, hello
from azjax.engines.positions import IllegalMove, PlayOnChessPosition, Position, ShogiPosition


def value_to_cp(value: float) -> int:
  """Centipawns for a value in [-1, 1] via the logistic model: 0.5 expected score is 0, 0.76 is +200."""
  p = min(max((value + 1.0) / 2.0, 1e-4), 1.0 - 1e-4)
  return int(round(400.0 * math.log10(p / (1.0 - p))))


def clock_budget(time_left_ms: float | None, increment_ms: float = 0.0, moves_to_go: int | None = None,
                 fixed_ms: float | None = None) -> float | None:
  """Seconds to spend on a move: a fixed time, or a share of the clock plus most of the increment."""
  if fixed_ms is not None:
    return fixed_ms / 1000.0
  if time_left_ms is None:
    return None
  share = time_left_ms / max(moves_to_go or 30, 1) + 0.8 * increment_ms
  return max(0.0, min(share, 0.5 * time_left_ms)) / 1000.0


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
    self.facts = Facts(thinker.agent.config.game, thinker.agent.step, thinker.simulations)  # for `uci`/`usi`
    self.position = self.position_cls()
    self.warm = False
    self._stop = threading.Event()
    self._worker: threading.Thread | None = None
    self.commands.update({self.protocol: self.hello, "isready": self.ready, f"{self.protocol}newgame": self.new_game,
                          "setoption": self.set_option, "position": self.set, "go": self.go, "stop": self.stop,
                          "quit": self.quit, "ponderhit": lambda a: self._stop.set()})  # the move it pondered

  def error(self, message: str) -> None:
    self.send(f"info string error: {message}")

  def hello(self, _args) -> None:
    self.send("\n".join(hello(self.protocol, self.facts)))

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
        self.thinker.warm_up(start.state, start.env, background=True)
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

  def search_moves(self, args: list[str]) -> tuple[list[str], list[int] | None]:
    """UCI's `searchmoves m1 m2 ...` (the moves up to the next `go` word) taken out of `args`: the actions the
    search may choose among, None for every legal move. A move that is not legal here is named and left out."""
    if "searchmoves" not in args or "searchmoves" not in self.go_words:
      return args, None
    start = end = args.index("searchmoves") + 1
    while end < len(args) and args[end] not in self.go_words:
      end += 1
    actions = []
    for move in args[start:end]:
      try:
        actions.append(self.position.action_of(move))
      except IllegalMove as e:
        self.error(printable(f"go searchmoves: {e}; left out"))
    return args[:start - 1] + args[end:], actions or None

  def go(self, args) -> None:
    args, only = self.search_moves(args)
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
    # A ponder search waits, as an infinite one, for ponderhit or stop before its bestmove.
    self.start_search(seconds, limits.get("nodes"), bool(limits.get("infinite") or limits.get("ponder")), only)

  def start_search(self, seconds: float | None, nodes: int | None, infinite: bool,
                   only: list[int] | None = None) -> None:
    self.halt()
    self._stop.clear()
    sims = self.thinker.simulations_for(seconds, nodes)
    position = self.position
    self._worker = threading.Thread(target=self._search, args=(position, sims, infinite, only), daemon=True)
    self._worker.start()

  def _search(self, position, sims: int, infinite: bool, only: list[int] | None = None) -> None:
    try:
      legal = position.legal_actions()
      if position.over or len(legal) == 0:
        if infinite:
          self._stop.wait()
        self.send(f"bestmove {self.resign_word}")
        return
      state = position.state
      if only is not None:  # the root's legal moves narrowed to them: the search spends its simulations there
        legal = np.intersect1d(legal, only)
        mask = np.zeros(position.num_actions, bool)
        mask[legal] = True
        state = state.replace(legal_action_mask=jnp.asarray(mask))
      weights, value, seconds = self.thinker.think(state, sims, position.env)
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


class UciEngine(SearchingEngine):
  protocol = "uci"
  position_cls = PlayOnChessPosition  # plays on past a draw the rules leave to a claim
  setup_word, setup_fields = "fen", 6
  start_setup = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
  go_words = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate", "infinite",
              "ponder", "searchmoves")
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

  def go(self, args) -> None:
    if args[:1] == ["mate"]:  # a mate search (tsume) is answered by `checkmate`, never by `bestmove`
      self.halt()
      self.send("checkmate notimplemented")
      return
    super().go(args)

  def set_option(self, args) -> None:
    if len(args) < 2 or args[0] != "name":
      raise ProtocolError("setoption: expected 'setoption name <name> value <value>'")
    if args[1] == "Simulations":  # GUIs also send their own options (USI_Hash, USI_Ponder): they do not apply
      if "value" not in args[2:-1]:
        raise ProtocolError("setoption: Simulations needs 'value <number>'")
      self.set_simulations(args[args.index("value") + 1])
