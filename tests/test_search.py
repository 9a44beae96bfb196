import dataclasses
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax.config import Config, ConfigError, NetworkConfig, SearchConfig
from azjax.games import make_env
from azjax.network import make_network
from azjax import rules
from azjax.search import (Extras, children, choose_move, dirichlet_alpha, make_search, make_search_with, masked_logits,
                          root_summary, scatter, score_center, score_utility, tree_width, unlean)
from conftest import COMPUTE, batched_init, batched_step, untrained_agent


def _setup(game, **search):
  env = make_env(game)
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 3))
  variables = net.init(jax.random.PRNGKey(1), state.observation)
  return env, net, state, variables, SearchConfig(**search)


def _positions(env, games: int, plies: int, seed: int = 0):
  """`games` games, each `plies` uniformly random legal plies in."""
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(seed), games))
  step = batched_step(env)
  for key in jax.random.split(jax.random.PRNGKey(seed + 1), plies):
    logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
    state = step(state, jax.vmap(jax.random.categorical)(jax.random.split(key, games), logits))
  return state


@pytest.mark.parametrize("evaluator", ["network", "mover_wins"])
@pytest.mark.parametrize("compact_tree", ["off", "on"])
@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_illegal_moves_never_searched_anywhere_in_the_tree(algorithm, compact_tree, evaluator, strict_rank_promotion):
  # "mover_wins" values every position +0.9 for its player to move: below the root each legal child then scores a
  # loss for the node's player, below an unvisited child's Q of 0 (AlphaGo Zero's), where PUCT once went into
  # illegal children (mctx masks the root only).
  env, net, state, variables, config = _setup("tictactoe", algorithm=algorithm, num_simulations=300,
                                              compact_tree=compact_tree)
  state = batched_step(env)(state, jnp.array([4, 0, 8]))  # make the root itself have illegal moves
  search = make_search(env, net, config, "tictactoe")
  if evaluator == "mover_wins":
    flat = lambda variables, key, s: (jnp.zeros(s.legal_action_mask.shape), jnp.full(s.current_player.shape, 0.9),
                                      Extras())
    search = make_search_with(env, flat, config, lambda s: s.legal_action_mask, 300, "tictactoe")
  out = jax.jit(search)(variables, jax.random.split(jax.random.PRNGKey(2), 3), state)
  tree = jax.tree.map(lambda x: x[:, 0], out.tree)  # drop mctx's batch of one
  visited = np.asarray(tree.node_visits) > 0  # [B, N]
  nodes = unlean(tree.embeddings.state, env.num_actions)  # the legal moves as pgx keeps them, not packed
  legal = np.asarray(nodes.legal_action_mask)  # [B, N, A] legal moves at each node
  if compact_tree == "on":  # [B, N, K] whether each child is legal (not the padding)
    legal = np.take_along_axis(legal, np.asarray(tree.embeddings.actions), axis=-1)
  terminal = np.asarray(nodes.terminated)
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
    state = batched_step(env)(state, jnp.full((3,), a))
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
  """The tree stores states without observations and with their legal moves packed in bits, and searches as it
  would with the whole states."""
  from azjax import search as search_lib
  env, net, state, variables, config = _setup(game, num_simulations=12)
  keys = jax.random.split(jax.random.PRNGKey(2), 3)
  nodes = lambda tree: tree.embeddings.state
  lean = jax.jit(make_search(env, net, config, game))(variables, keys, state)
  assert nodes(lean.tree).observation.shape == (3, 1, 13, 0)  # [B, mctx batch, nodes, nothing]
  assert nodes(lean.tree).legal_action_mask.shape == (3, 1, 13, -(-env.num_actions // 8))  # uint8, 8 moves a byte
  monkeypatch.setattr(search_lib, "lean", lambda s: s)
  monkeypatch.setattr(search_lib, "unlean", lambda s, num_actions: s)
  full = jax.jit(make_search(env, net, config, game))(variables, keys, state)
  assert nodes(full.tree).observation.shape[3:] == state.observation.shape[1:]
  np.testing.assert_array_equal(np.asarray(lean.weights), np.asarray(full.weights))
  np.testing.assert_array_equal(np.asarray(lean.tree.children_visits), np.asarray(full.tree.children_visits))
  np.testing.assert_allclose(np.asarray(lean.value), np.asarray(full.value), rtol=1e-6)


@pytest.mark.parametrize("game, algorithm, simulations", [("tictactoe", "puct", 200), ("go9", "puct", 48),
                                                          ("chess", "gumbel", 48)])
def test_the_path_backup_searches_exactly_as_mctxs_own(game, algorithm, simulations, monkeypatch):
  """backup.path_backward writes the tree once per simulation where mctx's backward selects it whole at every step
  up: the same tree, bit for bit, for each search and tree kind (go9: full, chess: compact)."""
  from azjax import backup
  env, net, state, variables, config = _setup(game, algorithm=algorithm, num_simulations=simulations)
  keys = jax.random.split(jax.random.PRNGKey(2), 3)
  ours = jax.jit(make_search(env, net, config, game))(variables, keys, state)
  monkeypatch.setattr(backup, "ENABLED", False)
  theirs = jax.jit(make_search(env, net, config, game))(variables, keys, state)
  for name in ("node_values", "node_visits", "children_values", "children_visits"):
    np.testing.assert_array_equal(np.asarray(getattr(ours.tree, name)), np.asarray(getattr(theirs.tree, name)))
  np.testing.assert_array_equal(np.asarray(ours.weights), np.asarray(theirs.weights))
  assert np.asarray(ours.tree.node_visits).max() == simulations + 1  # the root's: every simulation backed up


@pytest.mark.parametrize("candidates", [1, 4])
@pytest.mark.parametrize("alpha", [0.03, 0.3, 1.0, 2.5])
def test_log_gamma_draws_gamma(alpha, candidates):
  """search.log_gamma's samples pass a Kolmogorov-Smirnov test against Gamma(alpha) (scipy), and those of a wrong
  shape do not; with one candidate a sample the loop redraws, so that path is tested too."""
  from scipy import stats
  from azjax.search import log_gamma
  logs = np.asarray(jax.jit(lambda k: log_gamma(k, alpha, (20000,), candidates))(jax.random.PRNGKey(1)), np.float64)
  assert np.isfinite(logs).all()
  assert stats.kstest(logs, lambda y: stats.gamma.cdf(np.exp(y), alpha)).pvalue > 1e-3
  assert stats.kstest(logs, lambda y: stats.gamma.cdf(np.exp(y), 1.1 * alpha)).pvalue < 1e-3


@pytest.mark.parametrize("game, simulations", [("go9", 24), ("chess", 24)])
def test_puct_tree_is_mctxs_muzero_policy_without_its_noise_draw(game, simulations, monkeypatch):
  """search.puct_tree skips the Dirichlet draw mctx.muzero_policy makes and weights 0: the same tree, bit for bit,
  with our root noise on (go9: full tree, chess: compact), given the same masking below the root."""
  import mctx
  from azjax import search as search_lib
  env, net, state, variables, config = _setup(game, num_simulations=simulations)
  keys = jax.random.split(jax.random.PRNGKey(4), 3)
  ours = jax.jit(make_search(env, net, config, game))(variables, keys, state)

  def mctxs(variables, key, root, recurrent_fn, num_simulations, invalid, qtransform, c_init, c_base):
    return mctx.muzero_policy(variables, key, root, recurrent_fn, num_simulations, invalid_actions=invalid,
                              qtransform=search_lib.never_masked(qtransform), dirichlet_fraction=0.0,
                              dirichlet_alpha=0.3, pb_c_init=c_init, pb_c_base=c_base).search_tree

  monkeypatch.setattr(search_lib, "puct_tree", mctxs)
  theirs = jax.jit(make_search(env, net, config, game))(variables, keys, state)
  for name in ("node_values", "node_visits", "children_values", "children_visits", "children_prior_logits"):
    np.testing.assert_array_equal(np.asarray(getattr(ours.tree, name)), np.asarray(getattr(theirs.tree, name)))
  np.testing.assert_array_equal(np.asarray(ours.weights), np.asarray(theirs.weights))
  assert np.asarray(ours.tree.node_visits).max() == simulations + 1


def _copied_node_bytes(hlo: str, nodes: int) -> int:
  """Bytes of the arrays with a dimension of `nodes` that an optimised program copies (not its constants)."""
  size = {"pred": 1, "u8": 1, "s8": 1, "s32": 4, "u32": 4, "f32": 4}
  total = 0
  for dtype, dims, source in re.findall(r"= (\w+)\[([\d,]*)\]\S* copy\(%([\w.-]+)\)", hlo):
    shape = [int(d) for d in dims.split(",") if d]
    if nodes in shape and not source.startswith(("constant", "wrapped_broadcast")):
      total += size[dtype] * int(np.prod(shape))
  return total


def test_a_search_writes_its_new_nodes_in_place():
  """Compiled with search.compiler_options, a one-game chess search (as the engines and matches run) copies under
  half a node's state per node. Without them, XLA:CPU copied every node array twice on every simulation (15.8 KB a
  node), so a search's time grew with the square of its simulations (docs/results/bench/deep_search.md)."""
  from azjax.search import compiler_options, lean
  n = 23  # simulations: 24 nodes, a dimension no chess array has
  env, net, state, variables, config = _setup("chess", algorithm="gumbel", num_simulations=n)
  state = jax.tree.map(lambda x: x[:1], state)
  hlo = jax.jit(make_search(env, net, config, "chess"), compiler_options=compiler_options()).lower(
      variables, jax.random.split(jax.random.PRNGKey(2), 1), state).compile().as_text()
  node = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(lean(state)))  # 7,626 B
  copied = _copied_node_bytes(hlo, n + 1) / (n + 1)  # per node: 1,700 B with the options, 15,816 without
  assert 0 < node and copied < node / 2, (copied, node)


def test_tree_width_and_its_config():
  auto = SearchConfig()
  assert tree_width(auto, "chess", 4672) == 218 and tree_width(auto, "shogi", 2187) == 593
  assert tree_width(auto, "go9", 82) == 0 and tree_width(auto, "tictactoe", 9) == 0  # nearly all actions legal
  assert tree_width(SearchConfig(compact_tree="on"), "go9", 82) == 82
  assert tree_width(SearchConfig(compact_tree="off"), "chess", 4672) == 0
  with pytest.raises(ValueError, match="compact_tree"):
    tree_width(SearchConfig(compact_tree="yes"), "chess", 4672)
  with pytest.raises(ConfigError, match=r"search.compact_tree='yes' is invalid: one of auto, on, off"):
    Config(search=SearchConfig(compact_tree="yes"))


# Chess and shogi compact by default (auto); go9 only when asked (K = A), here with Go's pass rule narrowing the
# legal moves and the evaluator under random symmetries.
EXACT = {"chess": {}, "shogi": {}, "go9": dict(compact_tree="on", go_pass="eyes", random_symmetry=True)}


@pytest.mark.parametrize("actions,width", [(4672, 218), (2187, 593), (82, 82), (33, 20), (9, 9)])
def test_children_are_the_legal_moves_in_order_padded_with_the_first_illegal(actions, width):
  rng = np.random.default_rng(actions)
  density = np.array([0.0, 0.005, 0.05, 0.3, 0.9, 1.0])[:, None]
  legal = jnp.asarray(rng.random((6, actions)) < density)
  got = np.asarray(jax.jit(children, static_argnums=1)(legal, width))
  for mask, row in zip(np.asarray(legal), got):
    moves = np.flatnonzero(mask)[:width]
    fill = np.flatnonzero(~mask)[0] if not mask.all() else 0
    np.testing.assert_array_equal(row, np.r_[moves, np.full(width - len(moves), fill)])


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
@pytest.mark.parametrize("game", list(EXACT))
def test_compact_tree_searches_exactly_like_the_full_tree(game, algorithm):
  """Without root noise, the compact tree visits, values and chooses as the full tree does.

  mctx breaks PUCT ties with 1e-7 x uniform noise drawn per child, so over [K] and [A] it differs; these
  positions (a random network's distinct priors, a few plies in, no mates) have no ties that close."""
  env = make_env(game)
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  state = _positions(env, 4, plies=5)
  variables = net.init(jax.random.PRNGKey(1), state.observation)
  keys = jax.random.split(jax.random.PRNGKey(2), 4)
  config = SearchConfig(algorithm=algorithm, num_simulations=48, **EXACT[game])
  outs = {}
  for tree, c in (("compact", config), ("full", dataclasses.replace(config, compact_tree="off"))):
    outs[tree] = jax.device_get(jax.jit(make_search(env, net, c, game), static_argnames="noise")(
        variables, keys, state, noise=False))
  compact, full = outs["compact"], outs["full"]
  width = tree_width(config, game, env.num_actions)
  assert compact.tree.children_visits.shape == (4, 1, 49, width) and compact.actions.shape == (4, width)
  assert full.tree.children_visits.shape == (4, 1, 49, env.num_actions)
  np.testing.assert_array_equal(compact.legal, full.legal)
  if game == "go9":
    assert not compact.legal[:, -1].all() and np.all(compact.weights[~compact.legal] == 0)  # pass narrowed
  visits = {tree: np.asarray(root_summary(out)[0]) for tree, out in outs.items()}
  np.testing.assert_array_equal(visits["compact"], visits["full"])
  assert visits["full"].sum() == 4 * 48
  np.testing.assert_allclose(compact.weights, full.weights, rtol=1e-5, atol=1e-7)
  np.testing.assert_allclose(compact.value, full.value, rtol=1e-5, atol=1e-6)
  np.testing.assert_array_equal(np.argmax(compact.weights, -1), np.argmax(full.weights, -1))
  np.testing.assert_array_equal(compact.prior_logits, full.prior_logits)


def _one_position(game: str, copies: int):
  """The env, a network, `copies` copies of one position a few plies in, and the network's variables."""
  env = make_env(game)
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  state = _positions(env, 1, plies=4)
  variables = net.init(jax.random.PRNGKey(1), state.observation)
  return env, net, jax.tree.map(lambda x: jnp.repeat(x, copies, axis=0), state), variables


def _chess_search(env, net, config):
  """The jitted chess search; the full tree (4,672 actions a node) compiles at -O1 (COMPUTE), far faster to build."""
  full = tree_width(config, "chess", env.num_actions) == 0
  return jax.jit(make_search(env, net, config, "chess"), compiler_options=COMPUTE if full else None)


@pytest.mark.slow
@pytest.mark.parametrize("compact_tree", ["auto", "off"])
def test_root_dirichlet_noise_is_dirichlet_alpha_over_the_legal_moves(compact_tree):
  """PUCT's root prior after noise is (1 - f) p + f eta, eta ~ Dir(alpha) over the legal moves, in either tree.

  (mctx's own noise, over every child, would leave the legal moves under 1% of it in the full tree.)"""
  n, f, alpha = 512, 0.25, 0.3
  env, net, states, variables = _one_position("chess", n)
  keys = jax.random.split(jax.random.PRNGKey(3), n)
  config = SearchConfig(num_simulations=1, dirichlet_fraction=f, dirichlet_alpha=alpha, compact_tree=compact_tree)
  out = _chess_search(env, net, config)(variables, keys, states)
  root = jax.nn.softmax(out.tree.children_prior_logits[:, 0, 0])  # [n, K] the root's prior after noise
  prior = np.asarray(scatter(root, out.actions, env.num_actions))
  legal = np.asarray(states.legal_action_mask[0])
  moves = legal.sum()
  p = np.asarray(jax.nn.softmax(masked_logits(out.prior_logits[0], states.legal_action_mask[0])))
  assert np.all(prior[:, ~legal] == 0)
  eta = (prior[:, legal] - (1 - f) * p[legal]) / f  # [n, L] the noise
  np.testing.assert_allclose(eta.sum(-1), 1.0, atol=1e-4)  # all of its weight on the legal moves
  var = (1 / moves) * (1 - 1 / moves) / (alpha * moves + 1)  # of each component of Dir(alpha) over L moves
  assert np.all(np.abs(eta.mean(0) - 1 / moves) < 5 * np.sqrt(var / n))
  np.testing.assert_allclose(eta.var(0).mean(), var, rtol=0.1)


@pytest.mark.slow
def test_root_gumbel_noise_is_iid_over_the_legal_moves():
  """Gumbel's first simulation visits argmax(g + logits) at the root: with i.i.d. Gumbel g over the legal
  moves that is a sample of the prior (the Gumbel-max trick), in either tree."""
  n = 2048
  env, net, states, variables = _one_position("chess", n)
  keys = jax.random.split(jax.random.PRNGKey(4), n)
  config = SearchConfig(algorithm="gumbel", num_simulations=1)
  for c in (config, dataclasses.replace(config, compact_tree="off")):
    out = _chess_search(env, net, c)(variables, keys, states)
    visited = np.asarray(root_summary(out)[0]).mean(0)  # [A] how often each move was the one visited
    p = np.asarray(jax.nn.softmax(masked_logits(out.prior_logits[0], out.legal[0])))
    assert np.all(np.abs(visited - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-6)


@pytest.mark.parametrize("unvisited, widest", [(0.0, True), (-1.0, False)])
def test_unvisited_value_sets_how_wide_puct_searches(unvisited, widest):
  # A flat evaluator (uniform prior, value 0 everywhere): every visited child is worth 0. Counted as 0
  # too (AlphaGo Zero: Q(s, a) = 0), an unvisited child keeps its larger exploration term, so 9
  # simulations visit all 9 first moves once. Counted as a loss (the AlphaZero pseudocode's -1), it
  # trails every visited child, so search keeps returning to the first one it tried.
  env = make_env("tictactoe")
  flat = lambda variables, key, state: (jnp.zeros(state.legal_action_mask.shape),
                                        jnp.zeros(state.legal_action_mask.shape[0]), Extras())
  config = SearchConfig(algorithm="puct", unvisited_value=unvisited)
  search = make_search_with(env, flat, config, lambda s: s.legal_action_mask, 9, "tictactoe")
  states = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 4))
  out = search(None, jax.random.split(jax.random.PRNGKey(1), 4), states, noise=False)
  visited = (np.asarray(out.weights) > 0).sum(-1)
  if widest:
    assert (visited == 9).all(), visited
  else:
    assert (visited == 1).all(), visited


@pytest.mark.parametrize("discount", [1.0, 0.5])
def test_a_discount_shrinks_each_plys_value_on_the_way_up(discount):
  # A flat evaluator that calls every position 0.8 for its mover. One simulation expands one child (0.8 for
  # the opponent); mctx's root value averages the root's own 0.8 with that child backed up: -discount * 0.8.
  # And a win one ply away is worth its full reward whatever the discount.
  env = make_env("tictactoe")
  flat = lambda variables, key, state: (jnp.zeros(state.legal_action_mask.shape),
                                        jnp.full(state.legal_action_mask.shape[0], 0.8), Extras())
  config = SearchConfig(algorithm="puct", discount=discount)
  states = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 2))
  out = make_search_with(env, flat, config, lambda s: s.legal_action_mask, 1, "tictactoe")(
      None, jax.random.split(jax.random.PRNGKey(1), 2), states, noise=False)
  np.testing.assert_allclose(out.value, (0.8 - discount * 0.8) / 2, rtol=1e-6)
  for a in [0, 3, 1, 4]:  # X: 0, 1; O: 3, 4; X to move wins at 2
    states = batched_step(env)(states, jnp.full((2,), a))
  out = make_search_with(env, flat, config, lambda s: s.legal_action_mask, 64, "tictactoe")(
      None, jax.random.split(jax.random.PRNGKey(1), 2), states, noise=False)
  assert np.all(np.argmax(out.weights, -1) == 2)


def test_analyse_reports_visits_and_q_by_move_on_the_compact_tree():
  # Chess searches a compact tree (children indexed by legal move); analyse still reports per pgx action.
  import azjax
  from azjax.agent import Agent
  env, agent = make_env("chess"), untrained_agent("chess", simulations=16)
  state = _positions(env, 2, 6)
  out = agent.analyse(state, jax.random.PRNGKey(0))
  full = Agent(config=azjax.apply_overrides(agent.config, ["search.compact_tree=off"]), params=agent.params,
               bn_state=agent.bn_state, step=0).analyse(state, jax.random.PRNGKey(0))
  legal = np.asarray(state.legal_action_mask)
  assert (out["visits"].sum(-1) == 16).all() and not (out["visits"][~legal] > 0).any()
  np.testing.assert_array_equal(out["visits"], full["visits"])
  np.testing.assert_allclose(out["q"], full["q"], rtol=1e-5, atol=1e-6)  # NaN where unvisited, in both


def test_analyse_reports_the_move_act_plays_which_need_not_be_the_policys_argmax():
  # The policy analyse reports is Gumbel's improved policy (completed Q over every move); the agent plays a move its
  # search visited (search.play_unvisited=false) or, under search.gumbel_act=halving, Sequential Halving's winner.
  # A reader of the policy alone would name another move.
  untrained = untrained_agent("go9", simulations=16)
  # Values that differ from move to move, as a trained network's do: the value head's hidden layer scaled 30-fold.
  params = dict(untrained.params, linear_1=jax.tree.map(lambda w: 30 * w, untrained.params["linear_1"]))
  base = dataclasses.replace(untrained, params=params)
  state, games = _positions(base.env, 32, 12), np.arange(32)
  for act_rule in ("halving", "policy"):
    agent = base.with_search(["search.algorithm=gumbel", f"search.gumbel_act={act_rule}",
                              "search.max_considered_actions=16"])
    key = jax.random.PRNGKey(0)
    out = agent.analyse(state, key)
    np.testing.assert_array_equal(out["move"], np.asarray(agent.act(state, key)))
    assert (out["visits"][games, out["move"]] > 0).all()
    best = out["policy"][games, out["move"]] == out["policy"].max(-1)
    if act_rule == "policy":  # the greedy move is the improved policy's best among the moves searched
      visited_best = np.where(out["visits"] > 0, out["policy"], -1).max(-1)
      np.testing.assert_array_equal(out["policy"][games, out["move"]], visited_best)
    assert not best.all()  # the policy's argmax is another move in some positions
  # PUCT at 4 simulations with one value for every position (the value head's hidden layer zeroed) ties the
  # visited moves in visits and Q, and the key breaks those ties: analyse must split it as act does.
  flat = dataclasses.replace(untrained, params=dict(
      untrained.params, linear_1=jax.tree.map(jnp.zeros_like, untrained.params["linear_1"])))
  puct, moves = flat.with_search(["search.algorithm=puct"]), []
  for seed in range(3):
    key = jax.random.PRNGKey(seed)
    out = puct.analyse(state, key, num_simulations=4)
    np.testing.assert_array_equal(out["move"], np.asarray(puct.act(state, key, num_simulations=4)))
    moves.append(out["move"])
  assert any((m != moves[0]).any() for m in moves[1:])  # the tie-break moved with the key


def _back_rank_mate_search(config: SearchConfig):
  """(the noiseless search of `config` from a position where White mates at once by Ra8 among 20 legal moves, under
  a flat evaluator whose prior ranks the mate last, 3 logits below the rest; the mate's action)."""
  from azjax.engines import pgx_private
  env = make_env("chess")
  root = pgx_private.from_fen("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
  legal = np.flatnonzero(np.asarray(root.legal_action_mask))
  assert len(legal) == 20
  after = jax.jit(jax.vmap(env.step, in_axes=(None, 0)))(root, jnp.asarray(legal, jnp.int32))  # each move, at once
  wins = legal[np.asarray(after.rewards[:, int(root.current_player)]) == 1.0]
  assert len(wins) == 1  # Ra8#, the only mate
  prior = jnp.zeros(env.num_actions).at[wins[0]].set(-3.0)  # last; a won move's completed Q adds ~5 to its logit
  flat = lambda variables, key, state: (jnp.broadcast_to(prior, state.legal_action_mask.shape),
                                        jnp.zeros(state.legal_action_mask.shape[0]), Extras())
  search = make_search_with(env, flat, config, lambda s: s.legal_action_mask, config.num_simulations, "chess")
  states = jax.tree.map(lambda x: x[None], root)
  return search(None, jax.random.split(jax.random.PRNGKey(0), 1), states, noise=False), wins[0]


@pytest.mark.parametrize("simulations, considered, finds_mate", [(16, 16, False), (32, 32, True)])
def test_gumbel_root_sees_a_mate_only_among_the_moves_it_considers(simulations, considered, finds_mate):
  # White mates at once by Ra8 (a back-rank mate) among 20 legal moves, and a flat evaluator ranks that move
  # last in its prior. Gumbel without noise considers the top min(considered, legal) moves of the prior, and
  # with simulations = considered it spends one simulation on each, one ply deep (mctx's sequential halving):
  # 16 of 20 leave the mate unseen, 32 see every move and find it. So the cpu presets' Gumbel 16 over 16
  # searches one ply deep (docs/results/learning, section 12).
  config = SearchConfig(algorithm="gumbel", num_simulations=simulations, max_considered_actions=considered)
  out, mate = _back_rank_mate_search(config)
  visits = np.asarray(root_summary(out)[0])[0]
  assert (visits[mate] > 0) == finds_mate
  assert (int(np.argmax(out.weights[0])) == mate) == finds_mate
  assert (visits > 0).sum() == min(considered, 20)  # the root's breadth: every considered move, once or more


@pytest.mark.parametrize("value_scale, maxvisit_init, plays_mate", [(0.1, 50.0, True), (0.01, 50.0, False),
                                                                    (0.1, 0.0, False)])
def test_gumbel_value_scale_sets_how_far_q_outweighs_the_prior(value_scale, maxvisit_init, plays_mate):
  # The back-rank mate of the test above, 32 simulations over all 20 moves: the search sees Ra8# each time (its
  # Q is +1, the others' 0), and plays it only where (maxvisit_init + most visits) * value_scale * 1 outweighs
  # the prior's 3 logits against it: mctx's defaults do (~5.5), a tenth of the scale or no visit offset does not.
  config = SearchConfig(algorithm="gumbel", num_simulations=32, max_considered_actions=32,
                        gumbel_value_scale=value_scale, gumbel_maxvisit_init=maxvisit_init)
  out, mate = _back_rank_mate_search(config)
  assert np.asarray(root_summary(out)[0])[0, mate] > 0  # seen either way
  assert (int(np.argmax(out.weights[0])) == mate) == plays_mate


@pytest.mark.parametrize("value, prefers", [(-0.8, "shortest"), (0.8, "longest")])
def test_moves_left_utility_prefers_the_shorter_win_and_the_longer_loss(value, prefers):
  # A flat evaluator: every position is worth `value` to its mover (-0.8: each child of the root is a win for
  # the root's mover, Q = +0.8), and its plies left grow with the square the last stone went to. Gumbel with
  # as many simulations as moves visits each root child once, so their Qs tie: without the utility the search
  # keeps the prior's first move; with it, the winner picks the child with the fewest plies left, the loser
  # the one with the most. The backed-up values stay the evaluator's own.
  env = make_env("tictactoe")

  def flat(variables, key, state):
    squares = state.observation.reshape(state.observation.shape[0], 9, -1).sum(-1)  # stones on each square
    plies = 10.0 + (squares * jnp.arange(9.0)).sum(-1)
    return jnp.zeros(state.legal_action_mask.shape), jnp.full(plies.shape, value), Extras(moves_left=plies)

  states = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 2))
  keys = jax.random.split(jax.random.PRNGKey(1), 2)
  plain = SearchConfig(algorithm="gumbel", num_simulations=9, max_considered_actions=9)
  utility = dataclasses.replace(plain, moves_left_slope=0.0027)
  outs = {c.moves_left_slope: make_search_with(env, flat, c, lambda s: s.legal_action_mask, 9, "tictactoe")(
      None, keys, states, noise=False) for c in (plain, utility)}
  assert (np.asarray(root_summary(outs[0.0027])[0]) == 1).all()  # each move once
  np.testing.assert_allclose(outs[0.0].value, outs[0.0027].value)
  np.testing.assert_allclose(np.ptp(np.asarray(outs[0.0].weights), -1), 0.0, atol=1e-6)  # a tie without it
  chosen = np.argmax(np.asarray(outs[0.0027].weights), -1)
  assert (chosen == (0 if prefers == "shortest" else 8)).all(), chosen


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_best_value_is_the_value_of_the_child_the_search_prefers(algorithm):
  # Gumbel with as many simulations as moves visits each root child once, so every child ties on visits; so does
  # PUCT where an unvisited child counts as a win. A flat evaluator worth -s/10 to the mover after a stone on square
  # s: the root player's Q of playing square s is s/10, and the search prefers square 8 (Gumbel's improved policy;
  # PUCT's tie broken by Q). best_value (what q_ratio mixes into the value target) is that child's Q, not the first
  # tied child's (square 0, Q 0), as a plain argmax of the visits gave.
  env = make_env("tictactoe")

  def flat(variables, key, state):
    squares = state.observation.reshape(state.observation.shape[0], 9, -1).sum(-1)  # stones on each square
    return jnp.zeros(state.legal_action_mask.shape), -(squares * jnp.arange(9.0)).sum(-1) / 10, Extras()

  config = SearchConfig(algorithm=algorithm, num_simulations=9, max_considered_actions=9, unvisited_value=1.0)
  out = make_search_with(env, flat, config, lambda s: s.legal_action_mask, 9, "tictactoe")(
      None, jax.random.split(jax.random.PRNGKey(1), 2), batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 2)),
      noise=False)
  visits, q = (np.asarray(x) for x in root_summary(out))
  assert (visits == 1).all()
  np.testing.assert_allclose(q[:, 8], 0.8, rtol=1e-6)
  if algorithm == "gumbel":
    assert (np.argmax(np.asarray(out.weights), -1) == 8).all()
  np.testing.assert_allclose(out.best_value, 0.8, rtol=1e-6)


@pytest.mark.parametrize("play_unvisited", [False, True])
def test_a_gumbel_search_plays_only_a_move_it_visited(play_unvisited):
  # 2 simulations over tic-tac-toe's 9 moves, a flat prior: the root is worth +0.9 to its mover, every position
  # after it +0.5 to the opponent, so both visited moves disappoint (Q -0.5) and the improved policy's completed
  # Q of the 7 unvisited ones, mixed from the root's value, tops them: the greedy move of `weights` is unvisited.
  # A move is drawn from `move_weights`: the visited moves only, greedy or sampled (Gumbel MuZero plays the move
  # its Sequential Halving chose); with search.play_unvisited, from all of `weights`, as before.
  env = make_env("tictactoe")

  def flat(variables, key, state):
    empty = state.observation.reshape(state.observation.shape[0], -1).sum(-1) == 0
    return jnp.zeros(state.legal_action_mask.shape), jnp.where(empty, 0.9, 0.5), Extras()

  config = SearchConfig(algorithm="gumbel", num_simulations=2, max_considered_actions=9,
                        play_unvisited=play_unvisited)
  out = make_search_with(env, flat, config, lambda s: s.legal_action_mask, 2, "tictactoe")(
      None, jax.random.split(jax.random.PRNGKey(1), 2), batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 2)),
      noise=False)
  visited = np.asarray(root_summary(out)[0]) > 0
  assert (visited.sum(-1) == 2).all()
  weights = np.asarray(out.weights)
  assert not visited[np.arange(2), weights.argmax(-1)].any()  # the improved policy's best: never searched
  keys = jax.random.split(jax.random.PRNGKey(2), 400)
  for temperature in (0.0, 1.0):
    moves = np.asarray(jax.vmap(jax.vmap(choose_move, in_axes=(None, 0, None)), in_axes=(0, None, None))(
        keys, out.move_weights, temperature))  # [400 draws, 2 games]
    played_visited = visited[np.arange(2), moves]
    assert played_visited.all() != play_unvisited
  if play_unvisited:
    np.testing.assert_array_equal(out.move_weights, out.weights)
  else:
    np.testing.assert_array_equal(out.move_weights, np.where(visited, weights, 0.0))


def test_the_greedy_move_draws_among_the_most_visited_at_random():
  # Under PUCT at few simulations the most visits often tie; an argmax took the lowest action id among them.
  keys = jax.random.split(jax.random.PRNGKey(0), 2000)
  moves = np.asarray(jax.vmap(choose_move, in_axes=(0, None, None))(keys, jnp.array([0.1, 0.4, 0.1, 0.4]), 0.0))
  assert set(np.unique(moves)) == {1, 3} and 0.45 < np.mean(moves == 1) < 0.55
  assert (np.asarray(jax.vmap(choose_move, in_axes=(0, None, None))(keys, jnp.array([0.1, 0.5, 0.4]), 0.0)) == 1).all()


def test_a_puct_search_plays_the_better_of_equally_visited_moves_as_lc0():
  # PUCT, 2 simulations over tic-tac-toe's empty board: every child is worth less to the root's player than an
  # unvisited one (Q 0), so the two simulations visit two children once each. Their Q differ (the position after
  # a mark on square a is worth 0.2 + 0.05 a to the player to move then): the greedy move is the better of the
  # two, as Lc0's best move and `best_value` take it, not a draw between the two (which played the worse half
  # the time).
  env = make_env("tictactoe")

  def graded(variables, key, state):
    marked = jnp.argmax(state._x.board != -1, axis=-1)
    return jnp.zeros(state.legal_action_mask.shape), 0.2 + 0.05 * marked, Extras()

  config = SearchConfig(algorithm="puct", num_simulations=2)
  search = make_search_with(env, graded, config, lambda s: s.legal_action_mask, 2, "tictactoe")
  root = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 1))
  for seed in range(4):
    out = search(None, jax.random.split(jax.random.PRNGKey(seed), 1), root, noise=False)
    visits, q = (np.asarray(x)[0] for x in root_summary(out))
    visited = np.flatnonzero(visits)
    assert len(visited) == 2 and len(set(q[visited])) == 2
    better = visited[np.argmax(q[visited])]
    np.testing.assert_allclose(out.best_value[0], q[better], rtol=1e-6)
    keys = jax.random.split(jax.random.PRNGKey(seed), 200)
    moves = np.asarray(jax.vmap(choose_move, in_axes=(0, None, None, None))(keys, out.move_weights[0], 0.0,
                                                                             out.move_rank[0]))
    assert (moves == better).all(), (visited, q[visited], np.bincount(moves))
    assert np.argsort(-np.asarray(out.move_rank[0]))[:2].tolist() == [better, *set(visited) - {better}]


@pytest.mark.parametrize("fen", ["6k1/8/3p4/8/4N3/8/8/6K1 w - - 0 1", "6k1/8/8/4n3/8/3P4/8/6K1 b - - 0 1"])
@pytest.mark.parametrize("draw_value, takes", [(0.0, True), (-0.5, False)])
def test_a_draw_value_below_the_positions_value_keeps_the_root_player_out_of_a_draw(fen, draw_value, takes):
  # The knight can take the last pawn, and K+N against K is a draw by insufficient material. The evaluator
  # scores every position -0.3 for the root's player (+0.3 for the other), so every other move is worth -0.3 to
  # it however deep the tree reads: the draw (0) is its best move, unless a draw is worth -0.5 to it. With
  # either colour to move: the draw value is the root player's, not White's.
  from azjax.engines import pgx_private
  env = make_env("chess")
  root = pgx_private.from_fen(fen)
  legal = np.flatnonzero(np.asarray(root.legal_action_mask))
  after = jax.jit(jax.vmap(env.step, in_axes=(None, 0)))(root, jnp.asarray(legal, jnp.int32))
  draws = legal[np.asarray(after.terminated) & (np.asarray(after.rewards).sum(-1) == 0)]
  assert len(draws) == 1  # Nxp, the only move that ends the game
  me = root.current_player
  flat = lambda variables, key, state: (jnp.zeros(state.legal_action_mask.shape),
                                        jnp.where(state.current_player == me, -0.3, 0.3), Extras())
  config = SearchConfig(algorithm="gumbel", num_simulations=32, max_considered_actions=32, draw_value=draw_value)
  out = make_search_with(env, flat, config, lambda s: s.legal_action_mask, 32, "chess")(
      None, jax.random.split(jax.random.PRNGKey(0), 1), jax.tree.map(lambda x: x[None], root), noise=False)
  assert (int(np.argmax(out.weights[0])) == draws[0]) == takes
  q = np.asarray(root_summary(out)[1])[0]
  np.testing.assert_allclose(q[draws[0]], draw_value, atol=1e-6)  # the draw's own value, the root player's


def _line_search(prefix, line, twofold_draw, simulations=32):
  """The search of the chess position after `prefix` (UCI moves), its prior all but certain of `line`'s move at each
  depth below the root and its values flat (-0.4 for the root's player): the tree's edge discounts along
  `line`, 0 where a move ended its branch."""
  from azjax.engines.positions import ChessPosition
  position = ChessPosition()
  for move in prefix:
    position.play(move)
  root, actions = position.state, []
  for move in line:
    actions.append(position.action_of(move))
    position.play(move)
  me, line_actions = root.current_player, jnp.asarray(actions + [0])

  def flat(variables, key, state):  # the line's next move, by the plies below the root
    depth = jnp.minimum(state._step_count - root._step_count, len(actions))
    forced = jax.nn.one_hot(line_actions[depth], position.num_actions) * (depth < len(actions))[:, None]
    return 20.0 * forced, jnp.where(state.current_player == me, -0.4, 0.4), Extras()

  config = SearchConfig(algorithm="gumbel", num_simulations=simulations, max_considered_actions=1,
                        compact_tree="off", twofold_draw=twofold_draw)
  out = make_search_with(make_env("chess"), flat, config, lambda s: s.legal_action_mask, simulations, "chess")(
      None, jax.random.split(jax.random.PRNGKey(0), 1), jax.tree.map(lambda x: x[None], root), noise=False)
  index, discounts = (np.asarray(x)[0, 0] for x in (out.tree.children_index, out.tree.children_discounts))
  node, along = 0, []
  for action in actions:
    along.append(float(discounts[node, action]))
    node = int(index[node, action])
    assert node >= 0, "the search did not follow the line"
  return along


@pytest.mark.parametrize("twofold_draw", [False, True])
def test_twofold_draw_ends_a_branch_only_where_the_cycle_lies_in_the_tree_4_plies_deep_as_lc0(twofold_draw):
  # Lc0 scores a repetition's second occurrence a draw inside its tree only where the cycle lies wholly inside it
  # and 4 or more plies below the root (SearchWorker::GetRepetitions): a position first seen before the root is
  # the game's second occurrence of it, and play goes on. pgx ends a game at the third (threefold).
  moving, ended = -1.0, 0.0 if twofold_draw else -1.0
  # From the start, 1. Nf3 Nf6 2. Ng1 Ng8 brings the initial position back 4 plies down: a cycle inside the tree.
  assert _line_search([], ["g1f3", "g8f6", "f3g1", "f6g8"], twofold_draw) == [moving] * 3 + [ended]
  # After 1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3, Black's Nf6 repeats the position after 1... Nf6 one ply down: the cycle
  # began before the root. So did the initial position's, back after 1. Nf3 Nc6 2. Ng1 Nb8, 3 plies down.
  assert _line_search(["g1f3", "g8f6", "f3g1", "f6g8", "g1f3"], ["g8f6"], twofold_draw) == [moving]
  assert _line_search(["g1f3"], ["b8c6", "f3g1", "c6b8"], twofold_draw) == [moving] * 3
  # An 8-ply cycle (1. Nf3 Nf6 2. Nc3 Nc6 3. Ng1 Ng8 4. Nb1 Nb8) closed 4 plies down: deep enough, but it began
  # before the root. From the start the same cycle closes 8 plies down, wholly inside the tree.
  cycle = ["g1f3", "g8f6", "b1c3", "b8c6", "f3g1", "f6g8", "c3b1", "c6b8"]
  assert _line_search(cycle[:4], cycle[4:], twofold_draw) == [moving] * 4
  assert _line_search([], cycle, twofold_draw, simulations=48) == [moving] * 7 + [ended]


def test_black_margin_is_the_sign_of_pgx_s_result_and_reads_a_lead_from_the_movers_view():
  # Random go9 games to their end (pgx's Tromp-Taylor count with komi, or its length cap): black's margin has the
  # sign of black's reward, and the same margin comes back from the area lead seen by the player to move.
  env = make_env("go9")
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 8))
  step, rewards = batched_step(env), 0.0  # pgx gives the result once, on the game's last step
  for key in jax.random.split(jax.random.PRNGKey(1), 200):
    logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf).at[:, -1].add(-3.0)  # pass now and then
    state = step(state, jax.vmap(jax.random.categorical)(jax.random.split(key, 8), logits))
    rewards = rewards + np.asarray(state.rewards)
  assert np.asarray(state.terminated).all()
  margin = np.asarray(rules.black_margin(state, 9))
  player, colour = np.asarray(state.current_player), np.asarray(state._x.color)
  black = np.where(colour == 0, player, 1 - player)
  assert (np.sign(margin) == rewards[np.arange(8), black]).all(), (margin, rewards)
  area = jax.vmap(lambda board: rules.area_ownership(board, 9).sum())(state._x.board)
  lead = jnp.where(state._x.color == 0, area, -area)  # the mover's view
  np.testing.assert_allclose(rules.black_margin(state, 9, lead), margin)


@pytest.mark.parametrize("utility", [0.0, 0.3])
def test_score_utility_takes_the_points_where_the_value_is_flat(utility):
  # Black to move can capture a white stone in atari (E6 takes E5), and white has just passed. The evaluator
  # calls every position even (value 0) and knows the board's area lead exactly. Without the score utility every
  # move ties and Gumbel keeps the prior's first; with KataGo's, the capture (3 points: the stone, its point
  # and the capturing stone) beats every other move (1 point). Passing ends the game lost (3 stones against 2,
  # komi 7.5): its Q is the loss plus the utility of the final margin, for black.
  env = make_env("go9")
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 1))
  step = batched_step(env)
  for action in (39, 40, 49, 80, 41, 81):  # B D5, W E5, B E4, W J1, B F5, W pass
    state = step(state, jnp.array([action]))

  def even(variables, key, s):  # the mover's exact area lead, no preference, no value
    area = jax.vmap(lambda board: rules.area_ownership(board, 9).sum())(s._x.board)
    return (jnp.zeros(s.legal_action_mask.shape), jnp.zeros(area.shape),
            Extras(lead=jnp.where(s._x.color == 0, area, -area)))

  legal = int(state.legal_action_mask.sum())
  config = SearchConfig(algorithm="gumbel", num_simulations=legal, max_considered_actions=legal,
                        score_utility=utility, score_utility_static=utility / 3)
  out = make_search_with(env, even, config, lambda s: s.legal_action_mask, legal, "go9")(
      None, jax.random.split(jax.random.PRNGKey(1), 1), state, noise=False)
  chosen = int(np.argmax(out.weights[0]))
  assert (chosen == 31) == bool(utility), chosen  # E6
  q = np.asarray(root_summary(out)[1])[0]
  center = score_center(jnp.array([3.0 - 2.0 - rules.GO_KOMI]), 9)
  final = score_utility(jnp.array([3.0 - 2.0 - rules.GO_KOMI]), center, 9, config)
  np.testing.assert_allclose(q[81], -1.0 + float(final[0]), atol=1e-5)
  if utility:
    assert q[31] > q[0] > q[81]


def test_gumbel_muzeros_own_move_is_its_halvings_winner_a_sample_in_self_play_the_best_at_play():
  # search.gumbel_act=halving: the move is mctx's Sequential Halving winner, argmax of g + logits + sigma(q) over
  # the most visited considered moves. Without noise (play) that is the improved policy's best among them; with
  # self-play's Gumbel noise a draw that differs between keys, always among the most visited moves.
  env, net, _, variables, _ = _setup("connect_four")
  state = _positions(env, 1, 6)
  config = SearchConfig(algorithm="gumbel", num_simulations=12, max_considered_actions=4, gumbel_act="halving")
  search = make_search(env, net, config, "connect_four")
  for noise, draws in ((False, 1), (True, 32)):
    copies = jax.tree.map(lambda x: jnp.repeat(x, draws, 0), state)  # one position, searched with `draws` keys
    out = search(variables, jax.random.split(jax.random.PRNGKey(3), draws), copies, noise=noise)
    visits = np.asarray(root_summary(out)[0])  # [draws, A]
    move_weights, weights = np.asarray(out.move_weights), np.asarray(out.weights)
    np.testing.assert_array_equal(move_weights.sum(-1), 1.0)
    moves = move_weights.argmax(-1)
    most = visits == visits.max(-1, keepdims=True)
    assert most[np.arange(draws), moves].all()
    if noise:
      assert len(set(moves.tolist())) > 1  # a sample, not one move
    else:
      assert moves[0] == np.where(most[0], weights[0], -np.inf).argmax()


def test_halving_under_puct_is_refused_where_the_search_is_built():
  # A SearchConfig built by hand skips Config's validation; the search names the fault instead of failing inside.
  env, net, _, _, config = _setup("tictactoe", algorithm="puct", gumbel_act="halving")
  with pytest.raises(ValueError, match="gumbel_act=halving.*puct"):
    make_search(env, net, config, "tictactoe")
