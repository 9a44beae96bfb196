"""Today's pure-MCTS anchor (arena.mcts_player) against uniform random: python anchor.py SEED (64 games)."""
import sys, jax
from azjax import arena
from azjax.games import make_env
env = make_env("connect_four")
r = arena.match(env, arena.mcts_player("connect_four", 64), arena.random_player, jax.random.PRNGKey(int(sys.argv[1])), 64, opening_plies=2)
print(r.wins, r.draws, r.losses, r.score)
