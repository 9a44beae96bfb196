"""How often Gumbel's root children tie on visits, and what the value target's q read before the fix.

  python best_q_ties.py RUN STEP        # the run's own full (16 over 16) and fast (4) searches, 32 positions

Positions: 32 games of 6-39 uniformly random plies. For each search it prints how many root children share the
most visits, how often the first of them (the lowest-numbered legal move: the pre-fix `best_value`, a plain argmax
of the visits) is the child the search prefers (the improved policy's best), and the mean of each candidate q:
the first tied child's Q, the preferred child's Q (`search.preferred_child`, the fix) and the root value."""
import sys

import jax
import jax.numpy as jnp
import numpy as np

from azjax.agent import load_agent
from azjax.games import batched_init, batched_step, make_env
from azjax.network import make_network
from azjax.search import make_search, root_summary


def main(run, step, games=32):
  agent = load_agent(run, step=int(step))
  config, env = agent.config, make_env("chess")
  net = make_network(config.network, env.num_actions, dtype=config.network.inference_dtype)
  searches = {f"full ({config.search.num_simulations})": (make_search(env, net, config.search, "chess"), True),
              f"fast ({config.selfplay.fast_simulations})":
              (make_search(env, net, config.search, "chess", config.selfplay.fast_simulations), False)}
  state, step_fn, rng = batched_init(env)(jax.random.split(jax.random.PRNGKey(3), games)), batched_step(env), \
      np.random.default_rng(0)
  plies = rng.integers(6, 40, games)
  for t in range(40):
    moves = np.array([rng.choice(np.flatnonzero(m)) for m in np.asarray(state.legal_action_mask)])
    new = step_fn(state, jnp.asarray(moves))
    keep = jnp.asarray((t < plies) & ~np.asarray(new.terminated))
    state = jax.tree.map(lambda n, o: jnp.where(keep.reshape(keep.shape + (1,) * (o.ndim - 1)), n, o), new, state)
  for name, (search, noise) in searches.items():
    out = search((agent.params, agent.bn_state), jax.random.split(jax.random.PRNGKey(7), games), state, noise=noise)
    visits, q = (np.asarray(x) for x in root_summary(out))
    first = visits.argmax(-1)  # the first of the children with the most visits
    preferred = np.asarray(out.weights).argmax(-1)
    ties = (visits == visits.max(-1, keepdims=True)).sum(-1)
    rows = np.arange(games)
    print(f"{name}: children tied at the most visits, mean {ties.mean():.1f}; first tied child is the preferred one in "
          f"{np.mean(first == preferred):.3f} of positions")
    print(f"  mean q: first tied child {q[rows, first].mean():+.3f}, preferred child {q[rows, preferred].mean():+.3f}, "
          f"best_value {np.asarray(out.best_value).mean():+.3f}, root value {np.asarray(out.value).mean():+.3f}; "
          f"mean |first - preferred| {np.abs(q[rows, first] - q[rows, preferred]).mean():.3f}")


if __name__ == "__main__":
  main(*sys.argv[1:])
