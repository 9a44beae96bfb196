"""Where PUCT goes below the root: visits to moves the search must never consider (section 65).

A go9 position late in a random game under the pass rule of the go9 presets (`go_pass=eyes`, `go_fill_eyes=False`,
`go_eyes=true`), where the mover has a few legal non-eye moves and pass is kept out. An evaluator of uniform logits
values every position VALUE for its player to move, so below the root each legal child scores a loss for the node's
player, below AlphaGo Zero's unvisited Q of 0. Counts the visits the interior nodes give their children: to moves the
search allows, and to those it masks (pass, own-eye fills, points pgx forbids).

  python interior_masks.py VALUE SIMULATIONS [--unmasked]

`--unmasked` puts `search.never_masked` out of the way: PUCT's selection as it was before section 65's fix.
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

from azjax import rules
from azjax import search as S
from azjax.config import SearchConfig
from azjax.games import make_env

value, simulations = float(sys.argv[1]), int(sys.argv[2])
if "--unmasked" in sys.argv:
  S.never_masked = lambda qtransform: qtransform
env, points = make_env("go9"), 81
config = SearchConfig(algorithm="puct", num_simulations=simulations, go_pass="eyes", go_fill_eyes=False,
                      go_eyes="true", unvisited_value=0.0, dirichlet_fraction=0.0)
legal_moves = rules.make_legal_moves("go9", config.go_pass, config.go_fill_eyes, config.go_eyes)
one = lambda s: jax.tree.map(lambda x: x[None], s)

step, rng, state = jax.jit(env.step), np.random.default_rng(0), env.init(jax.random.PRNGKey(3))
while True:  # random moves under the rule until the mover has at most 4 left and may not pass
  allowed = np.asarray(legal_moves(one(state))[0])
  if allowed[:-1].sum() <= 4 and not allowed[-1] and int(state._x.consecutive_pass_count) == 0:
    break
  state = step(state, int(rng.choice(np.flatnonzero(allowed))))
print(f"ply {int(state._x.step_count)}; the mover's moves: {np.flatnonzero(allowed).tolist()} (pass kept out)")

evaluate = lambda variables, key, s: (jnp.zeros((s.current_player.shape[0], points + 1)),
                                      jnp.full(s.current_player.shape, value), S.Extras())
out = S.make_search_with(env, evaluate, config, legal_moves, simulations, "go9")(
    None, jax.random.split(jax.random.PRNGKey(0), 1), one(state), noise=False)
tree = jax.tree.map(lambda x: x[0, 0], out.tree)  # the batch of one, and mctx's own batch of one
counts = dict(allowed=0, passes=0, eye_fills=0, occupied=0)
for node in np.flatnonzero(np.asarray(tree.node_visits)[1:]) + 1:
  s = S.unlean(one(jax.tree.map(lambda x: x[node], tree.embeddings.state)), points + 1)
  if bool(s.terminated[0]):
    continue
  searched, pgx_legal = np.asarray(legal_moves(s)[0]), np.asarray(s.legal_action_mask[0])
  children = np.asarray(tree.children_visits[node])
  for a in np.flatnonzero(children):
    kind = "allowed" if searched[a] else "passes" if a == points else "eye_fills" if pgx_legal[a] else "occupied"
    counts[kind] += int(children[a])
print(f"{simulations} simulations, value {value:+}: interior visits to allowed moves {counts['allowed']}; to masked "
      f"ones: passes {counts['passes']}, own-eye fills {counts['eye_fills']}, occupied points {counts['occupied']}")
shares = {int(a): round(float(out.weights[0, a]), 3) for a in np.flatnonzero(np.asarray(out.legal[0]))}
print(f"root value {float(out.value[0]):+.3f}; visit shares at the root: {shares}")
