"""Move notation against independent referees: python-chess for chess, hand-checked cases for shogi and Go."""

import dataclasses
import random
from pathlib import Path

import chess
import numpy as np
import pgx
import pytest

from azjax.engines import pgx_private
from azjax.engines.positions import ChessPosition, GoPosition, IllegalMove, PlayOnChessPosition, ShogiPosition


def test_chess_legal_moves_match_python_chess_over_random_games():
  rng = random.Random(0)
  for _ in range(2):
    board, position = chess.Board(), ChessPosition()
    for _ in range(70):
      if board.is_game_over() or position.over:
        break
      theirs = sorted(m.uci() for m in board.legal_moves)
      assert sorted(position.legal_moves()) == theirs, board.fen()
      move = rng.choice(theirs)
      position.play(move)
      board.push_uci(move)


def test_an_engines_chess_game_goes_on_past_draws_left_to_a_claim_and_ends_where_the_rules_end_it():
  """pgx ends a game at threefold repetition and at fifty moves, which FIDE's Laws leave to a claim; the referee's
  position ends there, an engine's plays on (its legal moves python-chess's) and ends at fivefold and 75 moves."""
  knights = "g1f3 g8f6 f3g1 f6g8".split()
  referee, engine, board = ChessPosition(), PlayOnChessPosition(), chess.Board()
  for move in knights * 2:  # the initial position for the third time
    referee.play(move), engine.play(move), board.push_uci(move)
  assert referee.over and board.can_claim_threefold_repetition() and not engine.over
  assert sorted(engine.legal_moves()) == sorted(m.uci() for m in board.legal_moves)
  for move in knights * 2:  # ... and the fifth
    assert not engine.over
    engine.play(move)
  assert engine.over and engine.board.is_fivefold_repetition() and list(engine.returns()) == [0, 0]
  engine.undo()
  assert not engine.over and len(engine.moves) == 15
  with pytest.raises(IllegalMove):
    referee.play("e2e4")  # the referee's game is over
  fifty = "4k3/8/8/8/8/8/8/R3K3 w - - 99 80"
  referee, engine = ChessPosition(fifty), PlayOnChessPosition(fifty)
  referee.play("a1a2"), engine.play("a1a2")
  assert referee.over and not engine.over and int(engine.state._x.halfmove_count) == 99
  board = chess.Board(fifty)
  board.push_uci("a1a2")
  assert sorted(engine.legal_moves()) == sorted(m.uci() for m in board.legal_moves)
  engine = PlayOnChessPosition("4k3/8/8/8/8/8/8/R3K3 w - - 149 80")
  assert not engine.over
  engine.play("a1a2")
  assert engine.over and list(engine.returns()) == [0, 0]  # seventy-five moves: a draw with no claim
  for cls in (ChessPosition, PlayOnChessPosition):  # ply 511 of a game, then pgx's 512-ply cap
    position = cls()
    position.states[-1] = position.state.replace(_x=position.state._x._replace(step_count=np.int32(511)))
    position.play("e2e4")
    assert position.over == (cls is ChessPosition)
  assert len(position.legal_moves()) == 20
  mate = PlayOnChessPosition("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
  mate.play("a1a8")
  assert mate.over and list(mate.returns()) == [1, -1]


@pytest.mark.parametrize("fen, moves", [
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", ["e1g1", "e1c1"]),  # castling both ways
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", ["e5d6"]),  # en passant
    ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", ["b7b8q", "b7b8n", "b7b8r", "b7b8b"]),  # promotions
    ("4k3/8/8/8/8/8/1p6/4K3 b - - 0 1", ["b2b1q", "b2b1n"]),  # black promotes (mirrored squares)
])
def test_chess_special_moves(fen, moves):
  board = chess.Board(fen)
  position = ChessPosition(fen)
  assert sorted(position.legal_moves()) == sorted(m.uci() for m in board.legal_moves)
  for move in moves:
    ChessPosition(fen).play(move)


def test_fen_reader_builds_pgxs_state_in_one_program():
  """pgx_private.from_fen gives pgx's own reader's state, bit for bit but for the history, and compiles once (pgx's
  compiles four programs at every call: over a second a `position fen` on this CPU). Its history holds the FEN's
  position alone: the network sees no earlier position, as at a new game's first move, where pgx's reader showed
  the initial position as the one before."""
  import jax
  from azjax.games import make_env
  env = make_env("chess")
  new_game = env.init(jax.random.PRNGKey(0))
  fens = ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
          "rnbqkbnr/pppp1ppp/8/8/3pP3/8/PPP2PPP/RNBQKBNR b KQkq e3 0 3",  # black to move, en passant
          "r3k2r/8/8/8/8/8/8/R3K2R b Kq - 7 40", "4k3/8/8/8/8/8/8/4K2R w K - 99 80",
          "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"]  # stalemate: no legal move
  for fen in fens:
    ours, theirs = pgx_private.from_fen(fen), pgx_private.symbol("from_fen")(fen)
    assert jax.tree.structure(ours) == jax.tree.structure(theirs)
    history = ("board_history", "hash_history")
    np.testing.assert_array_equal(ours._x.board_history[0], theirs._x.board_history[0])
    np.testing.assert_array_equal(ours._x.hash_history[0], theirs._x.hash_history[0])
    assert not np.asarray(ours._x.board_history[1:]).any() and not np.asarray(ours._x.hash_history[1:]).any()
    mine, pgxs = np.asarray(ours.observation), np.asarray(theirs.observation)  # [8, 8, 8 x 14 + 7]
    np.testing.assert_array_equal(mine[..., :14], pgxs[..., :14])  # the position itself
    np.testing.assert_array_equal(mine[..., 112:], pgxs[..., 112:])  # colour, move count, castling, no progress
    assert not mine[..., 14:26].any()  # no earlier position's pieces
    no_history = lambda state: dataclasses.replace(  # noqa: E731
        state, observation=0, _x=state._x._replace(**{h: 0 for h in history}))
    jax.tree.map(np.testing.assert_array_equal, no_history(ours), no_history(theirs))
  # The initial position by FEN is a new game, as the network sees it.
  start = pgx_private.from_fen(fens[0])
  np.testing.assert_array_equal(start.observation, new_game.observation)
  assert pgx_private._chess_state()._cache_size() == 1
  with pytest.raises(ValueError, match="side to move 'x'"):
    pgx_private.from_fen("4k3/8/8/8/8/8/8/4K3 x - - 0 1")


def test_chess_illegal_moves_raise_and_change_nothing():
  position = ChessPosition()
  for bad in ["e2e5", "e7e5", "zz", "e2e4q", "", "e1g1"]:
    with pytest.raises(IllegalMove):
      position.play(bad)
  assert position.moves == [] and len(position.states) == 1
  with pytest.raises(IllegalMove):
    ChessPosition("not a fen")


def test_shogi_round_trip_drops_and_promotions():
  rng = random.Random(1)
  position = ShogiPosition()
  assert "7g7f" in position.legal_moves() and "2g2f" in position.legal_moves()
  position.play("7g7f")
  position.play("3c3d")
  assert "8h2b+" in position.legal_moves() and "8h2b" in position.legal_moves()  # bishop takes, may promote
  position.play("8h2b+")
  position.play("3a2b")  # silver recaptures
  assert any(m.startswith("B*") for m in position.legal_moves())  # sente holds the captured bishop
  for _ in range(40):
    moves = position.legal_moves()
    if position.over:
      break
    for m in moves:
      assert position.move_of(position.action_of(m)) == m
    position.play(rng.choice(moves))


def test_shogi_rejects_slides_through_pieces_and_bad_text():
  position = ShogiPosition()
  for bad in ["9i9a", "8h2b", "P*5e", "5e", "7g7f7", "B*5e"]:
    with pytest.raises(IllegalMove):
      position.play(bad)
  assert position.moves == []
  start = ShogiPosition("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1")
  assert sorted(start.legal_moves()) == sorted(ShogiPosition().legal_moves())


def test_go_vertices_scoring_and_illegal_points():
  position = GoPosition("go9")
  assert position.action_of("A9") == 0 and position.action_of("J1") == 80 and position.action_of("pass") == 81
  position.play("E5")
  with pytest.raises(IllegalMove):
    position.play("E5")  # occupied
  for bad in ["I5", "Z1", "A10", "5E"]:
    with pytest.raises(IllegalMove):
      position.play(bad)
  assert position.moves == ["E5"]
  assert position.area_score(7.5) == 81 - 7.5  # one stone owns the empty board (Tromp-Taylor)
  position.play("D5")
  assert position.area_score(0.5) == -0.5
  assert "X" in position.showboard() and "O" in position.showboard()


# A real game (ownership run's step 1200 against GNU Go level 1) in which the search's favourite, F6, repeats an
# earlier board: pgx lists it as legal (it loses), a referee refuses it. The match died on it before push_best.
SUPERKO_GAME = ("A5 J5 E5 G6 F6 G7 G5 C5 F7 C7 C4 B4 B5 D4 D5 C3 C6 B8 C4 D8 G8 H8 H5 H6 D3 E4 F4 F8 E3 E7 B7 J3 H4 J4 H3 "
                "H2 C8 D7 G2 A7 B6 A8 J2 J1 C9 E6 B3 F5 F6 D9 F7 F5 H1 G1 F6 F2 G3 E2 C2 J2 F1 E1 F7 F5").split()


def test_the_best_move_a_referee_accepts_plays_when_the_search_prefers_a_superko_repetition():
  position = GoPosition("go9")
  for move in SUPERKO_GAME:
    position.play(move)
  f6, j6 = position.action_of("F6"), position.action_of("J6")
  assert position.legal(f6)  # pgx's mask allows it...
  with pytest.raises(IllegalMove, match="superko"):
    position.push(f6)  # ...the referee does not, and the position is unchanged
  assert len(position.moves) == len(SUPERKO_GAME)
  weights = np.zeros(82)
  weights[f6], weights[j6] = 0.6, 0.3
  assert position.push_best(weights) == j6 and position.moves[-1] == "J6"


def test_when_every_weighted_move_is_a_superko_repetition_go_passes():
  position = GoPosition("go9")
  for move in SUPERKO_GAME:
    position.play(move)
  weights = np.zeros(82)
  weights[position.action_of("F6")] = 1.0  # the only move the search weighed repeats a board
  assert position.push_best(weights) == 81 and position.moves[-1] == "pass"  # not A9, the lowest-numbered point


def test_pgx_private_uses_are_all_in_the_installed_pgx():
  """azjax/engines/pgx_private.py holds every use of pgx's internals; a pgx that moved one fails here, by name."""
  problems = pgx_private.missing()
  if problems:
    pytest.fail(f"pgx {pgx.__version__} lacks what azjax/engines/pgx_private.py uses (pyproject.toml pins the "
                f"pgx versions it was tested on):\n  " + "\n  ".join(problems), pytrace=False)


def test_pgx_private_names_what_is_missing(monkeypatch):
  monkeypatch.setitem(pgx_private.SYMBOLS, "gone", ("pgx._src.games.chess:NO_SUCH_TABLE", None))
  monkeypatch.setitem(pgx_private.SYMBOLS, "moved", ("pgx._src.no_such_module:FROM_PLANE", None))
  monkeypatch.setitem(pgx_private.SYMBOLS, "reshaped", ("pgx._src.games.chess:TO_PLANE", (64, 73)))
  monkeypatch.setitem(pgx_private.STATE_FIELDS, "chess", ("_x.no_such_field",))
  problems = "\n".join(pgx_private.missing())
  for name in ("pgx._src.games.chess:NO_SUCH_TABLE", "pgx._src.no_such_module:FROM_PLANE",
               "pgx._src.games.chess:TO_PLANE (reshaped): shape (64, 64)", "chess state._x.no_such_field"):
    assert name in problems


def test_only_pgx_private_reaches_into_pgx():
  engines = Path(__file__).parent.parent / "azjax" / "engines"
  for path in engines.glob("*.py"):
    if path.name != "pgx_private.py":
      for needle in ("pgx._src", "pgx.experimental", "._x", "_player_order", "pgx.go", "import pgx."):
        assert needle not in path.read_text(), f"{path.name} uses {needle}: pgx internals belong in pgx_private.py"


def test_engines_play_training_envs_except_go():
  """Only Go gets an env of its own (a longer length cap: tests/test_engines.py plays past pgx's)."""
  from azjax.games import make_env
  assert pgx_private.engine_env("chess") is make_env("chess") and pgx_private.engine_env("shogi") is make_env("shogi")
  assert pgx_private.engine_env("go9") is not make_env("go9") and pgx_private.engine_env("go9").id == "go_9x9"


def test_a_game_that_pgx_ends_at_its_length_cap_says_so():
  """pgx ends 9x9 Go after 162 plies as if by the rules (its board then scored unfinished); a referee's record says
  the game stopped at the cap. A game ended by two passes did not."""
  from azjax.engines.match import random_opening  # noqa: PLC0415  (stones only; superko repetitions drawn again)
  position = GoPosition("go9")
  for action in random_opening("go9", 200, seed=0):
    position.push(action)
  assert position.pgx_cap == 162 and len(position.moves) == 162 and position.at_cap
  passed = GoPosition("go9")
  for move in ("E5", "pass", "pass"):
    passed.play(move)
  assert passed.over and not passed.at_cap
  assert GoPosition("go9", env=pgx_private.engine_env("go9")).pgx_cap > 162
  assert not ChessPosition().at_cap and ChessPosition().pgx_cap == 512
