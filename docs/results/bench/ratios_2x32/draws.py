"""The random draws of one chess ply, 64 games: mctx's Dirichlet (muzero_policy draws it even weighted 0), ours over
the K = 218 children (jax's log-gamma and search.log_gamma), and the move's categorical over all 4,672 actions against over the children.

  python docs/results/bench/ratios_2x32/draws.py
"""
import statistics, time
import jax, jax.numpy as jnp
from azjax import search as S

def timed(name, f, *a):
  f = jax.jit(f); jax.block_until_ready(f(*a)); ts = []
  for _ in range(20):
    s = time.perf_counter(); jax.block_until_ready(f(*a)); ts.append(time.perf_counter() - s)
  print(f"{name:48s} {statistics.median(ts) * 1e3:.3f} ms")

B, K, A = 64, 218, 4672
keys = jax.random.split(jax.random.PRNGKey(0), B)
legal = jax.random.uniform(jax.random.PRNGKey(1), (B, A)) < 35 / A
w = jnp.where(legal, jax.random.uniform(jax.random.PRNGKey(2), (B, A)), 0.)
w = w / w.sum(-1, keepdims=True)
timed("mctx's Dirichlet [64][1, 218]", jax.vmap(lambda k: jax.random.dirichlet(k, jnp.full([K], 0.3), shape=(1,))), keys)
timed("jax.random.loggamma [64][218] (before)", jax.vmap(lambda k: jax.random.loggamma(k, 0.3, (K,))), keys)
timed("search.log_gamma [64][218]", jax.vmap(lambda k: S.log_gamma(k, 0.3, (K,))), keys)
timed("choose_move over A [64, 4672]", lambda k, w: jax.vmap(lambda k, x: S.choose_move(k, x, 1.0))(k, w), keys, w)
timed("choose_move over K [64, 218]", lambda k, w: jax.vmap(lambda k, x: S.choose_move(k, x, 1.0))(k, w[:, :K]), keys, w)
timed("replay's top_k [64, 4672] k=218", lambda w: jax.vmap(lambda x: jax.lax.top_k(x, K))(w), w)
