"""The compact tree's children of 64 chess masks (30 plies in), per call in a loop of 16 calls on rolled masks."""
import statistics, time
import jax, jax.numpy as jnp
from azjax import search as search_lib, chess_moves, bench
from azjax.games import batched_init, batched_step
env = chess_moves.Chess(); B=64; K=218
state = batched_init(env)(jax.random.split(jax.random.PRNGKey(3), B))
step = jax.jit(batched_step(env))
for t in range(30): state = step(state, bench.hashed_moves(t, state.legal_action_mask))
legal = state.legal_action_mask
def timed(name, fn, *a):
  f = jax.jit(fn); jax.block_until_ready(f(*a)); ts=[]
  for _ in range(9):
    t=time.perf_counter(); jax.block_until_ready(f(*a)); ts.append(time.perf_counter()-t)
  print(f"{name:50s} {statistics.median(ts)*1e3/16:8.3f} ms per call", flush=True)
def loop(fn):
  def run(legal):
    def body(i, acc):
      l = jnp.roll(legal, i, axis=1)  # a different mask each time: nothing to hoist
      return acc + fn(l).sum()
    return jax.lax.fori_loop(0, 16, body, jnp.int32(0))
  return run
def searchsorted_by(method):  # the k-th move: the first action whose running count of moves reaches k
  def children(legal):
    def one(l):
      c = jnp.cumsum(l, dtype=jnp.int32)
      idx = jnp.searchsorted(c, jnp.arange(1, K + 1, dtype=jnp.int32), side="left", method=method)
      return jnp.where(idx < l.shape[0], idx, jnp.argmin(l)).astype(jnp.int32)
    return jax.vmap(one)(legal)
  return children
searchsorted_children = searchsorted_by("scan")
def topk(legal):
  A = legal.shape[1]
  v, i = jax.lax.top_k(jnp.where(legal, -jnp.arange(A), -A - jnp.arange(A)), K)
  fill = jnp.argmin(legal, axis=1)[:, None]
  return jnp.where(v > -A, i, fill).astype(jnp.int32)
timed("roll only", loop(lambda l: l.astype(jnp.int32)), legal)
timed("jnp.nonzero (before)", loop(lambda l: jax.vmap(lambda m: jnp.nonzero(m, size=K, fill_value=jnp.argmin(m))[0])(l)), legal)
timed("search.children (packed words)", loop(lambda l: search_lib.children(l, K)), legal)
timed("searchsorted scan", loop(searchsorted_children), legal)
timed("searchsorted sort", loop(searchsorted_by("sort")), legal)
timed("top_k", loop(topk), legal)
a = jax.jit(lambda l: search_lib.children(l, K))(legal); b = jax.jit(searchsorted_children)(legal); c = jax.jit(topk)(legal)
print((a == b).all(), (a == c).all())
timed("cumsum int32", loop(lambda l: jnp.cumsum(l, axis=1, dtype=jnp.int32)[:, -1]), legal)
timed("cumsum int32 full", loop(lambda l: jnp.cumsum(l, axis=1, dtype=jnp.int32)), legal)
def blocked(l):  # cumsum via [64 squares, 73] two-level
  x = l.reshape(l.shape[0], 64, 73).astype(jnp.int32)
  inner = jnp.cumsum(x, axis=2)
  outer = jnp.cumsum(inner[:, :, -1], axis=1) - inner[:, :, -1]
  return (inner + outer[:, :, None]).reshape(l.shape[0], -1)
timed("cumsum blocked", loop(blocked), legal)
def matmul_cumsum(l):
  x = l.reshape(l.shape[0], 64, 73).astype(jnp.float32)
  tri = jnp.triu(jnp.ones((73, 73), jnp.float32))
  inner = x @ tri
  tot = inner[:, :, -1]
  outer = tot @ (jnp.triu(jnp.ones((64, 64), jnp.float32), 1))
  return (inner + outer[:, :, None]).reshape(l.shape[0], -1).astype(jnp.int32)
timed("cumsum by matmul", loop(matmul_cumsum), legal)
print((jax.jit(matmul_cumsum)(legal) == jnp.cumsum(legal, axis=1)).all())
def ss_on(cum):
  def one(c, l):
    idx = jnp.searchsorted(c, jnp.arange(1, K + 1, dtype=jnp.int32), side="left", method="scan")
    return jnp.where(idx < l.shape[0], idx, jnp.argmin(l)).astype(jnp.int32)
  return lambda legal: jax.vmap(one)(cum(legal), legal)
timed("searchsorted scan on matmul cumsum", loop(ss_on(matmul_cumsum)), legal)
timed("searchsorted compare_all on matmul cumsum", loop(lambda l: jax.vmap(lambda c: jnp.searchsorted(c, jnp.arange(1, K+1, dtype=jnp.int32), method='compare_all'))(matmul_cumsum(l))), legal)
