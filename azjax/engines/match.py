"""Matches of an agent against external engines: Stockfish (UCI), GNU Go (GTP), Fairy-Stockfish (USI).

The referee is a `Position`: pgx's rules decide legality and the end of a game,
and every move of the engine is checked there. Colours alternate; game pairs
share a seeded random opening. Every finished game is appended at once to the
records (PGN, SGF or SFEN move lists) and to results.csv, so a crash loses no
finished game. An engine that dies or does not answer in time is reported, the
unfinished game is written as aborted, the engine is restarted, and after two
failures in a row the match stops cleanly with what it has.

Go games end when both sides pass. Against GNU Go the result is GNU Go's own
`final_score` (it removes the stones it judges dead, or, with `capture_all_dead`, the game is played
out under Tromp-Taylor first); otherwise Tromp-Taylor area counting.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import functools
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

from azjax import arena, rules
from azjax.engines.base import Thinker
from azjax.engines import kif
from azjax.engines.positions import IllegalMove, Position, position_for

OPPONENTS = {"chess": ("stockfish",), "go9": ("gnugo",), "go": ("gnugo",), "shogi": ("fairy-stockfish",)}


class EngineFailure(RuntimeError):
  """The engine died, hung, or said something that is not a legal move.

  `moves` and `seconds`: the game's moves up to the failure and its time, so that the record of an aborted
  game keeps them."""

  moves: tuple[str, ...] = ()
  seconds: float = 0.0


def _locate(name: str) -> str | None:
  return shutil.which(name) or (f"/usr/games/{name}" if Path(f"/usr/games/{name}").exists() else None)


def find_engine(name: str, path: str | None = None) -> str:
  found = path or _locate(name)
  if not found:
    raise SystemExit(f"error: {name} is not installed; on Debian or Ubuntu: sudo apt-get install {name}")
  return found


class LineClient:
  """A subprocess spoken to in lines, every read bounded by a timeout."""

  def __init__(self, command: list[str]):
    self.command = command
    self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True, bufsize=1)
    self.lines: queue.Queue = queue.Queue()
    threading.Thread(target=self._read, daemon=True).start()

  def _read(self):
    for line in self.proc.stdout:
      self.lines.put(line.rstrip("\n"))
    self.lines.put(None)

  def send(self, line: str) -> None:
    try:
      self.proc.stdin.write(line + "\n")
      self.proc.stdin.flush()
    except (BrokenPipeError, OSError):
      raise EngineFailure(f"{self.command[0]} died (exit code {self.proc.poll()})") from None

  def read_until(self, done, timeout: float) -> list[str]:
    """Lines up to and including the first for which `done(line)` holds."""
    deadline, got = time.monotonic() + timeout, []
    while True:
      try:
        line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.0))
      except queue.Empty:
        raise EngineFailure(f"{self.command[0]} did not answer within {timeout:.1f} s") from None
      if line is None:
        raise EngineFailure(f"{self.command[0]} died (exit code {self.proc.wait()})")
      got.append(line)
      if done(line):
        return got

  def close(self) -> None:
    try:
      self.send("quit")
      self.proc.wait(timeout=2)
    except (EngineFailure, subprocess.TimeoutExpired):
      pass
    if self.proc.poll() is None:
      self.proc.kill()
      self.proc.wait()


class Opponent:
  name: str
  count: str = ""  # the engine's own count of the last game it judged (GNU Go's `final_score`, like W+7.5)

  def new_game(self) -> None:
    pass

  def move(self, position: Position) -> str:
    """The engine's move (in the position's notation) or 'resign'."""
    raise NotImplementedError

  def judge(self, position: Position) -> float | None:
    """The engine's verdict on a finished game for colour 0 (1, 0.5, 0), or None to use pgx's."""
    return None

  def close(self) -> None:
    pass


class Stockfish(Opponent):
  """Stockfish through python-chess's UCI client; `skill` (0-20) and/or `elo` (UCI_LimitStrength)."""

  def __init__(self, path: str, movetime_ms: int, skill: int | None = None, elo: int | None = None,
               timeout: float = 30.0, depth: int | None = None):
    import chess.engine  # noqa: PLC0415  (python-chess is only needed for chess matches)
    # `depth` searches that many plies (and no more than `movetime_ms`): the weakest Stockfish there is.
    self.limit = chess.engine.Limit(time=movetime_ms / 1000.0, depth=depth)
    self.timeout = timeout
    self.name = ("stockfish" + (f" skill {skill}" if skill is not None else "") + (f" elo {elo}" if elo else "")
                 + (f" depth {depth}" if depth else ""))
    try:
      self.engine = chess.engine.SimpleEngine.popen_uci(path, timeout=timeout)
      options = {}
      if skill is not None:
        options["Skill Level"] = skill
      if elo:
        options.update({"UCI_LimitStrength": True, "UCI_Elo": elo})
      self.engine.configure(options)
    except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError) as e:
      raise EngineFailure(f"stockfish: {e}") from None
    self.game = object()

  def new_game(self) -> None:
    self.game = object()  # python-chess sends `ucinewgame` when the game object changes: a fresh hash table

  def move(self, position: Position) -> str:
    import chess  # noqa: PLC0415
    import chess.engine  # noqa: PLC0415
    board = chess_board(position)
    try:
      result = self.engine.play(board, self.limit, game=self.game)
    except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError) as e:
      raise EngineFailure(f"stockfish: {type(e).__name__}: {e}") from None
    if result.resigned or result.move is None:
      return "resign"
    return result.move.uci()

  def close(self) -> None:
    try:
      self.engine.quit()
    except Exception:  # noqa: BLE001  (a dead engine is already closed)
      pass


class GtpOpponent(Opponent):
  """Any GTP v2 engine process (GNU Go, or our own `azjax.engines.gtp`), kept in sync move by move."""

  def __init__(self, command: list[str], name: str, size: int, komi: float, timeout: float = 60.0):
    self.name, self.size, self.komi, self.timeout = name, size, komi, timeout
    self.client = LineClient(command)
    self.ask(f"boardsize {size}")
    self.ask(f"komi {komi}")

  def ask(self, command: str) -> str:
    """Sends one command (no id); returns its answer, every line of it, or raises EngineFailure on `?`."""
    self.client.send(command)
    status = self.client.read_until(lambda line: line.startswith(("=", "?")), self.timeout)[-1]
    rest = self.client.read_until(lambda line: not line.strip(), self.timeout)[:-1]  # an answer ends at a blank line
    if status.startswith("?"):
      raise EngineFailure(f"{self.name} refused {command!r}: {status}")
    return "\n".join([status[1:].strip(), *rest]).strip("\n")

  def new_game(self) -> None:
    self.ask("clear_board")
    self.played = 0

  def move(self, position: Position) -> str:
    self.sync(position)
    colour = "b" if position.color == 0 else "w"
    answer = self.ask(f"genmove {colour}").lower()
    self.played += 1
    return answer

  def sync(self, position: Position) -> None:
    """Plays into the engine every move of `position` it has not heard yet."""
    for i in range(self.played, len(position.moves)):
      self.ask(f"play {'b' if i % 2 == 0 else 'w'} {position.moves[i]}")
    self.played = len(position.moves)

  def judge(self, position: Position) -> float | None:
    self.sync(position)
    score = self.count = self.ask("final_score").upper()
    if score.startswith("B+"):
      return 1.0
    if score.startswith("W+"):
      return 0.0
    return 0.5

  def close(self) -> None:
    self.client.close()


ANCHOR_ENGINES = {"go9": "gnugo", "go": "gnugo", "chess": "stockfish", "shogi": "fairy-stockfish"}


def anchor_installed(game: str) -> bool:
  """Whether the engine that anchors `game`'s evaluations (`anchor_engine`) is installed here."""
  return game in ANCHOR_ENGINES and _locate(ANCHOR_ENGINES[game]) is not None


def anchor_engine(game: str):
  """`make_opponent` for the real engine that anchors `game`'s evaluations during training
  (`run.eval_engine_games`): the weakest settings issue 16 measures against. GNU Go level 1 for Go, Stockfish
  at skill 0 searching one ply for chess, Fairy-Stockfish at skill 0 and 100 ms a move for shogi. Exits
  naming the package if the engine is not installed."""
  path = find_engine(ANCHOR_ENGINES[game])
  if game in ("go9", "go"):
    return functools.partial(GnuGo, path, 1, 9 if game == "go9" else 19, 7.5)
  if game == "chess":
    return functools.partial(Stockfish, path, 1000, 0, depth=1)
  return functools.partial(FairyStockfish, path, 100, 0)


def agent_margin(outcome: GameOutcome) -> float | None:
  """The agent's margin in points by a Go engine's count in the game's reason (`... count W+7.5`), or None."""
  count = outcome.reason.rsplit(" ", 1)[-1]
  if count[:2] not in ("B+", "W+"):
    return None
  try:
    points = float(count[2:])
  except ValueError:
    return None  # B+Resign and the like
  return points if "BW".index(count[0]) == outcome.agent_colour else -points


def mean_margin(outcomes) -> tuple[float, int] | None:
  """(the agent's mean margin by the engine's count, over how many games) for the games that have one, or None."""
  margins = [x for x in map(agent_margin, outcomes) if x is not None]
  return (sum(margins) / len(margins), len(margins)) if margins else None


class GnuGo(GtpOpponent):
  """GNU Go. By default it passes once it judges the game over, and its `final_score` removes the stones it
  judges dead. With `capture_all_dead` it plays the game out as Tromp-Taylor requires, capturing every dead
  stone of ours before it passes, so that its count is the area count of the final board (the GNU Go 3.8
  manual, "Invoking GNU Go": `--capture-all-dead --chinese-rules` "mandates Tromp-Taylor scoring")."""

  def __init__(self, path: str, level: int, size: int, komi: float, timeout: float = 60.0,
               capture_all_dead: bool = False):
    # pgx forbids a move that repeats any earlier board (positional superko); GNU Go's default forbids only the
    # simple ko recapture, and then plays moves pgx refuses, which abort the game.
    super().__init__([path, "--mode", "gtp", "--level", str(level), "--chinese-rules", "--positional-superko",
                      *(["--capture-all-dead"] if capture_all_dead else [])],
                     f"gnugo level {level}" + (" (Tromp-Taylor)" if capture_all_dead else ""), size, komi, timeout)


class UsiOpponent(Opponent):
  """Any USI engine process (Fairy-Stockfish, or our own `azjax.engines.usi`), spoken to in a GUI's order."""

  def __init__(self, command: list[str], name: str, movetime_ms: int, options: dict | None = None,
               timeout: float = 30.0):
    self.name, self.movetime_ms, self.timeout = name, movetime_ms, timeout
    self.client = LineClient(command)
    self.client.send("usi")
    self.client.read_until(lambda line: line == "usiok", timeout)
    for option, value in (options or {}).items():
      self.client.send(f"setoption name {option} value {value}")
    self.client.send("isready")
    self.client.read_until(lambda line: line == "readyok", timeout)

  def new_game(self) -> None:
    self.client.send("usinewgame")

  def move(self, position: Position) -> str:
    self.client.send("position startpos" + (" moves " + " ".join(position.moves) if position.moves else ""))
    self.client.send(f"go btime 0 wtime 0 byoyomi {self.movetime_ms}")
    line = self.client.read_until(lambda line: line.startswith("bestmove"), self.timeout + self.movetime_ms / 1e3)
    words = line[-1].split()
    return words[1] if len(words) > 1 else "resign"

  def close(self) -> None:
    self.client.close()


class FairyStockfish(UsiOpponent):
  """Fairy-Stockfish in its USI mode (shogi)."""

  def __init__(self, path: str, movetime_ms: int, skill: int | None = None, timeout: float = 30.0):
    super().__init__([path], "fairy-stockfish" + (f" skill {skill}" if skill is not None else ""), movetime_ms,
                     {"Skill Level": skill} if skill is not None else {}, timeout)


def chess_board(position: Position):
  import chess  # noqa: PLC0415
  board = chess.Board()
  for move in position.moves:
    board.push_uci(move)
  return board


@dataclasses.dataclass
class GameOutcome:
  index: int
  agent_colour: int
  points: float | None  # the agent's: 1, 0.5, 0; None when aborted
  reason: str
  moves: list[str]
  seconds: float
  opponent: str = ""  # the engine's name


def play_game(index: int, thinker: Thinker, opponent: Opponent, game: str, agent_colour: int, opening: list[int],
              max_plies: int) -> GameOutcome:
  """One game; raises EngineFailure if the engine fails (the caller records the game as aborted)."""
  started = time.time()
  position = position_for(game)
  opponent.new_game()
  for action in opening:
    if not position.over:
      position.push(action)
  resigned = verdict = None
  try:
    while not position.over and len(position.moves) < max_plies:
      if position.color == agent_colour:
        weights, _, _ = thinker.think(position.state, thinker.simulations, position.env)
        position.push_best(weights)
      else:
        move = opponent.move(position)
        if move in ("resign", "win"):  # USI's `win` declares a win (entering king); treated as our resignation
          resigned = position.color if move == "resign" else agent_colour
          break
        try:
          position.play(move)
        except IllegalMove as e:
          raise EngineFailure(f"{opponent.name} played {move!r}, which is not legal here ({e})") from None
    if resigned is None and position.over:
      verdict = opponent.judge(position)  # an engine that fails to count aborts the game with its moves kept
  except EngineFailure as e:
    e.moves, e.seconds = tuple(position.moves), time.time() - started
    raise
  if resigned is not None:
    points, reason = (1.0 if resigned != agent_colour else 0.0), ("resignation" if resigned != agent_colour
                                                                  else "declared win")
  elif position.over:
    if verdict is None:
      returns = position.returns()
      verdict = 0.5 + 0.5 * float(returns[0])
      reason = "rules (pgx)"
    else:
      reason = f"{opponent.name}'s count {opponent.count}".strip()
    if position.at_cap:  # an unfinished game: its result is the rules' or the engine's count of the board there
      reason += f" at pgx's {len(position.moves)}-ply cap"
    points = verdict if agent_colour == 0 else 1.0 - verdict
  else:
    points, reason = 0.5, f"adjudicated draw at {max_plies} plies"
  return GameOutcome(index, agent_colour, points, reason, list(position.moves), time.time() - started, opponent.name)


def random_opening(game: str, plies: int, seed: int) -> list[int]:
  """`plies` uniformly random moves the referee accepts (no passes in Go while a stone can be placed)."""
  rng, position, actions = np.random.default_rng(seed), position_for(game), []
  for _ in range(plies):
    legal = position.legal_actions()
    if position.over or len(legal) == 0:
      break
    if game in ("go9", "go"):
      legal = legal[legal != position.num_actions - 1] if len(legal) > 1 else legal  # no opening passes
    while True:  # a Go move that repeats an earlier board is in pgx's mask, and the referee refuses it
      action = int(rng.choice(legal))
      try:
        position.push(action)
        break
      except IllegalMove:
        legal = legal[legal != action]
        if len(legal) == 0:
          legal = np.array([position.always_legal])
    actions.append(action)
  return actions


class Records:
  """Game records and results.csv in `out`, appended game by game."""

  def __init__(self, out: Path, game: str, agent_name: str, opponent_name: str, komi: float = 7.5):
    self.out, self.game, self.agent, self.opponent, self.komi = out, game, agent_name, opponent_name, komi
    out.mkdir(parents=True, exist_ok=True)
    self.results = out / "results.csv"
    if not self.results.exists():
      self.results.write_text("game,agent_colour,points,reason,plies,seconds\n")

  def add(self, g: GameOutcome) -> None:
    with self.results.open("a", newline="") as f:
      csv.writer(f).writerow([g.index, g.agent_colour, "" if g.points is None else g.points, g.reason,
                              len(g.moves), f"{g.seconds:.1f}"])
    names = (self.agent, self.opponent) if g.agent_colour == 0 else (self.opponent, self.agent)
    first_points = None if g.points is None else (g.points if g.agent_colour == 0 else 1.0 - g.points)
    result = {None: "*", 1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}[first_points]
    if self.game == "chess":
      import chess.pgn  # noqa: PLC0415
      record = chess.pgn.Game()
      record.headers.update(Event="azjax match", Round=str(g.index + 1), White=names[0], Black=names[1],
                            Result=result, Date=datetime.date.today().strftime("%Y.%m.%d"))
      node = record
      for move in g.moves:
        node = node.add_variation(chess.Move.from_uci(move))
      record.headers["Termination"] = g.reason
      with (self.out / "games.pgn").open("a") as f:
        f.write(str(record) + "\n\n")
    elif self.game in ("go9", "go"):
      size = 9 if self.game == "go9" else 19
      re_ = {"1-0": "B+", "0-1": "W+", "1/2-1/2": "0", "*": "?"}[result]
      nodes = "".join(f";{'BW'[i % 2]}[{_sgf_point(m, size)}]" for i, m in enumerate(g.moves))
      with (self.out / "games.sgf").open("a") as f:
        f.write(f"(;GM[1]FF[4]SZ[{size}]KM[{self.komi}]RU[Chinese]PB[{names[0]}]PW[{names[1]}]RE[{re_}]"
                f"GC[{_sgf_text(g.reason)}]{nodes})\n")
    else:
      with (self.out / "games.usi").open("a") as f:
        f.write(f"# game {g.index + 1}: sente {names[0]}, gote {names[1]}, result {result} ({g.reason})\n")
        f.write("position startpos" + (" moves " + " ".join(g.moves) if g.moves else "") + "\n")
      record = kif.kif(g.moves, names[0], names[1], first_points, g.reason, datetime.date.today().strftime("%Y/%m/%d"))
      (self.out / "kif").mkdir(exist_ok=True)
      (self.out / "kif" / f"game_{g.index + 1:03d}.kif").write_text(record, encoding="utf-8")


def _sgf_text(text: str) -> str:
  return text.replace("\\", "\\\\").replace("]", "\\]")  # SGF's two escapes in a text value


def _sgf_point(move: str, size: int) -> str:
  if move == "pass":
    return ""
  col = "ABCDEFGHJKLMNOPQRST".index(move[0].upper())
  row = size - int(move[1:])
  return "abcdefghijklmnopqrs"[col] + "abcdefghijklmnopqrs"[row]


def run_match(thinker: Thinker, make_opponent, game: str, games: int, out: Path, *, opening_plies: int = 2,
              seed: int = 0, max_plies: int = 1000, log=print) -> tuple[arena.MatchResult, list[GameOutcome]]:
  """Plays `games` games (the agent takes the first colour in even ones); returns the result and every game."""
  opponent = make_opponent()
  records = Records(out, game, f"azjax {game} step {thinker.agent.step}", opponent.name,
                    komi=getattr(opponent, "komi", rules.GO_KOMI))  # a Go opponent counts with its own komi
  outcomes, failures = [], 0
  try:
    for i in range(games):
      opening = random_opening(game, opening_plies, seed * 100003 + i // 2)
      try:
        outcome = play_game(i, thinker, opponent, game, i % 2, opening, max_plies)
        failures = 0
      except EngineFailure as e:
        failures += 1
        log(f"game {i + 1}: aborted: {e}")
        outcome = GameOutcome(i, i % 2, None, f"aborted: {e}", list(e.moves), e.seconds, opponent.name)
        opponent.close()
        stop = "two engine failures in a row" if failures >= 2 else None
        if not stop:
          try:
            opponent = make_opponent()
          except EngineFailure as restart:  # the games so far stand: a run's evaluation goes on without the rest
            stop = f"the engine did not restart ({restart})"
        if stop:
          records.add(outcome)
          outcomes.append(outcome)
          log(f"{stop}: the match stops here")
          break
      records.add(outcome)
      outcomes.append(outcome)
      if outcome.points is not None:
        log(f"game {i + 1}: agent as {('first', 'second')[i % 2]} player: {outcome.points:g} ({outcome.reason}, "
            f"{len(outcome.moves)} plies)")
  finally:
    opponent.close()
  played = [o.points for o in outcomes if o.points is not None]
  result = arena.MatchResult(wins=sum(p == 1.0 for p in played), draws=sum(p == 0.5 for p in played),
                             losses=sum(p == 0.0 for p in played))
  return result, outcomes
