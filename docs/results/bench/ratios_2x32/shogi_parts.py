"""pgx's shogi against `azjax.shogi_moves`, part by part: the legal-action mask, the observation and the whole
`env.step`, each jitted alone over 64 positions 40 random plies into their games, median of 20 calls, and the same
mask inside a vmapped `lax.cond` (as pgx's `Env.step` calls it).

  python shogi_parts.py                                                            # shogi_parts.txt
"""
import jax
import jax.numpy as jnp
import pgx
from pgx._src.games import shogi as pgx_shogi

from azjax import shogi_moves
from azjax.games import make_env
from conv_paths import median_time  # this folder's timer: compiled once, median of n calls

GAMES = 64


def random_positions(plies: int = 40):
  """GAMES pgx shogi states `plies` uniformly random plies into their games, and a random legal action for each."""
  theirs = pgx.make("shogi")
  key = jax.random.PRNGKey(0)
  state = jax.jit(jax.vmap(theirs.init))(jax.random.split(key, GAMES))
  step = jax.jit(jax.vmap(theirs.step))
  choose = jax.jit(jax.vmap(lambda k, s: jax.random.categorical(k, jnp.where(s.legal_action_mask, 0.0, -jnp.inf))))
  for _ in range(plies):
    key, k = jax.random.split(key)
    state = step(state, choose(jax.random.split(k, GAMES), state))
  return state, choose(jax.random.split(key, GAMES), state)


def main():
  ours, theirs = make_env("shogi"), pgx.make("shogi")
  step = jax.jit(jax.vmap(theirs.step))
  state, actions = random_positions()
  x, flip = state._x, jnp.ones(GAMES, bool)
  in_cond = lambda mask: jax.jit(jax.vmap(lambda s: jax.lax.cond(s.terminated, lambda: jnp.zeros(2187, bool),
                                                                 lambda: mask(s._x))))
  batched = lambda fn: jax.jit(jax.vmap(fn))
  rows = [
      ("legal-action mask", batched(pgx_shogi._legal_action_mask), batched(shogi_moves.legal_action_mask), (x,)),
      ("the mask inside a vmapped cond", in_cond(pgx_shogi._legal_action_mask), in_cond(shogi_moves.legal_action_mask),
       (state,)),
      ("observation", jax.jit(jax.vmap(pgx_shogi._observe)), jax.jit(jax.vmap(shogi_moves.observe)), (x, flip)),
      ("env.step", step, jax.jit(jax.vmap(ours.step)), (state, actions)),
  ]
  print(f"{GAMES} positions, median of 20 calls, ms: pgx / shogi_moves")
  for name, a, b, args in rows:
    ta, tb = (1e3 * median_time(f, *args, n=20) for f in (a, b))
    print(f"  {name:32s} {ta:7.2f} / {tb:6.2f}  ({ta / tb:.1f}x)")


if __name__ == "__main__":
  main()
