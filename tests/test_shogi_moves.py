"""azjax.shogi_moves: pgx's shogi with a cheaper legal-move generator is the same game as pgx's.

Whole states (legal-action masks, observations, rewards, terminals) step for step against `pgx.make("shogi")` along
random games, with counts that show checks, checkmates and the pawn-drop-mate rule occurred.
"""

import jax
import numpy as np
import pgx
import pytest
from pgx._src.games import shogi as pgx_shogi

from azjax import shogi_moves
from azjax.games import make_env
from test_chess_moves import _random_games


def _situation(x):
  """Whether the mover is in check, and whether pgx's pawn-drop-mate rule fires in the position."""
  checked = pgx_shogi._is_checked(pgx_shogi._set_cache(x))
  return checked, pgx_shogi._is_drop_pawn_mate(x)[0]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*player_id.*:DeprecationWarning")  # pgx's `observe(state, player_id)`, still served
def test_the_env_steps_through_the_same_states_as_pgx():
  """`make_env("shogi")` is the env every search and self-play steps: along 48 random games to 250 plies, state
  for state pgx's, the legal-action mask (pgx's `_legal_action_mask`, which pgx's own step computes), observation,
  rewards and terminal flags included, and the observation from the other player's side; and the games hold
  checks, checkmates and pawn-drop-mate squares."""
  env = make_env("shogi")
  assert isinstance(env, shogi_moves.Shogi) and env.id == "shogi"
  situation = jax.jit(jax.vmap(_situation))
  reference = pgx.make("shogi")
  # A state's own observation is its mover's; the other player's view takes the other branch of `observe`.
  other_view = [jax.jit(jax.vmap(lambda s, e=e: e.observe(s, 1 - s.current_player))) for e in (reference, env)]
  positions = checks = drop_mates = 0
  games = zip(_random_games(reference, 48, 250, seed=0), _random_games(env, 48, 250, seed=0))
  for ply, (expected, got) in enumerate(games):
    for a, b in zip(jax.tree.leaves(expected), jax.tree.leaves(got)):
      np.testing.assert_array_equal(np.asarray(b), np.asarray(a), err_msg=f"ply {ply}")
    if ply % 10 == 0:  # pgx's own observation is slow; every tenth ply still sees ~1,000 positions
      np.testing.assert_array_equal(np.asarray(other_view[1](got)), np.asarray(other_view[0](expected)),
                                    err_msg=f"the other player's view, ply {ply}")
    live = ~np.asarray(expected.terminated)
    checked, drop_mate = map(np.asarray, situation(expected._x))
    positions += live.sum()
    checks += (checked & live).sum()
    drop_mates += (drop_mate & live).sum()
  assert positions > 10_000 and checks > 200 and drop_mates > 20, (positions, checks, drop_mates)
  mated = np.asarray(expected.terminated) & (np.asarray(expected._x.step_count) < 250)
  assert mated.any()  # games that ended with no legal move: checkmates
