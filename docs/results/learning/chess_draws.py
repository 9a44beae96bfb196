"""Why chess draws against uniform random: N games of a checkpoint against a uniform random mover,
each draw classified from pgx's final state (stalemate, 50-move rule, threefold repetition, the 512-ply
cap, insufficient material) with the agent's material edge at the end (pawn 1, minor 3, rook 5, queen 9) and
who made the last move (for a repetition: who completed it), and how many plies the agent's wins took.

  python docs/results/learning/chess_draws.py RUN_DIR STEP SIMULATIONS GAMES [search.FIELD=VALUE ...]

The optional overrides play the checkpoint with other search settings (Agent.with_search), e.g.
search.max_considered_actions=4: Gumbel's root then considers 4 moves, and 16 simulations reach deeper
than the one ply that 16 considered moves at 16 simulations allow.
"""
import sys, collections
import jax, jax.numpy as jnp, numpy as np
from azjax.agent import load_agent
from azjax import arena, rules
run, step, sims, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
agent = load_agent(run, step).with_search(sys.argv[5:])
env = agent.env
me = agent.player(num_simulations=sims)
rnd = arena.random_player
key = jax.random.PRNGKey(7)
state = jax.vmap(env.init)(jax.random.split(key, n))
seat = jnp.where(jnp.arange(n) % 2 == 0, 0, 1)  # agent plays player 0 in even games
step_j = jax.jit(jax.vmap(env.step))
ret = np.zeros(n); plies = np.zeros(n, int)
last_by_agent = np.zeros(n, bool)  # whether the agent made each game's last move (who completed a repetition)
while True:
    done = np.asarray(state.terminated | state.truncated)
    if done.all(): break
    key, k1, k2 = jax.random.split(key, 3)
    a = jnp.where(state.current_player == seat, me.act(state, k1), rnd.act(state, k2))
    last_by_agent = np.where(done, last_by_agent, np.asarray(state.current_player == seat))
    state = step_j(state, a)
    ret += np.asarray(state.rewards[jnp.arange(n), seat]); plies += ~done
x = jax.device_get(state._x)
cp = np.asarray(state.current_player)
lead = np.asarray(rules.chess_material_lead(state))  # for the player to move
repeats = np.asarray(rules.chess_repetitions(state))  # earlier occurrences of the final position
kinds = collections.Counter()
for i in range(n):
    if ret[i] != 0:
        kinds["agent won" if ret[i] > 0 else "agent lost"] += 1; continue
    mat = int(lead[i]) * (1 if cp[i] == seat[i] else -1)
    if x.step_count[i] >= rules.PGX_CAPS["chess"]: kind = f"{rules.PGX_CAPS['chess']}-ply cap"
    elif not x.legal_action_mask[i].any(): kind = "stalemate"
    elif x.halfmove_count[i] >= 100: kind = "50-move rule"
    elif repeats[i] >= 2: kind = "threefold repetition"
    else: kind = "insufficient material"
    kinds[kind] += 1
    print(f"game {i}: {kind} after {plies[i]} plies, agent's material edge {mat:+d}, "
          f"last move by {'the agent' if last_by_agent[i] else 'random'}")
wins = plies[ret > 0]
print(f"step {step}, {sims} simulations{' ' + ' '.join(sys.argv[5:]) if sys.argv[5:] else ''}, {n} games:", dict(kinds),
      f"; the agent's wins after a median of {np.median(wins) if len(wins) else 0:.0f} plies "
      f"(10th-90th percentile {np.percentile(wins, 10) if len(wins) else 0:.0f}-{np.percentile(wins, 90) if len(wins) else 0:.0f})")
