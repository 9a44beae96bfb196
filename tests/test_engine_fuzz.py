"""Hostile input: 1,200 seeded malformed lines per protocol, sent as raw bytes through the engines' stdin path.

Random bytes (not UTF-8), 100,000-character lines, half-valid commands, out-of-range numbers and moves that do
not exist. Every 20 lines a probe (`isready`, or GTP `name` with an id) must be answered at once; every answer
must be in the protocol's form; afterwards the engine still plays a legal move.
"""

import io
import random
import re

import chess
import pytest

from azjax.engines.base import Thinker, serve
from azjax.engines.gtp import GtpEngine
from azjax.engines.pgx_private import engine_env
from azjax.engines.positions import GoPosition, ShogiPosition
from azjax.engines.searching import UciEngine, UsiEngine
from conftest import untrained_agent

LINES = 1200
PROBE_EVERY = 20
NUMBERS = ["-1", "0", "-0", "2147483648", "-2147483649", "99999999999999999999", "1e999", "nan", "inf", "-inf",
           "0x10", "1.5", "", "\u0663", "9" * 5000, "-" + "9" * 40]
JUNK = ["moves", "startpos", "fen", "sfen", "name", "value", "infinite", "nodes", "\x00", "\x1b[2J", "\u00e9",
        "\ufeff", "\u202e", "#", "=", "?", "\\", "'", '"', "{}", "%s", "\t"]

TEMPLATES = {
    "uci": ["position startpos moves {m}", "position startpos moves e2e4 {m}", "position fen {j}",
            "position fen {j} {j} {j} {j} {j} {j}", "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
            "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - {n} {n}", "position",
            "position moves e2e4", "position startpos moves", "position startpos {j}", "go {w} {n}", "go {w}",
            "go {w} {n} {w} {n}", "go nodes {n}", "go movetime {n}", "go wtime {n} btime {n} winc {n} binc {n}",
            "go infinite", "stop {j}", "setoption name Simulations value {n}", "setoption name {j} value {n}",
            "setoption {j}", "setoption name", "uci {j}", "ucinewgame {j}", "debug {j}", "ponderhit {j}"],
    "usi": ["position startpos moves {m}", "position startpos moves 7g7f {m}", "position sfen {j}",
            "position sfen {j} {j} {j} {j}", "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL "
            "{j} - {n}", "position sfen 9/9/9/9/9/9/9/9/9 b - 1", "position", "position startpos moves",
            "go {w} {n}", "go {w}", "go btime {n} wtime {n} byoyomi {n}", "go byoyomi {n} {w}", "go infinite",
            "stop {j}", "setoption name Simulations value {n}", "setoption name Simulations", "setoption name {j}",
            "setoption {j}", "usi {j}", "usinewgame {j}", "gameover {j}", "ponderhit {j}"],
    "gtp": ["boardsize {n}", "boardsize {j}", "komi {n}", "komi", "play {c} {m}", "play {c}", "play {j} {j} {j}",
            "genmove {c}", "genmove {j} {j}", "undo {j}", "known_command {j}", "{n} {j}", "{n}", "final_score {j}",
            "showboard", "clear_board {j}", "list_commands", "protocol_version {n}", "{n} play {c} {m}",
            "play {c} {m} # {j}"],
}
WORDS = {"uci": ["wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate", "ponder"],
         "usi": ["btime", "wtime", "byoyomi", "binc", "winc", "nodes", "movetime", "mate", "ponder"],
         "gtp": []}
MOVES = {"uci": ["e2e5", "e9e9", "z1z2", "e7e8k", "e2e4q", "e1g1", "a1a1", "E2E4", "0000", "e2", "e2e4e5"],
         "usi": ["7g7f7", "P*5e", "9z9a", "K*5e", "1a1a+", "0a0b", "5e", "7g7f+", "B*", "8h2b"],
         "gtp": ["Z9", "A0", "A10", "J99", "I5", "pass2", "resign", "A", "11", "T19", "-A1", "E5", "C3", "pass"]}
COLOURS = ["b", "w", "black", "white", "B", "x", "", "bw", "\u0431"]


def _junk(rng) -> str:
  return rng.choice(JUNK + NUMBERS + [bytes(rng.randrange(33, 127) for _ in range(8)).decode()])


def _fill(rng, template: str, protocol: str) -> str:
  words = WORDS[protocol] or JUNK
  return re.sub(r"\{(\w)\}", lambda m: {"n": lambda: rng.choice(NUMBERS), "j": lambda: _junk(rng),
                                         "m": lambda: rng.choice(MOVES[protocol]),
                                         "w": lambda: rng.choice(words + JUNK),
                                         "c": lambda: rng.choice(COLOURS)}[m[1]](), template)


def hostile_lines(protocol: str, commands: list[str], n: int, seed: int) -> list[bytes]:
  """`n` malformed lines (as bytes, no newline) for a protocol whose command words are `commands`."""
  rng = random.Random(seed)
  lines = []
  for _ in range(n):
    kind = rng.random()
    if kind < 0.2:  # random bytes, often not UTF-8
      line = rng.randbytes(rng.randrange(0, 200))
    elif kind < 0.25:  # a huge line
      head = rng.choice([rng.choice(commands), _fill(rng, rng.choice(TEMPLATES[protocol]), protocol), ""])
      body = rng.choice([lambda: "x" * 100_000, lambda: "9" * 100_000,
                         lambda: " ".join(rng.choice(MOVES[protocol]) for _ in range(20_000)),
                         lambda: "".join(chr(rng.randrange(1, 0x3000)) for _ in range(1000)) * 100])
      line = (head + " " + body()).encode("utf-8", "surrogatepass")
    elif kind < 0.85:  # half-valid commands, out-of-range numbers, moves that do not exist
      line = _fill(rng, rng.choice(TEMPLATES[protocol]), protocol).encode("utf-8", "surrogatepass")
    else:  # a command word with random words after it
      words = [rng.choice(commands)] + [_junk(rng) for _ in range(rng.randrange(0, 6))]
      line = " ".join(words).encode("utf-8", "surrogatepass")
    lines.append(line.replace(b"\n", b" "))
  return lines


class Stdin(io.TextIOWrapper):
  """Raw bytes as the engine's stdin; calls `after(line)` once the engine has handled each line."""

  def __init__(self, data: bytes, after):
    super().__init__(io.BytesIO(data), encoding="utf-8")
    self.after, self.previous, self.count = after, None, 0

  def __next__(self):
    if self.previous is not None:
      self.after(self.previous)
    self.previous = line = super().__next__()
    self.count += 1
    return line


def _feed(engine, out: io.StringIO, lines: list[bytes], probe: bytes, is_probe, answered) -> None:
  """Serves the engine the lines with a probe every PROBE_EVERY lines; checks the answer to each probe at once."""
  stream, probes = [], 0
  for i, line in enumerate(lines):
    stream.append(line)
    if i % PROBE_EVERY == PROBE_EVERY - 1:
      stream.append(probe.replace(b"ID", str(1000 + probes).encode()))
      probes += 1
  seen = {"probes": 0, "mark": 0}

  def after(line: str):
    line = line.rstrip("\r\n")
    if is_probe(line):
      assert answered(out.getvalue()[seen["mark"]:], line), f"no answer to {line!r}"
      seen["probes"] += 1
    seen["mark"] = out.tell()

  stdin = Stdin(b"\n".join(stream) + b"\n", after)
  serve(engine, stdin)  # (the last line is checked by the __next__ that ends the loop)
  assert seen["probes"] >= probes and engine.running and stdin.count >= len(stream)


def _searching_engine(engine_cls, game: str, seed: int):
  out = io.StringIO()
  engine = engine_cls(Thinker(untrained_agent(game), seed=0), out=out)
  words = [w for w in engine.commands if w != "quit"]
  lines = hostile_lines(engine.protocol, words, LINES, seed)
  _feed(engine, out, lines, b"isready", lambda line: line == "isready", lambda text, _: "readyok\n" in text)
  prefixes = ("id ", "option ", f"{engine.protocol}ok", "readyok", "info ", "bestmove ",
              *(("checkmate notimplemented",) if engine.protocol == "usi" else ()))  # USI's answer to `go mate`
  for answer in out.getvalue().splitlines():
    assert answer.startswith(prefixes), answer[:200]
    assert answer.isprintable(), answer[:200]
  assert any(a.startswith("info string error: ") for a in out.getvalue().splitlines())
  assert "internal error" not in out.getvalue()  # every malformed line has an error of its own
  return engine, out


def _then(engine, out, *lines) -> list[str]:
  start = len(out.getvalue())
  for line in lines:
    engine.handle(line)
  engine.halt()
  return out.getvalue()[start:].splitlines()


def test_uci_survives_hostile_input():
  engine, out = _searching_engine(UciEngine, "chess", seed=11)
  assert _then(engine, out, "isready") == ["readyok"]
  best = _then(engine, out, "ucinewgame", "position startpos moves e2e4 e7e5", "go movetime 50")[-1].split()
  board = chess.Board()
  board.push_uci("e2e4")
  board.push_uci("e7e5")
  assert best[0] == "bestmove" and chess.Move.from_uci(best[1]) in board.legal_moves


def test_usi_survives_hostile_input():
  engine, out = _searching_engine(UsiEngine, "shogi", seed=12)
  assert _then(engine, out, "isready") == ["readyok"]
  best = _then(engine, out, "usinewgame", "position startpos moves 7g7f 3c3d", "go btime 0 wtime 0 byoyomi 50")
  position = ShogiPosition()
  position.play("7g7f")
  position.play("3c3d")
  assert best[-1].startswith("bestmove ") and best[-1].split()[1] in position.legal_moves()


def test_gtp_survives_hostile_input():
  out = io.StringIO()
  engine = GtpEngine(Thinker(untrained_agent("go9"), seed=0), out=out)
  words = [w for w in engine.commands if w != "quit"]
  lines = hostile_lines("gtp", words, LINES, seed=13)
  _feed(engine, out, lines, b"ID name", lambda line: re.fullmatch(r"\d+ name", line),
        lambda text, line: f"={line.split()[0]} azjax\n\n" in text)
  answers = out.getvalue().split("\n\n")  # each answer ends with an empty line
  assert answers[-1] == "" and all(a.lstrip("\n")[:1] in ("=", "?") for a in answers[:-1])
  assert any(a.startswith("? ") for a in answers) and "internal error" not in out.getvalue()
  start = len(out.getvalue())
  for line in ("clear_board", "play b E5", "genmove w"):
    engine.handle(line)
  replies = out.getvalue()[start:].split("\n\n")
  assert replies[:2] == ["=", "="] and replies[2].startswith("= "), replies
  move = replies[2][2:]
  assert engine.position.moves == ["E5", move]
  referee = GoPosition("go9", engine_env("go9"))
  referee.play("E5")
  referee.play(move)  # raises IllegalMove if it is not


@pytest.mark.parametrize("protocol", ["uci", "usi", "gtp"])
def test_hostile_lines_are_what_they_claim(protocol):
  """The generator is seeded, yields 1,200 lines, some not UTF-8 and some of 100,000 characters."""
  lines = hostile_lines(protocol, ["a", "b"], LINES, seed=1)
  assert lines == hostile_lines(protocol, ["a", "b"], LINES, seed=1) and len(lines) == LINES
  assert sum(len(line) >= 100_000 for line in lines) > 20

  def utf8(line):
    try:
      line.decode("utf-8")
      return True
    except UnicodeDecodeError:
      return False

  assert sum(not utf8(line) for line in lines) > 100
