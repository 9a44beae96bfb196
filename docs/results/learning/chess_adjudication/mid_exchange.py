"""How often the chess length cap adjudicates in the middle of an exchange (section 66).

The `cpu` chess preset stops self-play at ply 80 and scores the game by material (`selfplay.adjudicate_material=3`,
margin 3). Ply 80 always leaves White to move, just after Black's move: when that move captured and White's
recapture is pending, the count credits Black with material it is about to give back. Plays GAMES games of a
checkpoint against itself (moves sampled from the search policy, as self-play's temperature does, no root noise)
to ply CAP and, at every ply, compares the material lead after the last move with the lead before it.

  python mid_exchange.py RUN STEP [GAMES [CAP]]

CAP defaults to the checkpoint's `selfplay.max_plies`, the margin is its `selfplay.adjudicate_material`.

Prints, at the cap and over all plies 20..CAP: how often the margin rule gives a decision, and how often that
decision did not hold before the last move (the lead was under the margin, or the other side's, one ply earlier).
"""
import sys

import jax
import numpy as np

from azjax import load_agent, rules

run, step = sys.argv[1], int(sys.argv[2])
agent = load_agent(run, step)
games = int(sys.argv[3]) if len(sys.argv) > 3 else 64
cap = int(sys.argv[4]) if len(sys.argv) > 4 else agent.config.selfplay.max_plies
margin = agent.config.selfplay.adjudicate_material
if cap <= 0 or margin <= 0:
  sys.exit(f"{run} trained without a length cap and material adjudication (selfplay.max_plies, adjudicate_material)")
env = agent.env
state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), games))
player = agent.player(greedy=False)
lead_of = jax.jit(rules.chess_material_lead)
step_fn = jax.jit(jax.vmap(env.step))
key = jax.random.PRNGKey(1)
leads, alive = [np.asarray(lead_of(state))], [np.ones(games, bool)]
for ply in range(cap):
  key, k = jax.random.split(key)
  state = step_fn(state, player.act(state, k))
  alive.append(alive[-1] & ~np.asarray(state.terminated | state.truncated))
  leads.append(np.asarray(lead_of(state)))
leads, alive = np.stack(leads), np.stack(alive)  # [cap + 1, games], each lead for the player to move at that ply


def decided(t):
  """At ply t (> 0), in the games still going: the margin rule's decision now, and whether the lead held the ply
  before (the same side ahead by the margin; the lead before is the other player's view)."""
  now, before = leads[t], -leads[t - 1]
  decision = np.abs(now) >= margin
  held = decision & (np.sign(before) == np.sign(now)) & (np.abs(before) >= margin)
  return decision[alive[t]], held[alive[t]]


d, h = decided(cap)
print(f"{run}@{step}, {games} games, cap {cap}: {alive[cap].sum()} reached it; the margin rule decided {d.sum()}, "
      f"{h.sum()} of them with the lead held the ply before ({d.sum() - h.sum()} not)")
first = min(20, cap)
ds, hs = zip(*(decided(t) for t in range(first, cap + 1)))
ds, hs = np.concatenate(ds), np.concatenate(hs)
print(f"plies {first}-{cap}, {ds.size} positions: decided {ds.mean():.3f}, of which held {hs.sum() / max(ds.sum(), 1):.3f}")
