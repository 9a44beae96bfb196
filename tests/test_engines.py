"""UCI, USI and GTP: protocol transcripts, error paths, real clients, long games, answers in time, garbage."""

import io
import os
import random
import subprocess
import sys
import threading
import time

import chess
import chess.engine
import jax
import pytest

from azjax.engines import match as m
from azjax.engines.base import Thinker, load
from azjax.engines.gtp import GtpEngine
from azjax.engines import uci as uci_main
from azjax.engines import usi as usi_main
from azjax.engines.launch import engine_parser, launch
from azjax.engines.pgx_private import engine_env
from azjax.engines.positions import GoPosition, IllegalMove, ShogiPosition
from azjax.engines.searching import UciEngine, UsiEngine
from conftest import ROOT, batched_init, untrained_agent, untrained_checkpoint


class Transcript:
  """Feeds an in-process engine lines and collects what it answers."""

  def __init__(self, engine_cls, game, **kw):
    self.out = io.StringIO()
    self.engine = engine_cls(Thinker(untrained_agent(game), seed=0), out=self.out, **kw)

  def __call__(self, *lines, wait=True):
    start = len(self.out.getvalue())
    for line in lines:
      self.engine.handle(line)
    if wait:
      self.engine.halt() if hasattr(self.engine, "halt") else None
    return self.out.getvalue()[start:].splitlines()


@pytest.fixture(scope="module")
def uci():
  return Transcript(UciEngine, "chess")


@pytest.fixture(scope="module")
def usi():
  return Transcript(UsiEngine, "shogi")


@pytest.fixture(scope="module")
def gtp():
  return Transcript(GtpEngine, "go9")


def test_uci_transcript(uci):
  lines = uci("uci")
  assert lines[0].startswith("id name azjax chess") and lines[-1] == "uciok"
  assert uci("isready") == ["readyok"]
  uci("ucinewgame", "position startpos moves e2e4 e7e5")
  lines = uci("go nodes 4")
  assert lines[0].startswith("info nodes 4 nps") and " score cp " in lines[0]
  best = lines[-1].split()[1]
  board = chess.Board()
  board.push_uci("e2e4")
  board.push_uci("e7e5")
  assert chess.Move.from_uci(best) in board.legal_moves
  # An illegal move is an error and leaves the position as it was.
  assert uci("position startpos moves e2e4 e7e5 e1e3")[0].startswith("info string error: position not changed")
  assert uci.engine.position.moves == ["e2e4", "e7e5"]
  assert uci("go movetime 50")[-1].startswith("bestmove ")
  assert uci("flurb")[0] == "info string error: unknown command: flurb"
  assert uci("position fen 7k/8/8/8/8/8/8/K7 w - - 0")[0].startswith("info string error")  # five fields
  uci("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")  # black is stalemated
  assert uci("go nodes 4") == ["bestmove (none)"]


def test_uci_plays_on_after_a_repetition_that_no_one_claimed(uci):
  """A GUI that plays past a threefold repetition (a draw only when claimed) gets moves, and its moves are accepted."""
  shuffle = "g1f3 g8f6 f3g1 f6g8 " * 2
  uci("ucinewgame", f"position startpos moves {shuffle}")
  best = uci("go nodes 4")[-1].split()[1]
  assert best != "(none)" and chess.Move.from_uci(best) in chess.Board().legal_moves
  assert uci(f"position startpos moves {shuffle}e2e4 e7e5") == []
  assert uci.engine.position.moves[-2:] == ["e2e4", "e7e5"]


def test_uci_searchmoves_narrows_the_search_and_nodes_0_searches_least(uci):
  uci("ucinewgame", "position startpos")
  for only in (["a2a3"], ["h2h4"], ["g1h3", "b2b3"]):
    lines = uci(f"go searchmoves {' '.join(only)} nodes 4")
    assert lines[-1].split()[1] in only and not any("error" in line for line in lines), lines
  lines = uci("go searchmoves e2e5 a2a3 movetime 50")  # an illegal move is named, the rest still narrow it
  assert lines[0].startswith("info string error: go searchmoves: e2e5 is not legal here") and lines[-1] == "bestmove a2a3"
  thinker = uci.engine.thinker
  assert thinker.simulations_for(None, 0) == thinker.ladder()[0] < thinker.simulations


def test_uci_infinite_waits_for_stop(uci):
  uci("position startpos")
  assert uci("go infinite", wait=False) == []
  time.sleep(0.5)
  assert not any(line.startswith("bestmove") for line in uci("isready", wait=False))
  assert uci("stop")[-1].startswith("bestmove ")
  # A ponder search waits the same way, and answers at ponderhit (the GUI's opponent played the pondered move).
  assert uci("go ponder wtime 1000 btime 1000", wait=False) == []
  time.sleep(0.5)
  assert not any(line.startswith("bestmove") for line in uci("isready", wait=False))
  answered, deadline = uci.out.getvalue(), time.time() + 60
  uci("ponderhit", wait=False)  # not halted by the transcript: ponderhit alone must bring the bestmove
  while time.time() < deadline and "bestmove" not in uci.out.getvalue()[len(answered):]:
    time.sleep(0.05)
  assert uci.out.getvalue()[len(answered):].splitlines()[-1].startswith("bestmove ")


def test_uci_position_extends_the_game_and_limits_pick_rungs(uci):
  """A GUI resends the game before each `go`: only new moves are played. Node limits pick a compiled rung."""
  uci("ucinewgame", "position startpos moves e2e4")
  game = uci.engine.position
  uci("position startpos moves e2e4 e7e5")
  assert uci.engine.position is game and game.moves == ["e2e4", "e7e5"]
  assert uci("position startpos moves e2e4 e7e5 g1f3 e8e6")[0].startswith("info string error: position not changed")
  assert uci.engine.position is game and game.moves == ["e2e4", "e7e5"] and len(game.states) == 3
  uci("position startpos moves d2d4")
  assert uci.engine.position is not game and uci.engine.position.moves == ["d2d4"]
  thinker = uci.engine.thinker  # 4 simulations: rungs 1 and 4
  assert [thinker.simulations_for(None, n) for n in (1, 3, 4, 10 ** 9)] == [1, 1, 4, 4]
  assert uci("setoption name Simulations value 1000001")[0].startswith("info string error: setoption: Simulations")


def test_ready_compiles_the_full_search_and_a_clock_picks_only_rungs_already_compiled():
  """`readyok` waits for one compile (the full count); the smaller rungs compile behind it, and until they have, a
  clock too tight for the full search still gets a compiled one. Warm-up draws no key from the moves' sequence."""
  agent = untrained_agent("tictactoe")
  thinker = Thinker(agent, simulations=16, seed=0)  # rungs 1, 4, 16
  state = jax.tree.map(lambda x: x[0], batched_init(agent.env)(jax.random.split(jax.random.PRNGKey(0), 1)))
  held, compile_now = threading.Event(), thinker._compile

  def compile_when_let(state, env, sizes):  # the background thread waits for the test
    if threading.current_thread() is not threading.main_thread():
      held.wait()
    compile_now(state, env, sizes)

  thinker._compile = compile_when_let
  thinker.warm_up(state, background=True)
  assert set(thinker.seconds_per_sim) == {16} and thinker.searches == 0
  assert thinker.simulations_for(1e-9) == 16  # nothing smaller has compiled: no compile on the clock
  assert thinker.simulations_for(None) == 16
  held.set()
  assert thinker.simulations_for(None, 5) == 4  # a node limit waits for the rungs
  assert set(thinker.seconds_per_sim) == {1, 4, 16} and thinker.searches == 0
  assert thinker.simulations_for(1e-9) == 1


_EXIT_WHILE_COMPILING = """
import atexit, sys, jax
sys.path.insert(0, "tests")
from conftest import batched_init, untrained_agent
from azjax.engines.base import Thinker
thinker = Thinker(untrained_agent("tictactoe"), simulations=16, seed=0)  # rungs 1, 4, 16
state = jax.tree.map(lambda x: x[0], batched_init(thinker.agent.env)(jax.random.split(jax.random.PRNGKey(0), 1)))
atexit.register(lambda: print("compiled", sorted(thinker.seconds_per_sim), flush=True))
thinker.warm_up(state, background=True)
print("alive", thinker._compiling.is_alive(), flush=True)
"""


def test_a_script_that_exits_while_the_smaller_rungs_compile_exits_cleanly_with_them_compiled():
  """Interpreter exit waits for the background compile: in a daemon thread, XLA aborted the process at exit
  ("FATAL: exception not rethrown", exit 134, its buffered output lost) in 3 of 6 tries."""
  done = subprocess.run([sys.executable, "-c", _EXIT_WHILE_COMPILING], capture_output=True, text=True, cwd=ROOT,
                        timeout=300)
  assert done.returncode == 0, done.stderr[-2000:]
  assert done.stdout.splitlines()[-1] == "compiled [1, 4, 16]", done.stdout


def test_usi_transcript(usi):
  lines = usi("usi")
  assert lines[-1] == "usiok"
  assert usi("setoption name USI_Hash value 256", "isready") == ["readyok"]
  usi("usinewgame", "position startpos moves 7g7f 3c3d")
  best = usi("go btime 0 wtime 0 byoyomi 100")[-1].split()[1]
  from azjax.engines.positions import ShogiPosition
  position = ShogiPosition()
  position.play("7g7f")
  position.play("3c3d")
  assert best in position.legal_moves()
  assert usi("position startpos moves 7g7f 7g7f")[0].startswith("info string error")
  assert usi.engine.position.moves == ["7g7f", "3c3d"]
  assert usi("go byoyomi x")[0].startswith("info string error: go: byoyomi needs a number")
  assert usi("go mate 1000") == ["checkmate notimplemented"] == usi("go mate infinite")  # a tsume search
  usi("gameover lose")
  assert usi("position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves 2g2f") == []


def test_gtp_transcript(gtp):
  assert gtp("1 protocol_version") == ["=1 2", ""]
  assert gtp("boardsize 19") == ["? unacceptable size", ""]
  assert gtp("boardsize 9", "clear_board", "komi 6.5") == ["=", "", "=", "", "=", ""]
  assert gtp("play black E5") == ["=", ""]
  assert gtp("play w E5") == ["? illegal move", ""]  # occupied
  assert gtp("play b Z9") == ["? syntax error", ""]
  assert gtp.engine.position.moves == ["E5"]
  reply = gtp("7 genmove w")
  assert reply[0].startswith("=7 ") and reply[1] == ""
  assert gtp("known_command genmove", "known_command fly") == ["= true", "", "= false", ""]
  assert gtp("undo", "undo") == ["=", "", "=", ""] and gtp.engine.position.moves == []
  assert gtp("undo") == ["? cannot undo", ""]
  assert gtp("play b PASS", "play w Pass", "undo", "undo") == ["=", "", "=", "", "=", "", "=", ""]  # GNU Go's capitals
  gtp("play b E5", "play b D5")  # black twice: a white pass goes between
  assert gtp.engine.position.moves == ["E5", "pass", "D5"]
  assert gtp("final_score") == ["= B+74.5", ""]  # 81 points of black area minus komi 6.5
  assert gtp("undo") == ["=", ""] and gtp.engine.position.moves == ["E5"]
  assert "list_commands" in "\n".join(gtp("list_commands"))
  assert gtp("bogus") == ["? unknown command", ""]


def _garbage_lines(words, n, seed):
  rng = random.Random(seed)
  junk = ["", "moves", "startpos", "fen", "sfen", "e2e4", "7g7f", "D4", "b", "w", "-1", "99999999999", "nan",
          "name", "value", "\x00", "é", "1", "x" * 300, "P*5e", "pass", "resign", "infinite", "nodes"]
  for _ in range(n):
    kind = rng.random()
    if kind < 0.4:
      yield " ".join([rng.choice(words)] + rng.choices(junk + words, k=rng.randrange(0, 6)))
    elif kind < 0.7:
      yield "".join(chr(rng.randrange(1, 0x250)) for _ in range(rng.randrange(0, 40)))
    else:
      yield " ".join(rng.choices(junk, k=rng.randrange(1, 8)))


@pytest.mark.parametrize("engine_cls, game, prefixes", [
    (UciEngine, "chess", ("id ", "option ", "uciok", "readyok", "info ", "bestmove ")),
    (UsiEngine, "shogi", ("id ", "option ", "usiok", "readyok", "info ", "bestmove ")),
])
def test_thousand_lines_of_garbage_uci_usi(engine_cls, game, prefixes):
  t = Transcript(engine_cls, game)
  words = [w for w in t.engine.commands if w != "quit"]
  for line in _garbage_lines(words, 1000, seed=len(game)):
    for answer in t(line):
      assert answer.startswith(prefixes), (line, answer)
    assert t.engine.running
  t("position startpos")
  assert t("isready") == ["readyok"] and t("go nodes 2")[-1].startswith("bestmove ")


def test_thousand_lines_of_garbage_gtp():
  t = Transcript(GtpEngine, "go9")
  words = [w for w in t.engine.commands if w != "quit"]
  for line in _garbage_lines(words, 1000, seed=3):
    answer = t(line)
    if answer:  # one reply per command: a status line, maybe more lines, and the empty line that ends it
      assert answer[0][:1] in ("=", "?") and answer[-1] == "", (line, answer)
    assert t.engine.running
  assert t("clear_board", "play b C3") == ["=", "", "=", ""]


def test_uci_engine_process_with_python_chess(tmp_path):
  """python-chess's UCI client drives the engine process."""
  checkpoint = untrained_checkpoint("chess", tmp_path / "chess")
  engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "azjax.engines.uci", "--checkpoint",
                                                checkpoint, "--simulations", "2"], cwd=ROOT, timeout=120)
  try:
    board = chess.Board()
    for _ in range(4):
      result = engine.play(board, chess.engine.Limit(time=0.2))
      assert result.move in board.legal_moves
      board.push(result.move)
    info = engine.analyse(board, chess.engine.Limit(nodes=2))
    assert info["score"] is not None and info["nodes"] == 2
  finally:
    engine.quit()


def _referee(position, sides, plies):
  """Alternates the sides' moves; pgx's rules (the Position) accept each one or raise IllegalMove."""
  for side in sides:
    side.new_game()
  for _ in range(plies):
    if position.over:
      break
    position.play(sides[position.color].move(position))


def test_gtp_engine_process_plays_gnugo(tmp_path):
  """Our GTP process and GNU Go's, spoken to alike (boardsize, komi, clear_board, play, genmove), referee pgx."""
  checkpoint = untrained_checkpoint("go9", tmp_path / "go9")
  ours = m.GtpOpponent([sys.executable, "-m", "azjax.engines.gtp", "--checkpoint", checkpoint, "--simulations", "2"],
                       "azjax", size=9, komi=7.5, timeout=180)
  gnugo = m.GnuGo(m.find_engine("gnugo"), level=1, size=9, komi=7.5)
  try:
    position = GoPosition("go9")
    _referee(position, (ours, gnugo), plies=12)
    position.play("pass")
    for side in (ours, gnugo):
      side.sync(position)  # both engines have heard every move: ours sees pgx's board
    assert ours.ask("showboard").splitlines() == position.showboard().splitlines()
    listed = ours.ask("list_commands").splitlines()  # a multi-line answer, framed as GTP says
    assert {"genmove", "play", "undo", "final_score", "showboard", "known_command"} <= set(listed)
    for side in (ours, gnugo):
      side.ask("undo")
    with pytest.raises(m.EngineFailure, match="illegal move"):
      ours.ask(f"play b {position.moves[0]}")  # still occupied after the undo
  finally:
    ours.close()
    gnugo.close()


def test_usi_engine_process_plays_fairy_stockfish(tmp_path):
  """Our USI process in a GUI's command order (usi, setoption, isready, usinewgame, position, go), referee pgx."""
  checkpoint = untrained_checkpoint("shogi", tmp_path / "shogi")
  ours = m.UsiOpponent([sys.executable, "-m", "azjax.engines.usi", "--checkpoint", checkpoint, "--simulations", "1"],
                       "azjax", movetime_ms=500, options={"USI_Hash": 256, "USI_Ponder": "false"}, timeout=180)
  fairy = m.FairyStockfish(m.find_engine("fairy-stockfish"), movetime_ms=10, skill=0)
  try:
    position = ShogiPosition()
    _referee(position, (ours, fairy), plies=10)
    assert len(position.moves) == 10
  finally:
    ours.close()
    fairy.close()


def _random_move(referee, rng) -> str:
  """Plays a random legal move other than a pass on the referee (a pass when there is none); returns it."""
  legal = [int(a) for a in referee.legal_actions() if a != referee.num_actions - 1]
  rng.shuffle(legal)
  for action in legal:
    try:
      referee.push(action)  # a superko repetition raises and is taken back
      return referee.moves[-1]
    except IllegalMove:
      pass
  referee.play("pass")
  return "pass"


def test_gtp_game_outlasts_pgx_length_cap(gtp):
  """250 moves of 9x9 Go through GTP: pgx ends its game after 162 plies, the engine's goes on; every move accepted."""
  rng = random.Random(5)
  referee = GoPosition("go9", engine_env("go9"))  # the engine's own rules
  capped = GoPosition("go9")  # pgx's default, as training plays
  assert gtp("clear_board") == ["=", ""]
  for ply in range(250):
    colour = "bw"[ply % 2]
    if ply % 5 == 4 and referee.moves[-1] != "pass":  # the engine's own move (never a second pass in a row)
      reply = gtp(f"genmove {colour}")
      assert reply[0].startswith("= ") and reply[1:] == [""], (ply, reply)
      move = reply[0][2:]
      referee.play(move)
    else:
      move = _random_move(referee, rng)
      assert gtp(f"play {colour} {move}") == ["=", ""], (ply, move)
    if not capped.over:
      capped.play(move)
  assert len(capped.moves) == 2 * 81 and capped.over
  assert gtp.engine.position.moves == referee.moves and len(referee.moves) == 250 and not referee.over
  assert referee.moves.count("pass") < 50


def test_uci_engine_answers_in_time_for_python_chess(tmp_path):
  """python-chess plays a game of the engine (white, 50 ms a move) against Stockfish with its default timeouts.

  The first `isready` compiles every search (python-chess's default 10 s for it is too short on two busy
  cores, so this one ping gets longer); after it no move waits for a compiler: each takes well under 1 s."""
  checkpoint = untrained_checkpoint("chess", tmp_path / "chess")
  ours = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "azjax.engines.uci", "--checkpoint", checkpoint,
                                              "--simulations", "8"], cwd=ROOT)
  stockfish = chess.engine.SimpleEngine.popen_uci(m.find_engine("stockfish"))
  try:
    default, ours.timeout = ours.timeout, 120.0
    ours.ping()  # isready: the warm-up
    ours.timeout = default
    stockfish.configure({"Skill Level": 0})
    board, seconds = chess.Board(), []
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < 60:
      started = time.perf_counter()
      if board.turn == chess.WHITE:
        result = ours.play(board, chess.engine.Limit(time=0.05))
        seconds.append(time.perf_counter() - started)
      else:
        result = stockfish.play(board, chess.engine.Limit(time=0.01))
      assert result.move in board.legal_moves, board.fen()
      board.push(result.move)
  finally:
    ours.quit()
    stockfish.quit()
  assert default == 10.0 and len(seconds) >= 2 and (board.is_game_over(claim_draw=True) or len(board.move_stack) == 60)
  assert max(seconds) < 1.0, [round(s, 3) for s in seconds]


def test_an_engine_searches_with_the_settings_it_is_started_with_and_refuses_others(tmp_path):
  checkpoint = untrained_checkpoint("chess", tmp_path / "chess")
  parse = lambda *extra: engine_parser("test").parse_args(["--checkpoint", checkpoint, *extra])
  assert load(parse(), ("chess",)).config.search.draw_value == 0.0  # the checkpoint's own
  agent = load(parse("--set", "search.draw_value=-0.5", "--set", "search.max_considered_actions=8"), ("chess",))
  assert (agent.config.search.draw_value, agent.config.search.max_considered_actions) == (-0.5, 8)
  for bad, field in [("search.draw_value=2", "search.draw_value"), ("network.blocks=3", "network.blocks")]:
    with pytest.raises(SystemExit, match=field):
      load(parse("--set", bad), ("chess",))


class _Said(io.StringIO):
  """An engine's stdout that notes when a word has been written."""

  def __init__(self, word: str):
    super().__init__()
    self.word, self.seen = word, threading.Event()

  def write(self, text):
    if self.word in text:
      self.seen.set()
    return super().write(text)


@pytest.mark.parametrize("protocol,game,module", [("uci", "chess", uci_main), ("usi", "shogi", usi_main)])
def test_the_handshake_is_answered_before_the_network_loads_and_says_what_loads(tmp_path, protocol, game, module):
  """`uci`/`usi` is answered from the checkpoint's meta while the engine is still being built (here: held until
  the answer is out); the answer is the one the loaded engine gives, naming the step that loads."""
  checkpoint = untrained_checkpoint(game, tmp_path / game)
  out, built = _Said(f"{protocol}ok"), []

  def build(args, facts):
    assert out.seen.wait(60), "the handshake waited for the network"
    built.append(module.build(args, facts))
    built[-1].out = out
    return built[-1]

  launch(protocol, (game,), "test", build, ["--checkpoint", checkpoint, "--simulations", "3"],
         stdin=[f"{protocol}\n", "isready\n", f"{protocol}\n", "quit\n"], out=out)
  lines = out.getvalue().splitlines()
  early = lines[:lines.index(f"{protocol}ok") + 1]
  assert early[0] == f"id name azjax {game} step 0" and "default 3 " in early[2]
  assert lines[len(early):] == ["readyok", *early]  # the loaded engine's own answer is the same
  assert built[0].thinker.agent.step == 0 and built[0].thinker.simulations == 3


def test_an_engine_quits_while_loading_keeps_its_compiled_searches_and_names_a_network_that_fails_to_load(tmp_path):
  checkpoint, cache = untrained_checkpoint("chess", tmp_path / "chess"), tmp_path / "cache"
  engine = [sys.executable, "-m", "azjax.engines.uci", "--checkpoint", checkpoint, "--simulations", "1"]
  own = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}  # the suite's cache would win
  quick = subprocess.run([*engine, "--compile-cache", str(cache)], input="uci\nquit\n", capture_output=True,
                         text=True, cwd=ROOT, env=own, timeout=120)
  assert quick.returncode == 0 and quick.stdout.splitlines()[-1] == "uciok", quick.stderr
  # Warmed up, the engine leaves its compiled programs in the cache it was given, for its next start.
  ready = subprocess.run([*engine, "--compile-cache", str(cache)], input="uci\nisready\nquit\n", capture_output=True,
                         text=True, cwd=ROOT, env=own, timeout=600)
  assert ready.stdout.splitlines()[-1] == "readyok" and len(list(cache.iterdir())) >= 2, ready.stderr
  # A model whose files have the right sizes but unreadable contents passes the size check, answers `uci`,
  # then fails to load: said on stdout for the GUI and on stderr, and the engine exits with an error.
  metadata = tmp_path / "chess" / "checkpoints" / "0" / "model" / "_METADATA"
  metadata.write_bytes(b"\0" * metadata.stat().st_size)
  broken = subprocess.run(engine, input="uci\nisready\n", capture_output=True, text=True, cwd=ROOT, timeout=300)
  lines = broken.stdout.splitlines()
  assert lines[3] == "uciok" and lines[4].startswith("info string error: could not load ") and len(lines) == 5
  assert broken.returncode == 1 and "error: could not load" in broken.stderr


def test_a_halving_winner_the_referee_refuses_gives_way_to_the_next_best_move_not_to_pass():
  """Under search.gumbel_act=halving a search's move weights are its winner's alone. A Go referee refuses a move
  that repeats an earlier board (superko), which pgx's mask allows: the engine then plays the improved policy's
  next best move, where the weights alone would have left it nothing but pass."""
  import dataclasses  # noqa: PLC0415
  import azjax  # noqa: PLC0415
  agent = untrained_agent("go9", simulations=8)
  agent = dataclasses.replace(agent, config=azjax.apply_overrides(
      agent.config, ["search.algorithm=gumbel", "search.gumbel_act=halving"]))
  thinker = Thinker(agent, seed=0)

  class Refusing(GoPosition):  # refuses the first move it is asked to play, as a referee refuses a superko
    refused = None

    def push(self, action):
      if self.refused is None:
        self.refused = action
        raise IllegalMove("repeats an earlier board")
      super().push(action)

  position = Refusing()
  weights, _, _ = thinker.think(position.state, thinker.simulations, position.env)
  played = position.push_best(weights)
  assert position.refused == int(weights.argmax())  # the winner was tried first
  assert played not in (position.refused, position.always_legal), played
  assert weights[played] == max(w for a, w in enumerate(weights) if a != position.refused)
