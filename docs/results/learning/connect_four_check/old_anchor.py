"""The 2026-11-22 pure-MCTS anchor (arena.mcts_policy at 21e0de8: mctx.muzero_policy with mctx's defaults), rewritten
here to play today's checkpoints: python old_anchor.py RUN STEP | random."""
import functools
import sys
import jax, jax.numpy as jnp, mctx
from azjax import arena, load_agent
from azjax.games import make_env

def old_mcts_policy(game, num_simulations):
  env = make_env(game)
  rollout = functools.partial(arena._rollout_value, env)  # random play to the end: unchanged since then
  def evaluate(key, state):
    value = jax.vmap(rollout)(jax.random.split(key, state.current_player.shape[0]), state)
    return jnp.where(state.legal_action_mask, 0.0, jnp.finfo(jnp.float32).min), value
  def recurrent_fn(_, key, action, state):
    mover = state.current_player
    state = jax.vmap(env.step)(state, action)
    logits, value = evaluate(key, state)
    reward = state.rewards[jnp.arange(action.shape[0]), mover]
    done = state.terminated | state.truncated
    return mctx.RecurrentFnOutput(reward=reward, discount=jnp.where(done, 0.0, -1.0), prior_logits=logits,
                                  value=jnp.where(done, 0.0, value)), state
  def one(key, state):
    state = jax.tree.map(lambda x: x[None], state)
    k1, k2 = jax.random.split(key)
    logits, value = evaluate(k1, state)
    out = mctx.muzero_policy(None, k2, mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state),
                             recurrent_fn, num_simulations, invalid_actions=~state.legal_action_mask,
                             dirichlet_fraction=0.0, temperature=0.0)
    return out.action[0]
  def policy(variables, key, states):
    return jax.vmap(one)(jax.random.split(key, states.current_player.shape[0]), states).astype(jnp.int32)
  return policy

old = arena.Player("mcts64_2026-11-22", old_mcts_policy("connect_four", 64))
env = make_env("connect_four")
if sys.argv[1] == "random":
  r = arena.match(env, old, arena.random_player, jax.random.PRNGKey(0), 64, opening_plies=2)
else:
  a = load_agent(sys.argv[1], int(sys.argv[2]))
  r = arena.match(env, a.player(f"A@{a.step}"), old, jax.random.PRNGKey(2026), 64, opening_plies=2)
print(sys.argv[1:], r.wins, r.draws, r.losses, round(r.score, 3))
