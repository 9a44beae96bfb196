"""Where go9 self-play's "rest" goes: one ply's search of 64 positions 30 random plies in, with parts swapped out.

  python docs/results/bench/step/rest_split.py go9     # issue 17's 2x32 network, 16 PUCT simulations

Each line is the median of 7 calls of one jitted search: the real one; the pgx pass rule in place of the eyes
rule; a zero evaluator (no network); a zero evaluator and a game step that returns its state (the tree alone).
"""
import sys, time, statistics
import jax, jax.numpy as jnp
from azjax import arena, rules, search as search_lib, train_step as train_lib
from azjax.presets import preset
from azjax.config import apply_overrides
game = sys.argv[1] if len(sys.argv) > 1 else "go9"
sims = 16
c = apply_overrides(preset(game, "small"), ["network.blocks=2", "network.channels=32", "network.value_hidden=64",
    f"search.num_simulations={sims}", "selfplay.batch_size=64", "selfplay.chunk_plies=8"])
program = train_lib.build(c)
env = program.env
state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(3), 64))
stepj = jax.jit(jax.vmap(env.step))
for t in range(30):
    moved = stepj(state, arena.random_moves(jax.random.fold_in(jax.random.PRNGKey(4), t), state))
    state = jax.tree.map(lambda a, b: jnp.where(moved.terminated.reshape((-1,) + (1,)*(a.ndim-1)), b, a), moved, state)
params, bn = program.network.init(jax.random.PRNGKey(1), state.observation[:1])
variables = (params, bn)
keys = jax.random.split(jax.random.PRNGKey(5), 64)
real_eval = search_lib.network_evaluator(program.network)
A = env.num_actions
def zero_eval(variables, key, s):
    return jnp.zeros((s.legal_action_mask.shape[0], A)), jnp.zeros(s.legal_action_mask.shape[0]), search_lib.Extras()
class FakeEnv:
    num_actions = A
    def step(self, s, a):  # no game: the same state back
        return s
legal_eyes = rules.make_legal_moves(game, c.search.go_pass)
legal_pgx = rules.make_legal_moves(game, "pgx")
def timed(name, fn, *args, repeats=7):
    f = jax.jit(fn)
    jax.block_until_ready(f(*args))
    ts = []
    for _ in range(repeats):
        t = time.perf_counter(); jax.block_until_ready(f(*args)); ts.append(time.perf_counter() - t)
    m = statistics.median(ts)
    print(f"{name:55s} {m*1e3:8.2f} ms per ply", flush=True)
    return m
def mk(envx, ev, legal):
    return search_lib.make_search_with(envx, ev, c.search, legal, sims, game)
res = {}
res["full"] = timed("search: network + game + tree (eyes)", lambda v, k, s: mk(env, real_eval, legal_eyes)(v, k, s).weights, variables, keys, state)
res["pgxpass"] = timed("search: network + game + tree (pgx pass)", lambda v, k, s: mk(env, real_eval, legal_pgx)(v, k, s).weights, variables, keys, state)
res["noeval"] = timed("search: game + tree (zero evaluator, eyes)", lambda v, k, s: mk(env, zero_eval, legal_eyes)(v, k, s).weights, variables, keys, state)
res["tree"] = timed("search: tree only (zero evaluator, no game step, eyes)", lambda v, k, s: mk(FakeEnv(), zero_eval, legal_eyes)(v, k, s).weights, variables, keys, state)
res["tree_pgx"] = timed("search: tree only (pgx pass)", lambda v, k, s: mk(FakeEnv(), zero_eval, legal_pgx)(v, k, s).weights, variables, keys, state)
# floors for one ply: (sims+1) network calls and (sims) game steps
def net_calls(v, s):
    def body(_, acc):
        l, val, _ = real_eval(v, None, s.replace(observation=s.observation + (acc > 1e30)))
        return acc + val.mean() + l.mean()
    return jax.lax.fori_loop(0, sims + 1, body, jnp.float32(0))
res["net"] = timed("floor: network, sims+1 calls", net_calls, variables, state)
game = res["noeval"] - res["tree"]
print(f"game steps (game + tree, less tree)                      {game*1e3:8.2f} ms")
print(f"search / (network + game) = {res['full'] / (res['net'] + game):.2f}x; tree's share of the search {res['tree'] / res['full']:.1%}")
