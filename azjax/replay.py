"""The replay window: one ring buffer ("lane") per self-play game slot, on device.

Every ply, each game slot appends its position to its own lane, with the
search's policy and the player to move. When the game ends, every position of
that game still in the lane is labelled with the outcome from its mover's view
(draw = 0). A game may span any number of train_steps: its positions wait in
the lane, unlabelled and never sampled, until it ends. Nothing is copied at
chunk edges and no finished position is dropped; positions leave only when the
window (lane) is full and newer ones overwrite them.

Lanes live with their games on the same device, so adding, labelling and
sampling never cross devices. A minibatch takes the same number of positions
from every lane, uniformly among its labelled positions (stratified uniform
sampling; lanes fill at the same rate).

With `ownership_points` (Go, `network.ownership`), a finished game also labels its positions with the
final board's owner of each point, from the mover's view (KataGo's ownership target); a game that
did not reach its real end (resignation, the config's length cap) labels them as having none. With
`moves_left` (`network.moves_left`), it labels each position with the plies its game lasted after it
(Lc0's moves-left target), whatever ended the game. With `q` (`train.q_ratio`), each position keeps
its search's value of its best move, and its value target mixes that with the outcome (Lc0's q_ratio);
with `q_lambda` (`train.q_lambda`) the mixed-in value is the exponential average of that and the game's
later search values (KataGo's short-term value target). With `replies` (`network.opponent_policy`), each
position marks whether it was its game's last, and a sampled position comes with the next position's policy
and legal moves: the opponent's reply (KataGo's auxiliary policy target), or none after a game's last move.
With `board_points` (`network.future_position`), each position keeps its board as its mover sees it (who holds each
point), and a sampled position comes with the boards config.FUTURE_PLIES later in its game (KataGo's future-
position target); past the game's end, its last position with the same player to move, so the frame and the
sides are the sampled position's own. (KataGo takes the final board, after the last move, whoever is to move: the
replay stores no board after a game's last move, so this one is 1 or 2 plies before it.) With `material`
(`network.material_change`, chess), each position keeps its mover's material lead, and a sampled position comes
with how that lead changed config.MATERIAL_PLIES later in its game (to the same last position past its end).
All functions here are _unbatched_
(one lane) and vmapped over lanes by the callers via `add`, `finish`, `sample`.
"""

from __future__ import annotations

import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from azjax.config import FUTURE_PLIES, MATERIAL_PLIES


@dataclasses.dataclass(frozen=True)
class ValueTarget:
  """How a game's outcome becomes its positions' value targets; static, part of the compiled program.
  The defaults label each position with the outcome as it is (AlphaZero's z)."""
  discount: float = 1.0  # search.discount: z * discount per ply before the game's last move
  q_ratio: float = 0.0  # train.q_ratio (Lc0): the share of the search's value of its best move mixed in
  q_lambda: float = 0.0  # train.q_lambda (KataGo): that value averaged over the game's later positions

  @classmethod
  def of(cls, config) -> "ValueTarget":
    """A run's targets, from its Config."""
    return cls(config.search.discount, config.train.q_ratio, config.train.q_lambda)


@dataclasses.dataclass(frozen=True)
class Codec:
  """How a position is stored, exactly. Unbatched: one position.

  Dense (the default) stores it as it comes. Compact stores 0/1 observation planes as bits,
  planes that hold one number over the whole board (chess's move and no-progress counters) as
  that float32, the legal mask as bits, and the policy as its `policy_entries` largest entries
  (probability, index). That is exact: only legal moves carry mass, and `policy_entries` is at
  least the game's maximum number of legal moves. A chess position shrinks from 53.8 KB to
  2.8 KB. Only compact codecs need the shapes (`obs`, `num_actions`).
  """
  compact: bool = False
  obs: jax.ShapeDtypeStruct | None = None  # one observation [H, W, C]
  num_actions: int = 0
  scalar_planes: tuple[int, ...] = ()  # channels constant over the board, stored as one float32
  policy_entries: int = 0  # the policy's largest entries kept; 0 keeps all

  @property
  def _binary(self) -> np.ndarray:
    return np.array([c for c in range(self.obs.shape[-1]) if c not in self.scalar_planes], int)

  def encode(self, obs, policy, legal):
    """-> (obs, policy values, policy indices, legal) as stored."""
    if not self.compact:
      return obs, policy, None, legal
    bits = jnp.packbits(obs[..., self._binary].astype(bool).reshape(-1))
    scalars = obs[0, 0, list(self.scalar_planes)].astype(jnp.float32)
    obs = jnp.concatenate([bits, jax.lax.bitcast_convert_type(scalars, jnp.uint8).reshape(-1)])
    index = None
    if self.policy_entries:
      policy, index = jax.lax.top_k(policy, self.policy_entries)
      index = index.astype(jnp.int16)
    return obs, policy, index, jnp.packbits(legal)

  def decode(self, obs, policy, index, legal):
    """-> (obs, policy [A], legal [A]) as they came."""
    if not self.compact:
      return obs, policy, legal
    h, w, c = self.obs.shape
    binary, k = self._binary, len(self.scalar_planes)
    nbits = h * w * len(binary)
    planes = jnp.unpackbits(obs[:obs.shape[0] - 4 * k], count=nbits).reshape(h, w, len(binary))
    scalars = jax.lax.bitcast_convert_type(obs[obs.shape[0] - 4 * k:].reshape(k, 4), jnp.float32)
    stacked = jnp.concatenate([planes.astype(self.obs.dtype),
                               jnp.broadcast_to(scalars.astype(self.obs.dtype), (h, w, k))], axis=-1)
    obs = stacked[..., np.argsort(np.concatenate([binary, np.array(self.scalar_planes, int)]))]
    return (obs, *self.decode_policy(policy, index, legal))

  def decode_policy(self, policy, index, legal):
    """-> (policy [A], legal [A]) as they came."""
    if not self.compact:
      return policy, legal
    if self.policy_entries:
      policy = jnp.zeros((self.num_actions,), policy.dtype).at[index.astype(jnp.int32)].set(policy)
    return policy, jnp.unpackbits(legal, count=self.num_actions).astype(bool)


def make_codec(compact: bool, obs: jax.ShapeDtypeStruct, num_actions: int, scalar_planes=(),
               max_legal_moves: int = 0) -> Codec:
  """The codec of a game: compact keeps the policy's top `max_legal_moves` only when that is smaller."""
  if not compact:
    return Codec()
  entries = max_legal_moves if 0 < max_legal_moves and 6 * max_legal_moves < 4 * num_actions else 0
  assert num_actions < 2 ** 15, "policy indices are stored as int16"
  return Codec(True, jax.ShapeDtypeStruct(tuple(obs.shape), obs.dtype), num_actions, tuple(scalar_planes), entries)


@functools.partial(jax.tree_util.register_dataclass,
                   data_fields=["obs", "policy", "policy_index", "legal", "mover", "value", "ownership", "owned",
                                "plies_left", "q", "last", "board", "material", "written", "labelled"],
                   meta_fields=["codec"])
@dataclasses.dataclass(frozen=True)
class Replay:
  """The replay window; `codec` (static, not an array) says how its positions are stored, chosen once by `init`."""
  obs: chex.Array  # [lanes, L, ...] the observation, as the codec stores it
  policy: chex.Array  # [lanes, L, A or K] float32 search policy (the target pi), or its K largest entries
  policy_index: chex.Array | None  # [lanes, L, K] int16 the actions of those entries; None when the policy is whole
  legal: chex.Array  # [lanes, L, A] bool legal moves (the policy is masked to them), or as bits (uint8)
  mover: chex.Array  # [lanes, L] int32 player to move
  value: chex.Array  # [lanes, L] float32 outcome z for the mover, discounted by search.discount (once labelled)
  ownership: chex.Array | None  # [lanes, L, points] int8 final owner of each point for the mover (+1), or None
  owned: chex.Array | None  # [lanes, L] bool: the position has an ownership target (its game ended for real)
  plies_left: chex.Array | None  # [lanes, L] int32 plies of its game from the position to the end (1: it made the last)
  q: chex.Array | None  # [lanes, L] float32 the search's value of its best move, for the mover (train.q_ratio), or None
  last: chex.Array | None  # [lanes, L] bool: the position made its game's last move (network.opponent_policy), or None
  board: chex.Array | None  # [lanes, L, points] int8 who holds each point, for the mover (+1; future_position) or None
  material: chex.Array | None  # [lanes, L] int8 the mover's material lead (network.material_change), or None
  written: chex.Array  # [lanes] int32 positions ever written to the lane
  labelled: chex.Array  # [lanes] int32 positions ever labelled (= first position of the game in play)
  codec: Codec = Codec()

  def replace(self, **fields) -> "Replay":
    return dataclasses.replace(self, **fields)


@chex.dataclass(frozen=True)
class Batch:
  obs: chex.Array  # [N, *obs_shape]
  policy: chex.Array  # [N, A]
  legal: chex.Array  # [N, A]
  value: chex.Array  # [N]
  weight: chex.Array  # [N] 1.0, or 0.0 where the lane had nothing labelled yet
  ownership: chex.Array | None = None  # [N, points] float32 in {-1, 0, 1}, with `network.ownership`
  owned: chex.Array | None = None  # [N] float32 1.0 where `ownership` is a target
  plies_left: chex.Array | None = None  # [N] float32, with `network.moves_left`
  reply_policy: chex.Array | None = None  # [N, A] the next position's policy (the opponent's reply), with replies
  reply_legal: chex.Array | None = None  # [N, A] its legal moves
  replied: chex.Array | None = None  # [N] float32 1.0 where the next position is of the same game
  future: chex.Array | None = None  # [N, points, len(FUTURE_PLIES)] float32 in {-1, 0, 1}, with boards
  material_change: chex.Array | None = None  # [N, len(MATERIAL_PLIES)] float32 the mover's lead's change, in points


def init(lanes: int, lane_size: int, obs: jax.ShapeDtypeStruct, num_actions: int, codec: Codec = Codec(),
         ownership_points: int = 0, moves_left: bool = False, q: bool = False, replies: bool = False,
         board_points: int = 0, material: bool = False) -> Replay:
  """An empty window of `lanes` lanes of `lane_size` positions, stored by `codec` from now on; with
  `ownership_points`, each position also keeps an ownership target of that many points, with `moves_left`
  its plies left, with `q` its search's best value, with `replies` whether it was its game's last, with
  `board_points` its board of that many points, with `material` its mover's material lead (and with either, its
  plies left, which find its game's end)."""
  stored = jax.eval_shape(codec.encode, obs, jax.ShapeDtypeStruct((num_actions,), jnp.float32),
                          jax.ShapeDtypeStruct((num_actions,), bool))
  obs, policy, index, legal = (None if x is None else jnp.zeros((lanes, lane_size, *x.shape), x.dtype) for x in stored)
  return Replay(
      obs=obs, policy=policy, policy_index=index, legal=legal,
      mover=jnp.zeros((lanes, lane_size), jnp.int32),
      value=jnp.zeros((lanes, lane_size), jnp.float32),
      ownership=jnp.zeros((lanes, lane_size, ownership_points), jnp.int8) if ownership_points else None,
      owned=jnp.zeros((lanes, lane_size), bool) if ownership_points else None,
      plies_left=jnp.zeros((lanes, lane_size), jnp.int32) if moves_left or board_points or material else None,
      q=jnp.zeros((lanes, lane_size), jnp.float32) if q else None,
      last=jnp.zeros((lanes, lane_size), bool) if replies else None,
      board=jnp.zeros((lanes, lane_size, board_points), jnp.int8) if board_points else None,
      material=jnp.zeros((lanes, lane_size), jnp.int8) if material else None,
      written=jnp.zeros((lanes,), jnp.int32),
      labelled=jnp.zeros((lanes,), jnp.int32),
      codec=codec,
  )


def _add(lane: Replay, obs, policy, legal, mover, q, board, material, record) -> Replay:
  i = lane.written % lane.mover.shape[0]
  obs, policy, index, legal = lane.codec.encode(obs, policy, legal)
  # Not recorded: slot i (the oldest position, maybe still sampled) keeps what it holds, and `written` stays.
  put = lambda stored, new: stored.at[i].set(jnp.where(record, new, stored[i]))
  if lane.q is not None:
    lane = lane.replace(q=put(lane.q, q))
  if lane.last is not None:
    lane = lane.replace(last=put(lane.last, False))
  if lane.board is not None:
    lane = lane.replace(board=put(lane.board, board.astype(jnp.int8)))
  if lane.material is not None:
    lane = lane.replace(material=put(lane.material, material.astype(jnp.int8)))
  return lane.replace(
      obs=put(lane.obs, obs), policy=put(lane.policy, policy),
      policy_index=None if index is None else put(lane.policy_index, index), legal=put(lane.legal, legal),
      mover=put(lane.mover, mover), written=lane.written + jnp.asarray(record, jnp.int32))


def _short_term(lane: Replay, z, plies_left, q_lambda: float):
  """KataGo's short-term value target for each position t of the lane's newest game, for t's mover:
  (1 - l) sum_k l^k q_(t+k) over t and the game's later positions (each search's value turned to t's mover's
  view) + l^(plies to the end) z. Its mean horizon is 1 / (1 - l) plies. Older games' slots get garbage, which
  `_finish` masks: a reverse scan accumulates only later positions, and the newest game's are the latest."""
  size = lane.mover.shape[0]
  order = (lane.written + jnp.arange(size)) % size  # the ring's slots from oldest to newest
  sign = jnp.where(lane.mover == 0, 1.0, -1.0)  # a value for the mover -> for player 0, and back
  # s_t = u_t + l s_(t+1), as the composition of maps s -> a s + b (later block first, as the reverse scan gives)
  compose = lambda later, earlier: (earlier[0] * later[0], earlier[1] + earlier[0] * later[1])
  _, s = jax.lax.associative_scan(compose, (jnp.full((size,), q_lambda), (sign * lane.q)[order]), reverse=True)
  s = s[(jnp.arange(size) - lane.written) % size]  # back to slots
  return (1.0 - q_lambda) * sign * s + q_lambda ** plies_left.astype(jnp.float32) * z


def _finish(lane: Replay, done, rewards, ownership=None, owned=None, target: ValueTarget = ValueTarget()) -> Replay:
  size = lane.mover.shape[0]
  slots = jnp.arange(size)
  # The absolute index of the position now held by each ring slot.
  absolute = lane.written - 1 - (lane.written - 1 - slots) % size
  this_game = done & (absolute >= lane.labelled)
  if lane.ownership is not None:  # player 0's view -> each position's mover's
    mine = jnp.where(lane.mover[:, None] == 0, ownership, -ownership).astype(jnp.int8)
    lane = lane.replace(ownership=jnp.where(this_game[:, None], mine, lane.ownership),
                        owned=jnp.where(this_game, owned, lane.owned))
  z = rewards[lane.mover]
  plies_left = lane.written - absolute  # the position `lane.written - 1` made the last move: 1
  if target.discount != 1.0:  # z itself there, one ply earlier z * discount
    z = z * target.discount ** (plies_left - 1).astype(jnp.float32)
  if target.q_ratio:  # Lc0's q_ratio: the outcome mixed with the search's value (or KataGo's short-term average)
    q = _short_term(lane, z, plies_left, target.q_lambda) if target.q_lambda else lane.q
    z = target.q_ratio * q + (1.0 - target.q_ratio) * z
  if lane.plies_left is not None:
    lane = lane.replace(plies_left=jnp.where(this_game, plies_left, lane.plies_left))
  if lane.last is not None:  # the position written last made the game's last move
    lane = lane.replace(last=lane.last | (done & (absolute == lane.written - 1)))
  return lane.replace(
      value=jnp.where(this_game, z, lane.value),
      labelled=jnp.where(done, lane.written, lane.labelled))


def _labelled_range(lane: Replay):
  """[lo, hi) absolute indices of the labelled positions still in the lane."""
  lo = jnp.maximum(lane.written - lane.mover.shape[0], 0)
  return lo, jnp.maximum(lane.labelled, lo)


def _later(k, plies_left, plies):
  """[N, len(plies)] the absolute indices of the positions `plies` (even) later than each k in its game, or past
  its end its last position with k's player to move: an even distance keeps the mover, so its view."""
  end = k + plies_left - 1  # its game's last position
  return jnp.minimum(k[:, None] + jnp.asarray(plies), (k + (end - k) // 2 * 2)[:, None])


def _sample(lane: Replay, key, n: int, by_window: bool = False) -> Batch:
  lo, hi = _labelled_range(lane)
  count = hi - lo
  k = lo + jax.random.randint(key, (n,), 0, jnp.maximum(count, 1))  # absolute indices
  i = k % lane.mover.shape[0]
  index = None if lane.policy_index is None else lane.policy_index[i]
  obs, policy, legal = jax.vmap(lane.codec.decode)(lane.obs[i], lane.policy[i], index, lane.legal[i])
  own = {} if lane.ownership is None else dict(ownership=lane.ownership[i].astype(jnp.float32),
                                                owned=lane.owned[i].astype(jnp.float32))
  if lane.plies_left is not None:
    own["plies_left"] = lane.plies_left[i].astype(jnp.float32)
  if lane.last is not None:  # the opponent's reply: the next position, labelled and of the same game
    j = (i + 1) % lane.mover.shape[0]
    index = None if lane.policy_index is None else lane.policy_index[j]
    reply_policy, reply_legal = jax.vmap(lane.codec.decode_policy)(lane.policy[j], index, lane.legal[j])
    own.update(reply_policy=reply_policy, reply_legal=reply_legal,
               replied=((k + 1 < hi) & ~lane.last[i]).astype(jnp.float32))
  if lane.board is not None:  # the boards FUTURE_PLIES later, in the position's mover's view
    j = _later(k, lane.plies_left[i], FUTURE_PLIES) % lane.mover.shape[0]
    own["future"] = jnp.moveaxis(lane.board[j], 1, -1).astype(jnp.float32)
  if lane.material is not None:  # the mover's lead MATERIAL_PLIES later, less its lead now
    j = _later(k, lane.plies_left[i], MATERIAL_PLIES) % lane.mover.shape[0]
    own["material_change"] = lane.material[j].astype(jnp.float32) - lane.material[i][:, None].astype(jnp.float32)
  weight = count if by_window else count > 0  # see `sample`
  return Batch(obs=obs, policy=policy, legal=legal, value=lane.value[i],
               weight=jnp.broadcast_to(weight.astype(jnp.float32), (n,)), **own)


def add(replay: Replay, obs, policy, legal, mover, q=None, record=True, board=None, material=None) -> Replay:
  """Appends one position per lane: obs [lanes, ...], policy/legal [lanes, A], mover [lanes], and where the
  replay keeps them, q [lanes] (the search's value of its best move), board [lanes, points] (who holds each
  point, +1 the mover) and material [lanes] (the mover's material lead). Where `record` ([] bool) is False, nothing
  is appended (KataGo's fast-search turns, `selfplay.record_fast`): the ply is played and not trained on."""
  chex.assert_rank([policy, legal, mover], [2, 2, 1])
  chex.assert_equal_shape_prefix([obs, policy, legal, mover, replay.written], 1)
  q = jnp.zeros_like(mover, jnp.float32) if q is None else q
  board = jnp.zeros(mover.shape + (0,), jnp.int8) if board is None else board
  material = jnp.zeros(mover.shape, jnp.int8) if material is None else material
  return jax.vmap(_add, in_axes=(0, 0, 0, 0, 0, 0, 0, 0, None))(replay, obs, policy, legal, mover, q, board, material,
                                                               record)


def finish(replay: Replay, done, rewards, ownership=None, owned=None, target: ValueTarget = ValueTarget()) -> Replay:
  """Labels the positions of each lane's game where `done` [lanes] with `rewards` [lanes, 2] (draw: zeros),
  turned into value targets as `target` says, and, if the replay keeps ownership, with `ownership`
  [lanes, points] (player 0's view) where `owned` [lanes]."""
  label = functools.partial(_finish, target=target)
  if replay.ownership is None:
    return jax.vmap(label)(replay, done, rewards)
  return jax.vmap(label)(replay, done, rewards, ownership, owned)


def sample(replay: Replay, keys, per_lane: int, by_window: bool = False) -> Batch:
  """Draws `per_lane` positions uniformly from each lane's labelled positions; keys [lanes]. Returns [lanes*per_lane],
  decoded.

  Every lane gives as many rows, so a position weighs 1 / (its lane's labelled positions): more in a lane that
  holds fewer (early on, or a long game still in progress). `by_window` (`replay.sampling="window"`) weights each
  row by its lane's count instead, so that in the loss, whose weights sum to one over all devices, every labelled
  position in the window counts alike, as AlphaGo Zero's uniform draw from its window; an empty lane's rows weigh 0
  either way."""
  chex.assert_equal_shape_prefix([keys, replay.written], 1)
  batch = jax.vmap(functools.partial(_sample, n=per_lane, by_window=by_window))(replay, keys)
  return jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), batch)


def size(replay: Replay) -> chex.Array:
  """Labelled positions available for sampling, per lane [lanes]."""
  lo, hi = jax.vmap(_labelled_range)(replay)
  return hi - lo
