"""azjax.chess_moves: pgx's chess with a cheaper legal-move generator is the same game as pgx's.

Three checks, each able to fail on its own: the move counts of the standard perft positions against the
published figures (independent of pgx and of this project), every mask of random games against pgx's own
generator, and whole states (observations, rewards, terminals) step for step against `pgx.make("chess")`.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pgx
import pytest
from conftest import COMPUTE
from pgx._src.games import chess as pgx_chess

from azjax import chess_moves
from azjax.engines import pgx_private
from azjax.games import make_env

# The chess programming wiki's "Perft Results" (https://www.chessprogramming.org/Perft_Results): leaf counts of
# the legal-move tree, with promotions counted four ways. Each position is there for its traps: Kiwipete's
# castling through attacked squares and its pins; position 3's en passant that uncovers a check along the rank;
# position 4's promotions and castling out of a position full of checks; position 5's promotion with check.
PERFT = [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", (20, 400, 8902)),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", (48, 2039, 97862)),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", (14, 191, 2812, 43238)),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", (6, 264, 9467)),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", (44, 1486, 62379)),
    ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", (46, 2079, 89890)),
]


@jax.jit
def _masks(states):
  return jax.vmap(chess_moves.legal_action_mask)(states)


_step = jax.jit(jax.vmap(chess_moves._Game().step))


def _padded(states, n: int):
  """`states` (a batch of n) padded to the next power of two with copies of the first, so few shapes compile."""
  size = 1 << max(n - 1, 0).bit_length()
  return jax.tree.map(lambda a: jnp.concatenate([a, jnp.repeat(a[:1], size - n, 0)]), states)


def perft(fen: str, depth: int) -> list[int]:
  """The leaf counts at depths 1..depth from the position `fen`, by this module's generator."""
  states, n, counts = jax.tree.map(lambda a: a[None], pgx_private.from_fen(fen)._x), 1, []
  for d in range(depth):
    masks = np.asarray(_masks(_padded(states, n)))[:n]
    counts.append(int(masks.sum()))
    if d + 1 < depth:
      games, actions = np.nonzero(masks)
      n = len(actions)
      states = _padded(jax.tree.map(lambda a: a[games], states), n)
      states = jax.tree.map(lambda a: a[:n], _step(states, jnp.asarray(np.resize(actions, len(states.board)))))
  return counts


@pytest.mark.parametrize("fen,expected", PERFT, ids=["start", "kiwipete", "pos3", "pos4", "pos5", "pos6"])
def test_perft_counts_match_the_published_ones(fen, expected):
  assert perft(fen, len(expected)) == list(expected)


def _random_games(env, games: int, plies: int, seed: int):
  """The states of `games` random games of `plies` plies in `env`, every ply (a finished game stays finished)."""
  step = jax.jit(jax.vmap(env.step), compiler_options=COMPUTE)
  choose = jax.jit(jax.vmap(lambda k, s: jax.random.categorical(k, jnp.where(s.legal_action_mask, 0.0, -jnp.inf))))
  key = jax.random.PRNGKey(seed)
  state = jax.jit(jax.vmap(env.init))(jax.random.split(key, games))
  for _ in range(plies):
    key, draw = jax.random.split(key)
    state = step(state, choose(jax.random.split(draw, games), state))
    yield state


@pytest.mark.slow
def test_masks_match_pgx_on_random_games():
  """Every live position of 64 random games to 400 plies (pgx's own env and generator throughout): checks,
  pins, promotions, castling and en passant all occur."""
  pgx_masks = jax.jit(jax.vmap(pgx_chess._legal_action_mask), compiler_options=COMPUTE)
  ours = jax.jit(jax.vmap(chess_moves.legal_action_mask), compiler_options=COMPUTE)
  seen, checked = np.zeros(64 * 73, bool), 0
  for state in _random_games(pgx.make("chess"), 64, 400, seed=0):
    live = ~np.asarray(state.terminated)
    expected, got = np.asarray(pgx_masks(state._x))[live], np.asarray(ours(state._x))[live]
    np.testing.assert_array_equal(got, expected)
    seen |= expected.any(0)
    checked += live.sum()
  assert checked > 10_000
  planes = seen.reshape(64, 73).any(0)
  assert planes[:9].all()  # every underpromotion
  assert seen[2364] and seen[2367]  # both castlings


@pytest.mark.slow
def test_the_env_steps_through_the_same_states_as_pgx():
  """`make_env("chess")` is the env every search and self-play steps: state for state pgx's, observation,
  rewards and terminal flags included, along the same random games. One entry differs by design: the initial
  position's hash, pgx's fixed constant there, its computed hash here (the test below)."""
  env = make_env("chess")
  assert isinstance(env, chess_moves.Chess) and env.id == "chess"
  initial = pgx_chess._zobrist_hash(pgx_chess.GameState())
  games = zip(_random_games(pgx.make("chess"), 32, 300, seed=1), _random_games(env, 32, 300, seed=1))
  for ply, (expected, got) in enumerate(games):
    hashes = expected._x.hash_history
    hashes = jnp.where((hashes == pgx_chess.INIT_ZOBRIST_HASH).all(-1, keepdims=True), initial, hashes)
    expected = expected.replace(_x=expected._x._replace(hash_history=hashes))
    for a, b in zip(jax.tree.leaves(expected), jax.tree.leaves(got)):
      np.testing.assert_array_equal(np.asarray(b), np.asarray(a), err_msg=f"ply {ply}")
  assert np.asarray(expected.terminated).any()


def test_a_return_to_the_initial_position_counts_toward_threefold_repetition():
  # 1. Nf3 Nf6 2. Ng1 Ng8 brings back the initial position, its second time; twice over, its third: a draw by
  # threefold repetition (FIDE 9.2), as any other position's third time is. pgx ends that game a ply later, at the
  # third Nf3: it hashes the initial position with a fixed constant, unlike the same position reached later.
  from azjax.engines.positions import ChessPosition
  from azjax.rules import chess_repetitions
  position = ChessPosition()
  for ply, move in enumerate(["g1f3", "g8f6", "f3g1", "f6g8"] * 2, start=1):
    assert not position.over
    position.play(move)
    assert int(chess_repetitions(jax.tree.map(lambda a: a[None], position.state))[0]) == ply // 4
  assert position.over and not position.returns().any()
