"""Where chess self-play's "rest" goes: one ply's search of 64 positions 30 plies in, parts swapped out.

  python docs/results/bench/chess_rest/parts.py [--sims 16] [--repeats 9]

Issue 17's 2x32 network, 16 PUCT simulations, compact tree. Each line is the median of `repeats` calls of one
jitted program: the real search; a zero evaluator (no network); a zero evaluator and a game step that returns its
state (the adapter and mctx); mctx alone with a constant recurrent function (its own bookkeeping); and the floors,
the same number of network calls and of game steps each alone in one loop.
"""
import argparse, statistics, time
import jax, jax.numpy as jnp, mctx
from azjax import backup, bench, rules, search as search_lib, train_step as train_lib
from azjax.config import apply_overrides
from azjax.games import batched_init, batched_step
from azjax.presets import preset

p = argparse.ArgumentParser()
p.add_argument("--sims", type=int, default=16)
p.add_argument("--repeats", type=int, default=9)
p.add_argument("--games", type=int, default=64)
args = p.parse_args()
sims, B = args.sims, args.games
c = apply_overrides(preset("chess", "small"), ["network.blocks=2", "network.channels=32", "network.value_hidden=64",
    f"search.num_simulations={sims}", f"selfplay.batch_size={B}", "selfplay.chunk_plies=8"])
program = train_lib.build(c)
env = program.env
A = env.num_actions
step = batched_step(env)
state = batched_init(env)(jax.random.split(jax.random.PRNGKey(3), B))
for t in range(30):
  state = jax.jit(lambda s, t=t: step(s, bench.hashed_moves(t, s.legal_action_mask)))(state)
variables = program.network.init(jax.random.PRNGKey(1), state.observation[:1])
keys = jax.random.split(jax.random.PRNGKey(5), B)
real_eval = search_lib.network_evaluator(program.network)
legal = rules.make_legal_moves("chess")
K = search_lib.tree_width(c.search, "chess", A)

def zero_eval(variables, key, s):
  n = s.legal_action_mask.shape[0]
  return jnp.zeros((n, A)), jnp.zeros(n), search_lib.Extras()

class SameState:  # no game: the state back, its observation as the env would leave it
  num_actions = A
  def step(self, s, a):
    return s.replace(observation=jnp.zeros(s.observation.shape[:0] + env.observation_shape, s.observation.dtype))

def timed(name, fn, *a):
  f = jax.jit(fn, compiler_options=search_lib.compiler_options())
  jax.block_until_ready(f(*a))
  ts = []
  for _ in range(args.repeats):
    t = time.perf_counter(); jax.block_until_ready(f(*a)); ts.append(time.perf_counter() - t)
  m = statistics.median(ts)
  print(f"{name:62s} {m * 1e3:8.2f} ms", flush=True)
  return m

def searched(envx, ev):
  s = search_lib.make_search_with(envx, ev, c.search, legal, sims, "chess")
  return lambda v, k, st: s(v, k, st).weights

def bare_mctx(v, k, st):  # mctx's PUCT over K children with nothing to step or evaluate
  def one(key, logits):
    root = mctx.RootFnOutput(prior_logits=logits[None], value=jnp.zeros(1), embedding=jnp.zeros(1))
    def rec(params, key, action, emb):
      return mctx.RecurrentFnOutput(reward=jnp.zeros(1), discount=-jnp.ones(1), prior_logits=logits[None],
                                    value=jnp.zeros(1)), emb
    with backup.installed():
      return mctx.muzero_policy(None, key, root, rec, sims, dirichlet_fraction=0.0).action_weights[0]
  logits = jnp.where(jnp.arange(K) < 35, 0.0, -1e9)
  return jax.vmap(one, in_axes=(0, None))(k, logits)

def net_calls(v, st):
  def body(_, acc):
    l, val, _ = real_eval(v, None, st.replace(observation=st.observation + 1e-30 * acc))
    return acc + val.mean() + l.mean()
  return jax.lax.fori_loop(0, sims + 1, body, jnp.float32(0))

def game_steps(st):
  def body(i, s):
    return step(s, bench.hashed_moves(i, s.legal_action_mask))
  return jax.lax.fori_loop(0, sims, body, st).rewards.sum()

def adapter(st):  # what recurrent_fn does around the step, `sims` times: unlean, children, mask, gather, lean
  def body(i, acc):
    s = search_lib.unlean(search_lib.lean(st.replace(rewards=st.rewards + acc)), A)
    ch = search_lib.children(legal(s), K)
    prior = search_lib.gather(rules.masked_logits(jnp.zeros((B, A)) + acc, legal(s)), ch)
    return acc + prior.mean() * 1e-30 + ch.sum() * 1e-30
  return jax.lax.fori_loop(0, sims, body, jnp.float32(0))

print(f"chess, {B} games 30 plies in, {sims} PUCT simulations, K = {K}, jax {jax.__version__}")
r = {}
r["full"] = timed("search: network + game + tree", searched(env, real_eval), variables, keys, state)
r["noeval"] = timed("search: game + tree (zero evaluator)", searched(env, zero_eval), variables, keys, state)
r["tree"] = timed("search: tree (zero evaluator, no game step)", searched(SameState(), zero_eval), variables, keys, state)
r["bare"] = timed("mctx alone (constant recurrent function, K children)", bare_mctx, variables, keys, state)
r["adapter"] = timed(f"the adapter's lean/unlean/children/mask, {sims} times", adapter, state)
r["net"] = timed(f"floor: network, {sims + 1} calls", net_calls, variables, state)
r["game"] = timed(f"floor: game, {sims} env steps", game_steps, state)
rest = r["full"] - r["net"] - r["game"]
print(f"rest = search - network - game = {rest * 1e3:.2f} ms; search / (network + game) = "
      f"{r['full'] / (r['net'] + r['game']):.2f}x")
print(f"  in the zero-evaluator search, game + tree - tree = {(r['noeval'] - r['tree']) * 1e3:.2f} ms "
      f"(the game floor: {r['game'] * 1e3:.2f})")
print(f"  tree - mctx alone = {(r['tree'] - r['bare']) * 1e3:.2f} ms (the adapter alone: {r['adapter'] * 1e3:.2f})")
