"""Monte-Carlo tree search with mctx over pgx states.

The embedding of a node is the pgx State itself, so the tree is exact: the
recurrent function steps the real game. The tree keeps every node's embedding,
so it keeps them lean: without the observation (two thirds of a chess State),
which pgx computes anew each time it steps into a node, where the network reads
it. Illegal moves are masked at every node (mctx masks only the root).
Two-player zero-sum: the reward is the mover's, discount -1 flips the value to
the other player, and 0 at terminal states.

The compact tree (`search.compact_tree`, `tree_width`): mctx keeps six
[simulations + 1, children] arrays and does its bookkeeping over every child at
every node, and a node's children are the whole action space (chess 4,672) where
a position has at most 218 legal moves. So each node's children are its legal
moves instead, in increasing action id, padded to the game's most (K); its
embedding (`Node`) keeps their action ids to step the game, and the search's
weights are scattered back to [A] once at the end. Without root noise it
searches exactly as the full tree does; its noise has the same law over the
legal moves (tests/test_search.py).

Lc0's moves-left utility (`search.moves_left_slope`, with a network's moves-left head): every node's
embedding keeps the head's plies left, and the Q-values each node selects by (`qtransform`) favour the
child nearer a win's end and farther from a loss's (`moves_left_utility`). The values backed up stay the
network's.

KataGo's score utility (`search.score_utility`, `score_utility_static`, Go with an ownership head): a
node's value gains a bounded function of the expected final margin, read off the ownership head (exact at a
game's end), so that in a won or lost position, where the value is flat, the search still prefers the moves
that keep more points (`score_utility`). The network still learns the games' outcomes.

Search is written for one game and vmapped over games, so each game draws its
own Dirichlet and Gumbel noise from its own key: the result does not depend on
how the games are split over devices.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import chex
import jax
import jax.numpy as jnp
import mctx
import pgx

from azjax import backup, rules, symmetry
from azjax.config import COMPACT_TREES, SearchConfig
from azjax.games import batched_step, spec
from azjax.network import Network

Variables = tuple[Any, Any]  # (params, bn_state)

# With its region analysis, XLA:CPU's copy insertion sees that a simulation reads the tree before it writes the
# new node, and writes it in place. Without it, a one-game search copied every node array whole on each simulation,
# so its cost grew with the square of its simulations (a 2,048-simulation chess search took 6.7x as long, even with
# packed nodes: docs/results/bench/deep_search.md).
CPU_COMPILER_OPTIONS = {"xla_cpu_copy_insertion_use_region_analysis": True}


def compiler_options() -> dict | None:
  """jit's compiler options for every top-level program that searches (the arena's, agents' and engines' through
  arena.jitted, the train step; jax takes them only there): CPU_COMPILER_OPTIONS on CPU, else XLA's own."""
  return CPU_COMPILER_OPTIONS if jax.default_backend() == "cpu" else None


class Extras(NamedTuple):
  """What a search may read from an evaluator besides logits and value: each [B], or None if it has none."""
  moves_left: chex.Array | None = None  # the plies left to the end (a moves-left head)
  lead: chex.Array | None = None  # the player to move's expected area lead at the end (Go, an ownership head)


# evaluate(variables, key, states [B]) -> (logits [B, A], value [B], Extras): the network, or pure MCTS's rollouts
# (no extras).
Evaluate = Callable[[Any, chex.PRNGKey, pgx.State], tuple[chex.Array, chex.Array, Extras]]
LegalMoves = Callable[[pgx.State], chex.Array]  # states [B] -> [B, A] bool (rules.make_legal_moves)
masked_logits = rules.masked_logits


@chex.dataclass(frozen=True)
class SearchOutput:
  weights: chex.Array  # [B, A] visit distribution (PUCT) or improved policy (Gumbel): the policy target
  move_weights: chex.Array  # [B, A] what a move is drawn from: `weights` on the visited moves (search.play_unvisited),
  # or Gumbel MuZero's move alone (search.gumbel_act)
  move_rank: chex.Array  # [B, A] the order a greedy player takes the moves in, highest first (`choose_move`; the
  # engines go down it where a referee refuses a move): PUCT's most visited, ties broken by Q as Lc0's best move
  # (`preferred_child`, `best_value`'s); Gumbel's `move_weights`; under halving its winner, then the improved policy
  value: chex.Array  # [B] root value after search, for the player to move (with a score utility, its utility)
  prior_value: chex.Array  # [B] the evaluator's value of the root before search
  best_value: chex.Array  # [B] the value of the root's preferred child (`preferred_child`), for the player to move
  prior_logits: chex.Array  # [B, A] the evaluator's logits at the root, before noise and masking
  legal: chex.Array  # [B, A] bool the moves the search considered (rules.make_legal_moves)
  tree: Any  # mctx.Tree with a leading [B, 1] batch (for inspection); its root's children are `actions`
  actions: chex.Array  # [B, K] int32 the action of each root child: the legal moves (compact tree) or all A


@chex.dataclass(frozen=True)
class Node:
  """A node's embedding: the lean state, the action each child plays (a compact tree's), the plies left."""
  state: pgx.State  # [B] lean
  actions: chex.Array | None = None  # [B, K] int32 (legal_actions) in a compact tree, else None
  moves_left: chex.Array | None = None  # [B] the head's plies left (0 at a game's end) with the utility, else None
  root_player: chex.Array | None = None  # [B] the player to move at the search's root, with a draw value, else None
  score_center: chex.Array | None = None  # [B] the score utility's centre (black's margin), with one, else None
  root_ply: chex.Array | None = None  # [B] pgx's ply count at the search's root, with a two-fold draw, else None


def tree_width(config: SearchConfig, game: str, num_actions: int) -> int:
  """K, the children of a compact tree's node (the game's most legal moves, else its actions), or 0: the full tree.

  `auto` builds the compact tree where that bound is at most half the action count: chess (218 of 4,672) and
  shogi (593 of 2,187), whose trees shrink 21x and 3.7x. In Go and the small games nearly every action can be
  legal, so the compact tree would only add its gathers; `on` builds it there all the same (K = A)."""
  if config.compact_tree not in COMPACT_TREES:
    raise ValueError(f"compact_tree={config.compact_tree!r}: one of {', '.join(COMPACT_TREES)}")
  width = spec(game).max_legal_moves or num_actions
  on = config.compact_tree == "on" or (config.compact_tree == "auto" and 2 * width <= num_actions)
  return width if on else 0


def legal_actions(legal: chex.Array, width: int) -> chex.Array:
  """_unbatched_ [K] int32: the moves of `legal` [A] in increasing id, padded with the first move not in it.

  A padding child is masked like an illegal move of the full tree, and played it is one: were a simulation
  to pick one (mctx masks only the root), both trees would step pgx alike.

  The same as `jnp.nonzero(legal, size=K, fill_value=argmin(legal))`, which XLA:CPU builds from a cumulative sum
  over all A actions and a scatter: 1.9 ms of each simulation's 64 chess nodes, a quarter of the search's own
  cost (docs/results/bench/chess_rest). Here the mask is packed 32 moves to a word, and the k-th move is found by
  a binary search over the words' running counts, then a binary search over the bits of its word."""
  actions = legal.shape[0]
  words = -(-actions // 32)
  bits = jnp.pad(legal, (0, words * 32 - actions)).reshape(words, 32).astype(jnp.uint32)
  word = (bits << jnp.arange(32, dtype=jnp.uint32)[None]).sum(-1, dtype=jnp.uint32)  # distinct bits: the sum is the or
  count = jax.lax.population_count(word).astype(jnp.int32)
  upto = jnp.cumsum(count)  # moves in words 0..w
  k = jnp.arange(width, dtype=jnp.int32)
  w = jnp.minimum(jnp.searchsorted(upto, k, side="right", method="scan"), words - 1)  # the word of move k
  rank = k - (upto - count)[w]  # move k's rank inside its word: k less the moves in the words before it
  bits_left, position = word[w], jnp.zeros_like(k)
  for half in (16, 8, 4, 2, 1):  # into the half of the word (low or high) that holds that rank
    low = jax.lax.population_count(bits_left & jnp.uint32((1 << half) - 1)).astype(jnp.int32)
    high = rank >= low
    rank, position = jnp.where(high, rank - low, rank), jnp.where(high, position + half, position)
    bits_left = jnp.where(high, bits_left >> half, bits_left)
  return jnp.where(k < upto[-1], w * 32 + position, jnp.argmin(legal)).astype(jnp.int32)


def children(legal: chex.Array, width: int) -> chex.Array:
  """[B, K] int32 the children of compact nodes with legal moves `legal` [B, A] (legal_actions)."""
  return jax.vmap(legal_actions, in_axes=(0, None))(legal, width)


def gather(x: chex.Array, actions: chex.Array) -> chex.Array:
  """[B, K]: `x` [B, A] at the children `actions` [B, K]."""
  return jnp.take_along_axis(x, actions, axis=-1)


def scatter(values: chex.Array, actions: chex.Array, num_actions: int) -> chex.Array:
  """[B, A]: `values` [B, K] of the root children `actions` [B, K] put at their actions, 0 elsewhere (the
  padding adds its zeros to an illegal move)."""
  return jax.vmap(lambda v, a: jnp.zeros((num_actions,), v.dtype).at[a].add(v))(values, actions)


def preferred_child(visits: chex.Array, tie_break: chex.Array) -> chex.Array:
  """[] int32 the root child a search prefers: the most visited, ties broken by `tie_break` (Gumbel: the improved
  policy's weight; PUCT, whose weights are the visits themselves: Q, as Lc0 breaks them).

  Lc0's best move (its q_ratio's "best_q"). Ties are the rule, not the exception, in a Gumbel search with as many
  simulations as moves considered (the cpu presets' 16 over 16, and the 4-simulation fast search): sequential
  halving visits each child once, and a plain argmax of the visits took the first child in the tree's order, the
  lowest-numbered legal move, whatever its value. Gumbel's improved policy ranks those children by prior and Q, as
  its own choice of move does."""
  most = visits == visits.max()
  return jnp.argmax(jnp.where(most, tie_break, -jnp.inf)).astype(jnp.int32)


def root_summary(out: SearchOutput) -> tuple[chex.Array, chex.Array]:
  """(visits [B, A], q [B, A]) of each move at the root, for the player to move, whichever tree searched."""
  summary = jax.vmap(lambda tree: tree.summary())(out.tree)  # each game's tree has a batch of one
  num_actions = out.weights.shape[-1]
  return (scatter(summary.visit_counts[:, 0], out.actions, num_actions),
          scatter(summary.qvalues[:, 0], out.actions, num_actions))


def dirichlet_alpha(config: SearchConfig, game: str) -> float:
  """The root noise alpha: the config's if set, else the game's (AlphaZero Methods)."""
  return config.dirichlet_alpha if config.dirichlet_alpha > 0 else spec(game).dirichlet_alpha


def log_gamma(key: chex.PRNGKey, alpha: float, shape: tuple, candidates: int = 4) -> chex.Array:
  """log X, X ~ Gamma(alpha), as `jax.random.loggamma`, in a few wide draws instead of its loop per sample.

  Marsaglia and Tsang (2000) for Gamma(a >= 1), `candidates` proposals per sample at once, the first accepted
  kept (each is accepted with probability above 0.95); a sample with none accepted draws again, in a loop that runs
  only then. alpha < 1 as Gamma(alpha + 1) U^(1 / alpha), in logs. jax's own draws each sample's proposals one at a
  time: 5-8 ms for a 64-game chess root's [64, 218], against 1.5 ms here (docs/results/bench/ratios_2x32)."""
  a = alpha + 1.0 if alpha < 1 else alpha
  d = a - 1.0 / 3.0
  c = (9.0 * d) ** -0.5

  def propose(key):  # (any accepted, log X of the first accepted) per sample
    normal_key, uniform_key = jax.random.split(key)
    x = jax.random.normal(normal_key, (*shape, candidates))
    v = (1.0 + c * x) ** 3
    log_v = jnp.log(jnp.where(v > 0, v, 1.0))
    accepted = (v > 0) & (jnp.log(jax.random.uniform(uniform_key, x.shape)) < 0.5 * x * x + d - d * v + d * log_v)
    first = jnp.take_along_axis(log_v, jnp.argmax(accepted, axis=-1)[..., None], axis=-1)[..., 0]
    return accepted.any(-1), jnp.log(d) + first

  def again(carry):  # fresh proposals for the samples with none accepted yet
    key, done, logs = carry
    key, now = jax.random.split(key)
    accepted, new = propose(now)
    return key, done | accepted, jnp.where(done, logs, new)

  key, boost_key, first_key = jax.random.split(key, 3)
  _, _, logs = jax.lax.while_loop(lambda carry: ~carry[1].all(), again, (key, *propose(first_key)))
  if alpha < 1:
    logs = logs + jnp.log(jax.random.uniform(boost_key, shape)) / alpha
  return logs


def with_dirichlet_noise(key: chex.PRNGKey, logits: chex.Array, legal: chex.Array, alpha: float,
                         fraction: float) -> chex.Array:
  """_unbatched_ masked logits [N] of (1 - fraction) p + fraction eta, eta ~ Dir(alpha) over the legal moves.

  The AlphaZero root noise, over a node's children [N] (A, or K in a compact tree). mctx's own draws
  Dir(alpha) over all children and the masking renormalises away what falls on illegal ones: in a full
  chess tree at a position of 35 legal moves 99% of it, leaving the prior 0.25% noise instead of 25%.
  Log-gammas, as Gamma(0.03) underflows in float32."""
  eta = jax.nn.softmax(masked_logits(log_gamma(key, alpha, legal.shape), legal))
  probs = (1.0 - fraction) * jax.nn.softmax(masked_logits(logits, legal)) + fraction * eta
  return masked_logits(jnp.log(probs), legal)


def qtransform_with_unvisited(tree: mctx.Tree, node_index, *, unvisited_value: float) -> chex.Array:
  """_unbatched_ Q-values mapped from [-1, 1] to [0, 1], an unvisited child counting as `unvisited_value`.

  AlphaGo Zero (Methods, "Expand and evaluate") initialises Q(s, a) = 0: a draw
  on the [-1, 1] scale. The AlphaZero pseudocode scores unvisited children as
  losses (-1). `search.unvisited_value` picks either.
  """
  q = jnp.where(tree.children_visits[node_index] > 0, tree.qvalues(node_index), unvisited_value)
  return (q + 1.0) / 2.0


# Lc0's moves-left utility's weight by |Q| (src/search/classic/search.cc, MEvaluator; its default factors
# MovesLeftConstantFactor 0, ScaledFactor 1.6521, QuadraticFactor -0.6521): 0 at an even Q, 1 at a sure result.
MOVES_LEFT_FACTORS = (0.0, 1.6521, -0.6521)


def moves_left_utility(tree: mctx.Tree, node_index, *, slope: float, max_effect: float,
                       threshold: float) -> chex.Array:
  """_unbatched_ [children] Lc0's moves-left utility of each child of `node_index`, on Q's [-1, 1] scale.

  clip(slope * (M_child - M_parent), +-max_effect), signed to favour the shorter of two winning children and
  the longer of two losing ones, weighted by |Q| (its part above `threshold`, rescaled, as Lc0 does). 0 for
  unvisited children (Lc0's default), and everywhere when the node's own |value| is not above `threshold`.
  M is the network's plies left at each node (Lc0 averages it over the subtree, as Q)."""
  q = tree.qvalues(node_index)
  children = tree.children_index[node_index]
  moves_left = tree.embeddings.moves_left
  effect = jnp.clip(slope * (moves_left[jnp.maximum(children, 0)] - moves_left[node_index]), -max_effect, max_effect)
  a = jnp.abs(q)
  if 0.0 < threshold < 1.0:
    a = jnp.maximum(a - threshold, 0.0) / (1.0 - threshold)
  c0, c1, c2 = MOVES_LEFT_FACTORS
  utility = -jnp.sign(q) * effect * (c0 + c1 * a + c2 * a * a)
  within = jnp.abs(tree.node_values[node_index]) > threshold
  return jnp.where(within & (children != mctx.Tree.UNVISITED), utility, 0.0)


def with_moves_left_utility(qtransform, config: SearchConfig):
  """`qtransform` seeing each child's Q plus its `moves_left_utility` (the tree's values themselves unchanged)."""

  def transformed(tree: mctx.Tree, node_index) -> chex.Array:
    utility = moves_left_utility(tree, node_index, slope=config.moves_left_slope,
                                 max_effect=config.moves_left_max_effect, threshold=config.moves_left_threshold)
    # Q = discount * value + reward per child: adding to the node's rewards adds to its children's Q alone.
    return qtransform(tree.replace(children_rewards=tree.children_rewards.at[node_index].add(utility)), node_index)

  return transformed


# KataGo's score utility (Wu 2019, arXiv:1902.10565, its score maximisation; the code: cpp/neuralnet/nninputs.cpp
# ScoreValue::expectedWhiteScoreValue, cpp/search/search.cpp recentScoreCenter). For a final margin s
# in points, on a board of area A: static * f(s / (2 sqrt A)) + dynamic * f((s - c) / (0.75 sqrt A)), f(x) =
# (2 / pi) atan(x), where c, the root's expected margin pulled 20% toward 0 (by at most 0.75 sqrt A), centres the
# dynamic part where the game stands. KataGo's GTP defaults (cpp/configs/gtp_example.cfg): static 0.1, dynamic 0.3,
# centre zero weight 0.2, centre scale 0.75; its 9x9 self-play (selfplay1_maxsize9.cfg): 0, 0.4, 0.25, 0.5.
# Deviation: KataGo averages f over its score head's predicted distribution; here s is the point estimate that the
# ownership head gives (the sum of each point's expected owner, minus komi).
SCORE_STATIC_SCALE = 2.0
SCORE_CENTER_ZERO_WEIGHT = 0.2
SCORE_CENTER_SCALE = 0.75


def score_center(margin: chex.Array, size: int) -> chex.Array:
  """[B] the dynamic score utility's centre from the root's expected margin [B] (either player's view)."""
  cap = SCORE_CENTER_SCALE * size
  return jnp.clip(margin * (1.0 - SCORE_CENTER_ZERO_WEIGHT), margin - cap, margin + cap)


def score_utility(margin: chex.Array, center: chex.Array, size: int, config: SearchConfig) -> chex.Array:
  """[B] KataGo's score utility of the final `margin` [B] (points) for the player whose margin it is, `center`
  [B] in the same view, on a `size` x `size` board: odd in (margin, center), so the other player's is minus it."""
  f = lambda x: (2.0 / jnp.pi) * jnp.arctan(x)
  return (config.score_utility_static * f(margin / (SCORE_STATIC_SCALE * size))
          + config.score_utility * f((margin - center) / (SCORE_CENTER_SCALE * size)))


def black_score_utility(config: SearchConfig, size: int):
  """`utility(states [B], lead [B], center [B]) -> [B]`: black's score utility at each Go state, of its board's
  margin where the game ended, else of the margin the mover's expected `lead` predicts (`center`: black's)."""

  def utility(state, lead, center):
    done = state.terminated | state.truncated
    margin = jnp.where(done, rules.black_margin(state, size), rules.black_margin(state, size, lead))
    return score_utility(margin, center, size, config)

  return utility


def for_colour(utility: chex.Array, colour: chex.Array) -> chex.Array:
  """[B] black's `utility` [B] for the player of pgx Go's `colour` [B] (0 black)."""
  return jnp.where(colour == 0, utility, -utility)


def choose_move(key: chex.PRNGKey, weights: chex.Array, temperature: chex.Array,
                rank: chex.Array | None = None) -> chex.Array:
  """_unbatched_: a move drawn in proportion to the search policy `weights` [A] raised to 1 / `temperature`,
  or the greedy move at temperature 0: the highest of `rank` [A] (`SearchOutput.move_rank`: the most visited, ties
  by Q, under PUCT; the improved policy's best under Gumbel), else of `weights`, a tie drawn at random. The one
  move choice of self-play (by ply), agents and engines. (Under search.gumbel_act=halving the weights are one
  move's: it is chosen at any temperature.)

  Ties are common under PUCT at few simulations (an unvisited child's Q of 0 spreads a losing side's visits
  thin), and an argmax took the lowest action id among them: Go's upper left, whatever the values."""
  t = jnp.asarray(temperature, jnp.float32)
  sampled = jax.random.categorical(key, jnp.log(weights) / jnp.maximum(t, 1e-6))
  rank = weights if rank is None else rank
  greedy = jax.random.categorical(jax.random.fold_in(key, 1), jnp.where(rank == rank.max(), 0.0, -jnp.inf))
  return jnp.where(t > 0, sampled, greedy).astype(jnp.int32)


def network_evaluator(network: Network):
  """`evaluate(variables, key, states) -> (logits [B, A], value [B], Extras)` of the network (the key is unused):
  the moves-left head's plies, and the ownership head's expected area lead, sum(2 sigmoid - 1) over the points
  (None without the head; XLA drops what a search does not read)."""

  def evaluate(variables, key, state):
    del key
    params, bn_state = variables
    heads, _ = network.apply_heads(params, bn_state, state.observation, False)
    lead = None if heads.ownership is None else jnp.tanh(heads.ownership / 2.0).sum(-1)
    return heads.logits, heads.value, Extras(moves_left=heads.moves_left, lead=lead)

  return evaluate


def never_masked(qtransform):
  """`qtransform` with every masked child (its prior logit `masked_logits`' lowest value) at -inf.

  mctx masks the invalid actions at the root only; below it PUCT keeps a masked child out by its prior of 0 alone.
  An unvisited child scores `unvisited_value` (AlphaGo Zero's Q = 0, a half after the transform), so where every
  legal child of a node had scored worse than that, PUCT went into the masked ones: Go's forbidden passes and eye
  fills, occupied points (which pgx scores as a loss for the mover), the compact tree's padding. Gumbel's
  interior selection never picks a child of prior 0 and no visits, so it needs none of this."""

  def transformed(tree: mctx.Tree, node_index) -> chex.Array:
    logits = tree.children_prior_logits[node_index]
    return jnp.where(logits == jnp.finfo(logits.dtype).min, -jnp.inf, qtransform(tree, node_index))

  return transformed


def puct_tree(variables, key: chex.PRNGKey, root: mctx.RootFnOutput, recurrent_fn: mctx.RecurrentFn,
              num_simulations: int, invalid: chex.Array, qtransform, c_init: float, c_base: float) -> mctx.Tree:
  """The tree of `mctx.muzero_policy(..., dirichlet_fraction=0.0)` with `never_masked`'s Q, bit for bit, without
  drawing its noise.

  muzero_policy draws Dir(alpha) over every child before weighting it 0: a batched rejection loop of 5.3 ms a
  ply for 64 chess roots, 2% of the ply (docs/results/bench/ratios_2x32). The root noise here is
  with_dirichlet_noise's, drawn over the legal moves only. What remains is muzero_policy's own: the prior as
  log(softmax) floored at the smallest normal float, shifted to a maximum of 0, the invalid children at the
  smallest float (finite: a root with no legal move makes no NaN), and PUCT (pb_c_init, pb_c_base) at every node,
  where the masked children are never selected (`never_masked`). One difference from the AlphaZero pseudocode
  stays, mctx's: a node's own evaluation counts as one of its visits, so at the root N is 1 + the children's
  visits where the pseudocode's is their sum (the exploration term's sqrt(N) and c(N) one visit ahead; the same
  at every interior node in both)."""
  _, _, search_key = jax.random.split(key, 3)  # the key muzero_policy gives mctx.search
  logits = jnp.log(jnp.maximum(jax.nn.softmax(root.prior_logits), jnp.finfo(root.prior_logits.dtype).tiny))
  logits = logits - logits.max(axis=-1, keepdims=True)
  root = root.replace(prior_logits=jnp.where(invalid, jnp.finfo(logits.dtype).min, logits))
  select = functools.partial(mctx.muzero_action_selection, pb_c_base=c_base, pb_c_init=c_init,
                             qtransform=never_masked(qtransform))
  return mctx.search(variables, search_key, root=root, recurrent_fn=recurrent_fn,
                     root_action_selection_fn=functools.partial(select, depth=0), interior_action_selection_fn=select,
                     num_simulations=num_simulations, invalid_actions=invalid)


def _with_masks(state: pgx.State, f) -> pgx.State:
  """`state` with `f` applied to its legal-move masks (pgx's chess and shogi keep a second in the game state)."""
  state = state.replace(legal_action_mask=f(state.legal_action_mask))
  if hasattr(state._x, "legal_action_mask"):  # noqa: SLF001
    state = state.replace(_x=state._x._replace(legal_action_mask=f(state._x.legal_action_mask)))  # noqa: SLF001
  return state


def lean(state: pgx.State) -> pgx.State:
  """What the tree stores per node: the state without its observation (an empty [B, 0] array) and with its legal
  moves packed eight to a byte (`unlean` restores them). Unpacked, the [A] masks (pgx keeps two) are 9.3 KB of a
  chess node's 15.8 (docs/results/bench/deep_search.md)."""
  state = state.replace(observation=jnp.zeros((state.observation.shape[0], 0), state.observation.dtype))
  return _with_masks(state, lambda mask: jnp.packbits(mask, axis=-1))


def unlean(state: pgx.State, num_actions: int) -> pgx.State:
  """The stored state as pgx steps it: its legal-move masks unpacked (the observation pgx computes anew)."""
  return _with_masks(state, lambda packed: jnp.unpackbits(packed, axis=-1, count=num_actions).astype(bool))


def make_recurrent_fn(env: pgx.Env, evaluate: Evaluate, legal_moves: LegalMoves, width: int = 0,
                      discount: float = 1.0, moves_left: bool = False, draw_value: float = 0.0,
                      utility: Callable | None = None, twofold_draw: bool = False) -> mctx.RecurrentFn:
  """The one adapter from pgx to mctx: steps the game, evaluates the child, masks its illegal moves.

  A branch ends where a game ends, `terminated | truncated`, as in self-play: pgx zeroes the rewards
  of a truncated game, so the search scores it a draw, as self-play's value target does. With `width`
  K > 0 the tree is compact: mctx's actions index the parent's `Node.actions`, and the child's priors
  are those of its own legal moves. `discount` (search.discount) shrinks each ply's value on the way up.
  With `moves_left`, each node keeps the evaluator's plies left (0 where the game ended). A `draw_value` d
  (search.draw_value) scores a drawn end d for the root's player and -d for the other, so the tree stays
  zero-sum; each node carries the root's player for it. With `twofold_draw` (search.twofold_draw, chess), a
  move into a position the game already had ends its branch as a draw where the whole cycle lies inside the tree
  and at least 4 plies below the root, as Lc0 scores a two-fold (a position first seen before the root is the
  game's second occurrence, and play goes on); each node carries the root's ply count for it. A Go score `utility`
  (`black_score_utility`) adds to the reward of a move that ends the game its utility of the final margin, and to
  a child's value its utility of the predicted one, each for the player it belongs to; each node carries the
  root's centre for it.
  """

  def recurrent_fn(variables, key, action, node):
    state = unlean(node.state, env.num_actions)
    if width:  # mctx's action is the parent's child: play its move
      action = gather(node.actions, action[:, None])[:, 0]
    mover = state.current_player
    state = batched_step(env)(state, action)
    logits, value, extras = evaluate(variables, key, state)
    reward = state.rewards[jnp.arange(action.shape[0]), mover]
    done = state.terminated | state.truncated
    if twofold_draw:  # Lc0's two-fold: a cycle inside the tree, 4+ plies deep (pgx's reward is 0 while it goes on)
      depth = state._step_count - node.root_ply  # noqa: SLF001
      done = done | ((depth >= 4) & (depth >= rules.chess_cycle(state)))
    if draw_value:  # a drawn end: no reward from pgx, the draw value for whoever moved into it
      reward = jnp.where(done & (reward == 0), jnp.where(mover == node.root_player, draw_value, -draw_value), reward)
    if utility is not None:
      black = utility(state, extras.lead, node.score_center)
      reward = reward + jnp.where(done, for_colour(black, node.state._x.color), 0.0)
      value = value + for_colour(black, state._x.color)  # zeroed below where the game ended
    plies = extras.moves_left
    legal = legal_moves(state)
    prior, actions = masked_logits(logits, legal), None
    if width:  # the padding's action is illegal: masked
      actions = children(legal, width)
      prior = gather(prior, actions)
    plies = jnp.where(done, 0.0, plies) if moves_left else None
    embedding = Node(state=lean(state), actions=actions, moves_left=plies, root_player=node.root_player,
                     score_center=node.score_center, root_ply=node.root_ply)
    return mctx.RecurrentFnOutput(reward=reward, discount=jnp.where(done, 0.0, -discount), prior_logits=prior,
                                  value=jnp.where(done, 0.0, value)), embedding

  return recurrent_fn


def make_search(env: pgx.Env, network: Network, config: SearchConfig, game: str, num_simulations: int | None = None):
  """The network's search (self-play, agents, engines), `search.go_pass`, `go_fill_eyes` and `go_eyes` narrowing
  the legal moves."""
  evaluate = network_evaluator(network)
  if config.random_symmetry:
    evaluate = symmetry.symmetric_evaluator(evaluate, rules.GO_SIZES[game])
  legal_moves = rules.make_legal_moves(game, config.go_pass, config.go_fill_eyes, config.go_eyes)
  return make_search_with(env, evaluate, config, legal_moves, num_simulations or config.num_simulations, game)


def make_search_with(env: pgx.Env, evaluate: Evaluate, config: SearchConfig, legal_moves: LegalMoves,
                     num_simulations: int, game: str):
  """Returns `search(variables, keys [B], states [B], noise=True) -> SearchOutput` for any evaluator.

  `noise=False` disables the root noise (Dirichlet for PUCT, Gumbel for Gumbel). The tree is compact
  where `tree_width` says so; the output is the same either way."""
  num_actions = env.num_actions
  if config.gumbel_act == "halving" and config.algorithm != "gumbel":  # (a Config's validate says so first)
    raise ValueError(f"search.gumbel_act=halving plays a Gumbel search's move, not {config.algorithm}'s")
  width = tree_width(config, game, num_actions)
  moves_left = config.moves_left_slope > 0
  utility = None
  if config.score_utility or config.score_utility_static:
    if game not in rules.GO_SIZES:
      raise ValueError(f"search.score_utility is for Go (go9, go), not {game}")
    utility = black_score_utility(config, rules.GO_SIZES[game])
  recurrent_fn = make_recurrent_fn(env, evaluate, legal_moves, width, config.discount, moves_left,
                                   config.draw_value, utility, config.twofold_draw)
  alpha = dirichlet_alpha(config, game)
  fraction = config.dirichlet_fraction if config.algorithm == "puct" else 0.0
  qtransform = functools.partial(qtransform_with_unvisited, unvisited_value=config.unvisited_value)
  # Gumbel's: completed by the mixed value, at the config's scale (mctx's defaults unless set)
  gumbel_qtransform = functools.partial(mctx.qtransform_completed_by_mix_value, value_scale=config.gumbel_value_scale,
                                        maxvisit_init=config.gumbel_maxvisit_init)
  if moves_left:
    qtransform = with_moves_left_utility(qtransform, config)
    gumbel_qtransform = with_moves_left_utility(gumbel_qtransform, config)

  def one(variables, key, state, noise):
    state = jax.tree.map(lambda x: x[None], state)  # mctx wants a batch; this one has a single game
    root_key, noise_key, key = jax.random.split(key, 3)
    logits, prior_value, extras = evaluate(variables, root_key, state)
    plies, value, center = extras.moves_left, prior_value, None
    if moves_left and plies is None:
      raise ValueError("search.moves_left_slope > 0 needs an evaluator with moves left (network.moves_left > 0)")
    if utility is not None:  # the root's value and its centre, from its predicted margin
      if extras.lead is None:
        raise ValueError("search.score_utility needs an evaluator with an area lead (network.ownership > 0)")
      center = score_center(rules.black_margin(state, rules.GO_SIZES[game], extras.lead), rules.GO_SIZES[game])
      value = value + for_colour(utility(state, extras.lead, center), state._x.color)
    legal = legal_moves(state)
    prior = masked_logits(logits, legal)
    actions, valid, node_actions = jnp.arange(num_actions, dtype=jnp.int32)[None], legal, None
    if width:
      actions = node_actions = children(legal, width)
      prior, valid = gather(prior, actions), gather(legal, actions)
    embedding = Node(state=lean(state), actions=node_actions, moves_left=plies if moves_left else None,
                     root_player=state.current_player if config.draw_value else None, score_center=center,
                     root_ply=state._step_count if config.twofold_draw else None)  # noqa: SLF001
    if noise and fraction > 0:  # over the tree's children: in chess [K] draws in a 20th of the time of [A]
      prior = with_dirichlet_noise(noise_key, prior[0], valid[0], alpha, fraction)[None]
    root = mctx.RootFnOutput(prior_logits=prior, value=value, embedding=embedding)
    invalid = ~valid  # the illegal moves, and the padding
    with backup.installed():  # mctx's search, backing up with backup.path_backward
      if config.algorithm == "puct":  # the noise is ours (with_dirichlet_noise)
        tree = puct_tree(variables, key, root, recurrent_fn, num_simulations, invalid, qtransform,
                         config.c_init, config.c_base)
        weights = tree.summary().visit_probs
      else:
        # mctx draws i.i.d. Gumbel per child: over the legal moves, the same law in either tree.
        out = mctx.gumbel_muzero_policy(
            variables, key, root, recurrent_fn, num_simulations, invalid_actions=invalid,
            max_num_considered_actions=config.max_considered_actions,
            gumbel_scale=config.gumbel_scale if noise else 0.0, qtransform=gumbel_qtransform)
        tree, weights = out.search_tree, out.action_weights
    summary = tree.summary()  # over the root's children, as the tree indexes them (as `weights`, until scattered)
    tie_break = summary.qvalues[0] if config.algorithm == "puct" else weights[0]
    best_value = summary.qvalues[0, preferred_child(summary.visit_counts[0], tie_break)]
    move_weights = weights if config.play_unvisited else jnp.where(summary.visit_counts > 0, weights, 0.0)
    rank = move_weights
    if config.algorithm == "puct":  # visits, then Q (sigmoid < 1: a tie-break under the integer visits); unvisited 0
      rank = jnp.where(summary.visit_counts > 0, summary.visit_counts + jax.nn.sigmoid(summary.qvalues), 0.0)
    if config.gumbel_act == "halving":  # Sequential Halving's winner alone (mctx's action; a root child's index)
      move_weights = jax.nn.one_hot(out.action, weights.shape[-1], dtype=weights.dtype)
      rank = 2.0 * move_weights + weights  # the winner's 2 tops any policy weight (at most 1)
    if width:
      weights, move_weights, rank = (scatter(x, actions, num_actions) for x in (weights, move_weights, rank))
    return SearchOutput(weights=weights[0], move_weights=move_weights[0], move_rank=rank[0], value=summary.value[0],
                        prior_value=prior_value[0], best_value=best_value, prior_logits=logits[0], legal=legal[0],
                        tree=tree, actions=actions[0])

  def search(variables, keys: chex.Array, states: pgx.State, noise: bool = True) -> SearchOutput:
    chex.assert_rank(keys, 2)
    chex.assert_equal_shape_prefix([keys, states.legal_action_mask], 1)
    return jax.vmap(functools.partial(one, noise=noise), in_axes=(None, 0, 0))(variables, keys, states)

  # Jitted, so a direct call compiles one program; run eagerly, mctx and pgx compile op by op (a tic-tac-toe
  # search: 7.5 s against 3.1 s). Inside a caller's jit it is inlined as before.
  return jax.jit(search, static_argnames="noise")
