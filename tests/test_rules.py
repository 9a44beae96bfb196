import jax
import jax.numpy as jnp
import numpy as np

from azjax import rules
from azjax.games import make_env

PASS = 81


def _play(moves):
  env = make_env("go9")
  state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 1))
  for a in moves:
    state = jax.vmap(env.step)(state, jnp.array([a]))
  return state


def test_eyes_rule_keeps_pass_out_until_the_opponent_passes():
  legal = rules.make_legal_moves("go9", "eyes")
  state = _play([])
  assert bool(state.legal_action_mask[0, PASS])  # pgx: pass always legal
  assert not bool(legal(state)[0, PASS])
  np.testing.assert_array_equal(legal(state)[0, :PASS], state.legal_action_mask[0, :PASS])  # board moves untouched
  assert bool(legal(_play([40, PASS]))[0, PASS])  # black may answer white's pass with a pass
  assert bool(rules.make_legal_moves("go9", "pgx")(state)[0, PASS])
  chess = make_env("chess").init(jax.random.PRNGKey(0))
  assert rules.make_legal_moves("chess", "eyes")(chess) is chess.legal_action_mask  # other games: pgx's rules


def test_own_eyes_are_empty_points_surrounded_by_the_movers_stones():
  board = jnp.zeros(81, jnp.int32).at[jnp.array([1, 9])].set(1)  # black stones around the corner point 0
  board = board.at[jnp.array([79, 71])].set(-1)  # white stones around the corner point 80
  black, white = rules.own_eyes(board, jnp.int32(0), 9), rules.own_eyes(board, jnp.int32(1), 9)
  assert list(np.flatnonzero(black)) == [0] and list(np.flatnonzero(white)) == [80]


def test_pass_allowed_once_only_eye_filling_moves_remain():
  state = _play([])
  x = state._x
  # Black everywhere but two one-point eyes (0 and 80): the only legal board moves fill them.
  board = jnp.ones((1, 81), jnp.int32).at[0, jnp.array([0, 80])].set(0)
  mask = jnp.zeros((1, 82), bool).at[0, jnp.array([0, 80, PASS])].set(True)
  full = state.replace(legal_action_mask=mask, _x=x._replace(board=board))
  assert bool(rules.make_legal_moves("go9", "eyes")(full)[0, PASS])
