import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax.config import NetworkConfig, SearchConfig
from azjax.games import make_env
from azjax.network import make_network
from azjax.search import dirichlet_alpha, make_search


def _setup(game, **search):
  env = make_env(game)
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 3))
  variables = net.init(jax.random.PRNGKey(1), state.observation)
  return env, net, state, variables, SearchConfig(**search)


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_illegal_moves_never_searched_anywhere_in_the_tree(algorithm, strict_rank_promotion):
  env, net, state, variables, config = _setup("tictactoe", algorithm=algorithm, num_simulations=300)
  state = jax.vmap(env.step)(state, jnp.array([4, 0, 8]))  # make the root itself have illegal moves
  out = jax.jit(make_search(env, net, config, "tictactoe"))(variables, jax.random.split(jax.random.PRNGKey(2), 3),
                                                            state)
  tree = jax.tree.map(lambda x: x[:, 0], out.tree)  # drop mctx's batch of one
  visited = np.asarray(tree.node_visits) > 0  # [B, N]
  legal = np.asarray(tree.embeddings.legal_action_mask)  # [B, N, A] legal moves at each node
  terminal = np.asarray(tree.embeddings.terminated)
  children = np.asarray(tree.children_visits)  # [B, N, A]
  live = visited & ~terminal
  assert np.all(children[live][~legal[live]] == 0)
  assert np.all(np.asarray(tree.children_index)[live][~legal[live]] == -1)  # never expanded
  # Deep: some searched nodes lie at least 4 plies below the root.
  depth = np.zeros(tree.node_visits.shape, int)
  parents = np.asarray(tree.parents)
  for b in range(3):
    for n in range(1, parents.shape[1]):
      if parents[b, n] >= 0:
        depth[b, n] = depth[b, parents[b, n]] + 1
  assert depth.max() >= 4
  # And the policy target has no mass on illegal moves.
  assert np.all(np.asarray(out.weights)[~np.asarray(state.legal_action_mask)] == 0)


def test_search_finds_the_winning_move():
  env, net, state, variables, config = _setup("tictactoe", num_simulations=64)
  for a in [0, 3, 1, 4]:  # X: 0, 1; O: 3, 4; X to move wins at 2
    state = jax.vmap(env.step)(state, jnp.full((3,), a))
  search = jax.jit(make_search(env, net, config, "tictactoe"), static_argnames="noise")
  out = search(variables, jax.random.split(jax.random.PRNGKey(2), 3), state, noise=False)
  assert np.all(np.argmax(out.weights, -1) == 2)
  assert np.all(np.asarray(out.value) > 0.5)


def test_dirichlet_alpha_per_game():
  config = SearchConfig()
  assert dirichlet_alpha(config, "chess") == 0.3  # AlphaZero Methods
  assert dirichlet_alpha(config, "shogi") == 0.15
  assert dirichlet_alpha(config, "go") == 0.03
  # Other games: scaled in inverse proportion to the typical number of legal moves.
  assert dirichlet_alpha(config, "connect_four") > dirichlet_alpha(config, "othello") > dirichlet_alpha(config, "go9")
  assert dirichlet_alpha(SearchConfig(dirichlet_alpha=0.7), "chess") == 0.7


def test_root_noise_follows_alpha():
  # All prior weight on the noise: PUCT spreads its visits like the noise, so a small alpha (spiky noise)
  # concentrates the visits on few moves and a large alpha spreads them.
  env, net, state, variables, _ = _setup("go9")
  spread = {}
  for alpha in (0.03, 10.0):
    config = SearchConfig(num_simulations=24, dirichlet_fraction=1.0, dirichlet_alpha=alpha)
    out = jax.jit(make_search(env, net, config, "go9"))(variables, jax.random.split(jax.random.PRNGKey(3), 3), state)
    spread[alpha] = float(np.mean(np.sum(np.asarray(out.weights) > 0, axis=-1)))
  assert spread[0.03] < 8 < spread[10.0]


@pytest.mark.parametrize("game", ["tictactoe", "chess"])
def test_lean_tree_searches_exactly_like_the_full_state(game, monkeypatch):
  """The tree stores states without observations, and searches as it would with them."""
  from azjax import search as search_lib
  env, net, state, variables, config = _setup(game, num_simulations=12)
  keys = jax.random.split(jax.random.PRNGKey(2), 3)
  lean = jax.jit(make_search(env, net, config, game))(variables, keys, state)
  assert lean.tree.embeddings.observation.shape == (3, 1, 13, 0)  # [B, mctx batch, nodes, nothing]
  monkeypatch.setattr(search_lib, "lean", lambda s: s)
  full = jax.jit(make_search(env, net, config, game))(variables, keys, state)
  assert full.tree.embeddings.observation.shape[3:] == state.observation.shape[1:]
  np.testing.assert_array_equal(np.asarray(lean.weights), np.asarray(full.weights))
  np.testing.assert_array_equal(np.asarray(lean.tree.children_visits), np.asarray(full.tree.children_visits))
  np.testing.assert_allclose(np.asarray(lean.value), np.asarray(full.value), rtol=1e-6)
