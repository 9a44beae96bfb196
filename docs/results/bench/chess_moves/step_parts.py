"""pgx's chess step against azjax.chess_moves', part by part, on positions of random play.

  python docs/results/bench/chess_moves/step_parts.py [--games 64] [--plies 30] [--calls 136]

pgx's part and azjax's are timed in turns, 9 rounds of 30 calls each (milliseconds per call over the
batch, one jitted vmap of the part); the table gives the medians and the median of the rounds' ratios,
as this machine's speed drifts by half from minute to minute. The loop figures time
`calls` env steps in one fori_loop as `azjax.bench.env_floor` does, with the moves chosen by
threefry draws (`arena.random_moves`, the floor as it was) and by `bench.hashed_moves` (as it is).
"""

import argparse
import time

import jax
import numpy as np
import jax.numpy as jnp
import pgx
from pgx._src.games import chess as pgx_chess

from azjax import arena, bench, chess_moves, selfplay
from azjax.games import batched_init, batched_step


def best_ms(fn, *args, calls=30, rounds=7):
  jax.block_until_ready(fn(*args))
  best = float("inf")
  for _ in range(rounds):
    start = time.perf_counter()
    for _ in range(calls):
      out = fn(*args)
    jax.block_until_ready(out)
    best = min(best, (time.perf_counter() - start) / calls * 1e3)
  return best


def paired(fa, fb, *args, calls=30, rounds=9):
  """(median ms of fa, of fb, median ratio fa / fb), the two timed in turns."""
  a, b = [], []
  for _ in range(rounds):
    a.append(best_ms(fa, *args, calls=calls, rounds=1))
    b.append(best_ms(fb, *args, calls=calls, rounds=1))
  return np.median(a), np.median(b), np.median(np.array(a) / np.array(b))


def loop_fn(env, games, calls, choose):
  step, start = batched_step(env), batched_init(env)(jax.random.split(jax.random.PRNGKey(0), games))

  def loop(state):
    def body(i, state):
      moved = step(state, choose(i, state))
      return selfplay.where_games(moved.terminated | moved.truncated, start, moved)
    return jax.lax.fori_loop(0, calls, body, state)

  return jax.jit(loop), start


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--games", type=int, default=64)
  p.add_argument("--plies", type=int, default=30)
  p.add_argument("--calls", type=int, default=136)  # 8 plies x 17 calls: the bench command
  args = p.parse_args()
  envs = {"pgx": pgx.make("chess"), "azjax": chess_moves.Chess()}
  state = jax.vmap(envs["pgx"].init)(jax.random.split(jax.random.PRNGKey(0), args.games))
  key, step = jax.random.PRNGKey(1), jax.jit(jax.vmap(envs["pgx"].step))
  for _ in range(args.plies):
    key, draw = jax.random.split(key)
    state = step(state, arena.random_moves(draw, state))
  action = arena.random_moves(key, state)
  parts = {
      "legal-action mask": (jax.vmap(pgx_chess._legal_action_mask), jax.vmap(chess_moves.legal_action_mask), state._x),
      "observation": (jax.vmap(envs["pgx"].observe), jax.vmap(envs["azjax"].observe), state),
  }
  print(f"chess, {args.games} games at ply {args.plies}, {jax.devices()[0].device_kind}; ms per call, medians of 9 "
        "rounds timed in turns")
  print("| part | pgx | azjax.chess_moves | pgx / azjax (median of the rounds) |\n|---|---:|---:|---:|")
  for name, (ref, ours, arg) in parts.items():
    print("| {} | {:.3f} | {:.3f} | {:.2f}x |".format(name, *paired(jax.jit(ref), jax.jit(ours), arg)))
  steps = [jax.jit(jax.vmap(envs[k].step)) for k in ("pgx", "azjax")]
  print("| env.step | {:.3f} | {:.3f} | {:.2f}x |".format(*paired(lambda s, a: steps[0](s, a), lambda s, a: steps[1](s, a),
                                                             state, action)))
  print(f"\n{args.calls} env steps over {args.games} games in one loop (bench.env_floor), ms, medians of 5 rounds")
  print("| moves chosen by | pgx | azjax.chess_moves | pgx / azjax |\n|---|---:|---:|---:|")
  choosers = {"threefry draws (arena.random_moves)": lambda i, s: arena.random_moves(
      jax.random.fold_in(jax.random.PRNGKey(1), i), s),
              "a hash (bench.hashed_moves)": lambda i, s: bench.hashed_moves(i, s.legal_action_mask)}
  for name, choose in choosers.items():
    (fa, start), (fb, _) = (loop_fn(envs[k], args.games, args.calls, choose) for k in ("pgx", "azjax"))
    print("| {} | {:.1f} | {:.1f} | {:.2f}x |".format(name, *paired(fa, fb, start, calls=1, rounds=5)))
  moves_only = jax.jit(lambda s: jax.lax.fori_loop(
      0, args.calls, lambda i, s: s.replace(_step_count=s._step_count + bench.hashed_moves(i, s.legal_action_mask)), s))
  draws_only = jax.jit(lambda s: jax.lax.fori_loop(
      0, args.calls, lambda i, s: s.replace(_step_count=s._step_count + arena.random_moves(
          jax.random.fold_in(jax.random.PRNGKey(1), i), s)), s))
  print(f"\nthe choice of moves alone, {args.calls} calls: threefry draws {best_ms(draws_only, state, calls=1, rounds=5) / 1e3:.3f}"
        f" s, the hash {best_ms(moves_only, state, calls=1, rounds=5) / 1e3:.3f} s")


if __name__ == "__main__":
  main()
