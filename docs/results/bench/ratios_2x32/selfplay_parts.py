"""Chess self-play at issue 17's 2x32 config: the half, the half with a search that costs nothing (the legal moves
uniformly), and eight searches alone on the start position and on positions 16 plies in, timed in rounds.

  python docs/results/bench/ratios_2x32/selfplay_parts.py
"""
import dataclasses, statistics, time
import jax, jax.numpy as jnp
from azjax import bench, selfplay, search as S, train_step as T
from azjax.config import apply_overrides
from azjax.presets import preset
c = apply_overrides(preset("chess", "small"), ["network.blocks=2", "network.channels=32", "network.value_hidden=64",
    "search.num_simulations=16", "selfplay.batch_size=64", "selfplay.chunk_plies=8", "train.batch_size=256",
    "train.updates_per_step=1", "replay.window=8192"])
program = T.build(c); mesh = T.make_mesh(); A = program.num_actions
def stub_search(variables, keys, states, noise=True):
  legal = states.legal_action_mask; B = legal.shape[0]
  uniform = legal / legal.sum(-1, keepdims=True)
  return S.SearchOutput(weights=uniform, move_weights=uniform, move_rank=uniform, value=jnp.zeros(B),
      prior_value=jnp.zeros(B),
      best_value=jnp.zeros(B), prior_logits=jnp.zeros((B, A)), legal=legal, tree=None, actions=S.children(legal, 218))
stepper = T.make_train_step(program, mesh, phase="selfplay")
stubbed = T.make_train_step(dataclasses.replace(program, search=stub_search), mesh, phase="selfplay")
state = T.init_state(program, mesh)
variables = (state.params, state.bn_state)
env_states = state.actors.env
keys = jax.random.split(jax.random.PRNGKey(5), 64)
search = jax.jit(lambda v, k, s: jax.lax.fori_loop(0, 8, lambda i, acc: acc + program.search(v, jax.vmap(jax.random.fold_in, (0, None))(k, i), s.replace(rewards=s.rewards + acc * 1e-30)).value.sum(), 0.0), compiler_options=S.compiler_options())
clocks = {"selfplay half": bench._clock(lambda s: stepper(s)[0], T.init_state(program, mesh)),
          "stub-search half": bench._clock(lambda s: stubbed(s)[0], T.init_state(program, mesh)),
          "8 searches alone (start position)": bench._clock(lambda a: search(variables, keys, env_states) + a, 0.0)}
times = bench._rounds(clocks, 5)
for k, v in times.items(): print(f"{k:40s} {statistics.median(v):.3f} s  {[round(x,3) for x in v]}")
s1 = stepper(T.init_state(program, mesh))[0]
s1 = stepper(s1)[0]
later = s1.actors.env
print("legal moves at ply 16:", float(later.legal_action_mask.sum(-1).mean()))
clocks = {"selfplay half": bench._clock(lambda s: stepper(s)[0], T.init_state(program, mesh)),
          "8 searches alone (start)": bench._clock(lambda a: search(variables, keys, env_states) + a, 0.0),
          "8 searches alone (ply 16)": bench._clock(lambda a: search(variables, keys, later) + a, 0.0)}
times = bench._rounds(clocks, 5)
for k, v in times.items(): print(f"{k:40s} {statistics.median(v):.3f} s  {[round(x,3) for x in v]}")
