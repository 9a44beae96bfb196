import jax
import jax.numpy as jnp
import numpy as np
import pytest

import azjax
from azjax import replay as replay_lib
from azjax.games import make_env
from conftest import batched_init, batched_step


def _replay(lanes=2, size=6):
  return replay_lib.init(lanes, size, jax.ShapeDtypeStruct((1,), jnp.int32), 3)


def _add(r, values, movers):
  """Adds one position per lane whose observation is `values` (to identify it later)."""
  values = jnp.asarray(values, jnp.int32)
  return replay_lib.add(r, values[:, None], jnp.ones((len(values), 3)) / 3, jnp.ones((len(values), 3), bool),
                        jnp.asarray(movers, jnp.int32))


def test_positions_are_labelled_from_the_movers_view_when_the_game_ends(strict_rank_promotion):
  r = _replay()
  for t in range(3):
    r = _add(r, [t, 10 + t], [t % 2, (t + 1) % 2])
  assert list(replay_lib.size(r)) == [0, 0]  # nothing labelled before the games end
  # Lane 0: player 0 wins. Lane 1: the game goes on.
  r = replay_lib.finish(r, jnp.array([True, False]), jnp.array([[1.0, -1.0], [0.0, 0.0]]))
  assert list(replay_lib.size(r)) == [3, 0]
  np.testing.assert_array_equal(r.value[0, :3], [1.0, -1.0, 1.0])  # movers 0, 1, 0
  # Lane 1 continues over later chunks, then ends in a draw: all its positions score 0.
  for t in range(3, 5):
    r = _add(r, [100 + t, 10 + t], [0, (t + 1) % 2])
  r = replay_lib.finish(r, jnp.array([False, True]), jnp.zeros((2, 2)))
  assert list(replay_lib.size(r)) == [3, 5]
  np.testing.assert_array_equal(r.value[1, :5], np.zeros(5))
  # Lane 0's new game (2 positions so far) is not labelled, and its old labels are untouched.
  np.testing.assert_array_equal(r.value[0, :3], [1.0, -1.0, 1.0])


def test_an_unrecorded_position_leaves_a_full_ring_as_it_was():
  """`record=False` (a fast ply under selfplay.record_fast=False) appends nothing: the slot it would overwrite,
  the oldest position still sampled, keeps what it holds, and the lane's count stays."""
  r = _replay(lanes=1, size=3)
  for t in range(3):
    r = _add(r, [t], [t % 2])
  r = replay_lib.finish(r, jnp.array([True]), jnp.array([[1.0, -1.0]]))
  before = r
  values = jnp.asarray([[99]], jnp.int32)
  r = replay_lib.add(r, values, jnp.zeros((1, 3)), jnp.ones((1, 3), bool), jnp.asarray([1], jnp.int32), record=False)
  for a, b in zip(jax.tree.leaves(before), jax.tree.leaves(r)):
    np.testing.assert_array_equal(a, b)
  r = replay_lib.add(r, values, jnp.zeros((1, 3)), jnp.ones((1, 3), bool), jnp.asarray([1], jnp.int32), record=True)
  assert int(r.written[0]) == 4 and int(r.obs[0, 0, 0]) == 99  # recorded: over the oldest slot


def test_second_player_win_and_spanning_many_chunks():
  r = _replay(lanes=1, size=8)
  for t in range(7):  # one game of 7 positions added one ply at a time
    r = _add(r, [t], [t % 2])
    if t < 6:
      r = replay_lib.finish(r, jnp.array([False]), jnp.zeros((1, 2)))
  r = replay_lib.finish(r, jnp.array([True]), jnp.array([[-1.0, 1.0]]))
  np.testing.assert_array_equal(r.value[0, :7], [-1, 1, -1, 1, -1, 1, -1])


def test_a_discount_labels_each_position_by_its_plies_to_the_end():
  # search.discount: the mover of the last move gets z, one ply earlier z * discount, and so on; in each
  # lane by its own game's length, and across the ring's wrap (size 4: a game of 6 positions keeps its last 4).
  r, halved = _replay(lanes=2, size=4), replay_lib.ValueTarget(discount=0.5)
  for t in range(6):
    r = _add(r, [t, t], [t % 2, t % 2])
    if t == 2:  # lane 1's game ends after 3 positions (player 1 wins); lane 0's goes on
      r = replay_lib.finish(r, jnp.array([False, True]), jnp.array([[0.0, 0.0], [-1.0, 1.0]]), target=halved)
      np.testing.assert_allclose(r.value[1, :3], [-0.25, 0.5, -1.0])  # movers 0, 1, 0
  r = replay_lib.finish(r, jnp.array([True, False]), jnp.array([[1.0, -1.0], [0.0, 0.0]]), target=halved)
  np.testing.assert_allclose(r.value[0], [0.5, -1.0, 0.125, -0.25])  # slots hold positions 4, 5, 2, 3


def test_q_ratio_mixes_each_positions_search_value_into_its_outcome():
  # train.q_ratio (Lc0's): target = r * q + (1 - r) * z, q each position's own (the search's best value for its
  # mover), z the outcome from its mover's view; r = 0 leaves the outcome alone.
  r = replay_lib.init(1, 4, jax.ShapeDtypeStruct((1,), jnp.int32), 3, q=True)
  for t, q in enumerate([0.5, -0.2, 0.9]):
    r = replay_lib.add(r, jnp.array([[t]]), jnp.ones((1, 3)) / 3, jnp.ones((1, 3), bool), jnp.array([t % 2]),
                       jnp.array([q]))
  mixed = replay_lib.finish(r, jnp.array([True]), jnp.array([[1.0, -1.0]]), target=replay_lib.ValueTarget(q_ratio=.25))
  np.testing.assert_allclose(mixed.value[0, :3], [0.25 * 0.5 + 0.75, 0.25 * -0.2 - 0.75, 0.25 * 0.9 + 0.75])
  plain = replay_lib.finish(r, jnp.array([True]), jnp.array([[1.0, -1.0]]))
  np.testing.assert_allclose(plain.value[0, :3], [1.0, -1.0, 1.0])


def test_q_lambda_mixes_in_the_exponential_average_of_the_games_later_search_values():
  # train.q_lambda (KataGo's short-term value target): q_ratio's q becomes (1 - l) sum_k l^k q_(t+k) + l^(T - t) z,
  # each later q turned to t's mover's view; written here as the plain loop, on a lane that wrapped around.
  lam, ratio, size = 0.6, 0.5, 5
  target = replay_lib.ValueTarget(q_ratio=ratio, q_lambda=lam)
  r = replay_lib.init(1, size, jax.ShapeDtypeStruct((1,), jnp.int32), 3, q=True)
  qs, movers = [0.3, -0.5, 0.8, 0.1, -0.9, 0.4, 0.7], [0, 1, 0, 0, 1, 0, 1]  # game A: positions 0-2, B: 3-6
  for t, (q, m) in enumerate(zip(qs, movers)):
    r = replay_lib.add(r, jnp.array([[t]]), jnp.ones((1, 3)) / 3, jnp.ones((1, 3), bool), jnp.array([m]),
                       jnp.array([q]))
    if t == 2:
      r = replay_lib.finish(r, jnp.array([True]), jnp.array([[1.0, -1.0]]), target=target)
  a_before = np.asarray(r.value[0, 2 % size])
  r = replay_lib.finish(r, jnp.array([True]), jnp.array([[-1.0, 1.0]]), target=target)
  sign = lambda t: 1.0 if movers[t] == 0 else -1.0
  for t in range(3, 7):  # game B, won by player 1
    later = sum((1 - lam) * lam ** (k - t) * sign(t) * sign(k) * qs[k] for k in range(t, 7))
    z = -sign(t)
    np.testing.assert_allclose(r.value[0, t % size], ratio * (later + lam ** (7 - t) * z) + (1 - ratio) * z,
                               rtol=1e-6)
  assert r.value[0, 2 % size] == a_before  # game A's last position, still in the lane, keeps its label
  # game A's last position, labelled when A ended (player 0 won; A's earlier positions are overwritten): the same sum
  np.testing.assert_allclose(a_before, ratio * ((1 - lam) * qs[2] + lam * 1.0) + (1 - ratio) * 1.0, rtol=1e-6)


def test_window_keeps_the_newest_positions_and_samples_only_labelled_ones(strict_rank_promotion):
  r = _replay(lanes=1, size=4)
  for t in range(6):  # game A: positions 0..5, finished; the lane keeps 2..5
    r = _add(r, [t], [0])
  r = replay_lib.finish(r, jnp.array([True]), jnp.array([[1.0, -1.0]]))
  for t in range(6, 8):  # game B: positions 6, 7, unfinished; they overwrite 2 and 3
    r = _add(r, [t], [0])
  assert int(replay_lib.size(r)[0]) == 2
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 1), 2000)
  seen = np.asarray(batch.obs[:, 0])
  assert set(seen) == {4, 5}  # only finished positions still in the window
  assert abs((seen == 4).mean() - 0.5) < 0.05  # uniformly
  assert np.all(np.asarray(batch.weight) == 1.0)


def test_window_sampling_weighs_every_labelled_position_alike_where_lanes_weigh_lanes_alike():
  """replay.sampling: lane 0 holds 8 labelled positions, lane 1 holds 2. Each lane gives as many rows; by lanes
  a position of lane 1 weighs 4 times one of lane 0 (1/2 against 1/8 of its lane's rows), by window (AlphaGo Zero's
  uniform draw) each of the 10 weighs a tenth of the loss."""
  r = _replay(lanes=2, size=8)
  for t in range(8):
    r = _add(r, [t, 100 + t], [0, 0])
    if t == 1:
      r = replay_lib.finish(r, jnp.array([False, True]), jnp.zeros((2, 2)))  # lane 1: a game of 2 positions
  r = replay_lib.finish(r, jnp.array([True, False]), jnp.zeros((2, 2)))  # lane 0: a game of 8; lane 1's 6 go on
  assert list(replay_lib.size(r)) == [8, 2]
  keys = jax.random.split(jax.random.PRNGKey(0), 2)
  for by_window, expected in ((False, {0: 1 / 16, 100: 1 / 4}), (True, {0: 1 / 10, 100: 1 / 10})):
    batch = replay_lib.sample(r, keys, 4000, by_window=by_window)
    seen, weight = np.asarray(batch.obs[:, 0]), np.asarray(batch.weight)
    assert set(seen) == set(range(8)) | {100, 101}
    share = {v: weight[seen == v].sum() / weight.sum() for v in set(seen)}
    for v, x in share.items():
      assert abs(x - expected[0 if v < 100 else 100]) < 0.012, (by_window, v, x)


def test_sampling_an_empty_lane_gives_zero_weight():
  r = _add(_replay(lanes=2), [1, 2], [0, 0])
  r = replay_lib.finish(r, jnp.array([True, False]), jnp.zeros((2, 2)))
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 2), 3)
  np.testing.assert_array_equal(batch.weight, [1, 1, 1, 0, 0, 0])
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 2), 3, by_window=True)
  np.testing.assert_array_equal(batch.weight, [1, 1, 1, 0, 0, 0])


@pytest.mark.parametrize("game", ["tictactoe", "connect_four", "othello", "go9", "chess", "shogi"])
def test_compact_codec_is_exact_on_random_games(game):
  from azjax import train_step as train_lib
  config = azjax.apply_overrides(azjax.preset(game, "smoke"), ["search.algorithm=gumbel"])  # mass on every legal move
  codec = train_lib.build(config).codec
  assert codec.compact
  env = make_env(game)
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 8))
  step = batched_step(env)
  roundtrip = jax.jit(jax.vmap(lambda *x: codec.decode(*codec.encode(*x))))
  key = jax.random.PRNGKey(1)
  for _ in range(40):
    key, k1, k2 = jax.random.split(key, 3)
    legal = state.legal_action_mask
    policy = jnp.where(legal, jax.random.uniform(k1, legal.shape) + 1e-3, 0.0)  # a policy over every legal move
    policy = policy / policy.sum(-1, keepdims=True)
    obs, back_policy, back_legal = roundtrip(state.observation, policy, legal)
    assert obs.dtype == state.observation.dtype
    np.testing.assert_array_equal(np.asarray(obs), np.asarray(state.observation))
    np.testing.assert_array_equal(np.asarray(back_policy), np.asarray(policy))
    np.testing.assert_array_equal(np.asarray(back_legal), np.asarray(legal))
    state = step(state, jax.random.categorical(k2, jnp.where(legal, 0.0, -jnp.inf)))


def test_compact_chess_position_is_nineteen_times_smaller():
  from azjax import train_step as train_lib
  sizes = {}
  for compact in (True, False):
    config = azjax.apply_overrides(azjax.preset("chess", "smoke"), [f"replay.compact={compact}"])
    program = train_lib.build(config)
    replay = jax.eval_shape(lambda: replay_lib.init(1, 1, train_lib._observation(program.env), program.num_actions,
                                                    program.codec))
    sizes[compact] = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(replay))
  # Dense: 30,464 B float32 observation + 18,688 B policy + 4,672 B legal mask (+ mover, value, counters).
  # Compact: 117 planes x 64 bits + 2 float32 = 944 B, 218 x (4 + 2) B policy entries, 584 B of legal bits.
  assert sizes[False] - sizes[True] == (30464 + 18688 + 4672) - (944 + 218 * 6 + 584)
  assert sizes[False] / sizes[True] > 18.5  # 53,840 B against 2,852 B


def test_the_codec_travels_with_the_replay():
  """Chosen once at init; add and sample read it from the replay itself, through jit and vmap."""
  config = azjax.preset("chess", "smoke")
  from azjax import train_step as train_lib
  program = train_lib.build(config)
  obs = train_lib._observation(program.env)
  replay = replay_lib.init(2, 4, obs, program.num_actions, program.codec)
  assert replay.codec is program.codec and replay.obs.dtype == jnp.uint8  # bits, not float32 planes
  state = batched_init(program.env)(jax.random.split(jax.random.PRNGKey(0), 2))
  policy = state.legal_action_mask / state.legal_action_mask.sum(-1, keepdims=True)
  replay = jax.jit(replay_lib.add)(replay, state.observation, policy, state.legal_action_mask,
                                   state.current_player)
  replay = replay_lib.finish(replay, jnp.array([True, True]), jnp.array([[1.0, -1.0]] * 2))
  assert jax.jit(lambda r: r)(replay).codec == program.codec
  batch = replay_lib.sample(replay, jax.random.split(jax.random.PRNGKey(1), 2), 1)
  np.testing.assert_array_equal(batch.obs, state.observation)
  np.testing.assert_allclose(batch.policy, policy, rtol=1e-6)


def test_a_finished_game_labels_ownership_from_each_movers_view():
  """With `network.ownership`: the final owners (player 0's view) become each position's target from its
  mover's view; a game that did not really end (resigned) gives no target, and the other lane waits."""
  r = replay_lib.init(2, 6, jax.ShapeDtypeStruct((1,), jnp.int32), 3, ownership_points=4)
  for t in range(3):
    r = _add(r, [t, 10 + t], [t % 2, (t + 1) % 2])
  final = jnp.array([[1.0, -1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
  r = replay_lib.finish(r, jnp.array([True, False]), jnp.array([[1.0, -1.0], [0.0, 0.0]]), final,
                        jnp.array([True, True]))
  np.testing.assert_array_equal(r.ownership[0, :3], [[1, -1, 0, 1], [-1, 1, 0, -1], [1, -1, 0, 1]])  # movers 0, 1, 0
  assert r.owned[0, :3].all() and not r.owned[1].any() and not r.ownership[1].any()
  r = replay_lib.finish(r, jnp.array([False, True]), jnp.array([[0.0, 0.0], [1.0, -1.0]]), final,
                        jnp.array([True, False]))  # lane 1 ends by resignation: outcome, no ownership
  assert not r.owned[1, :3].any() and r.owned[0, :3].all()
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 2), 8)
  assert batch.ownership.shape == (16, 4) and batch.owned.dtype == jnp.float32
  np.testing.assert_array_equal(batch.owned, [1.0] * 8 + [0.0] * 8)
  assert _replay().ownership is None and replay_lib.sample(_replay(), jax.random.split(jax.random.PRNGKey(0), 2),
                                                           1).ownership is None


def test_a_finished_game_labels_each_position_with_its_plies_left():
  """With `network.moves_left`: the position that made the last move has 1 ply left, the one before 2, ...,
  also where the game wrapped around its lane; the game still in play waits; without the switch there is none."""
  r = replay_lib.init(2, 4, jax.ShapeDtypeStruct((1,), jnp.int32), 3, moves_left=True)
  for t in range(2):
    r = _add(r, [t, 10 + t], [t % 2, (t + 1) % 2])
  r = replay_lib.finish(r, jnp.array([True, False]), jnp.array([[1.0, -1.0], [0.0, 0.0]]))
  np.testing.assert_array_equal(r.plies_left[0, :2], [2, 1])
  assert not r.plies_left[1].any()
  for t in range(2, 7):  # lane 1's game reaches 7 positions in 4 slots: slots hold positions 4, 5, 6, 3
    r = _add(r, [t, 10 + t], [t % 2, (t + 1) % 2])
  r = replay_lib.finish(r, jnp.array([False, True]), jnp.zeros((2, 2)))
  np.testing.assert_array_equal(r.plies_left[1], [3, 2, 1, 4])
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 2), 8)
  assert set(batch.plies_left[8:].tolist()) <= {1.0, 2.0, 3.0, 4.0} and batch.plies_left.dtype == jnp.float32
  assert _replay().plies_left is None and replay_lib.sample(_replay(), jax.random.split(jax.random.PRNGKey(0), 2),
                                                            1).plies_left is None


def _add_reply(r, t, mover):
  """Adds position t to the one lane, its policy identifying it: mass t / 10 on move 0, the rest on move 1."""
  policy = jnp.array([[t / 10, 1 - t / 10, 0.0]])
  return replay_lib.add(r, jnp.array([[t]]), policy, jnp.array([[True, True, t % 2 == 0]]), jnp.array([mover]))


def test_a_sampled_position_comes_with_its_opponents_reply_within_its_game():
  """With `network.opponent_policy`: the next position's policy and legal moves, also across the ring's wrap;
  none after a game's last move or where the next position's game is still in play."""
  r = replay_lib.init(1, 5, jax.ShapeDtypeStruct((1,), jnp.int32), 3, replies=True)
  ends = {2: [[1.0, -1.0]], 6: [[-1.0, 1.0]]}  # game A: positions 0-2, B: 3-6, C: 7 on
  for t in range(9):
    r = _add_reply(r, t, t % 2)
    if t in ends:
      r = replay_lib.finish(r, jnp.array([True]), jnp.array(ends[t]))
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 1), 64)
  seen = {int(t): (float(w), b) for t, w, b in zip(batch.obs[:, 0], batch.replied, range(64))}
  assert set(seen) == {4, 5, 6}  # the ring holds 4-8; 7 and 8 are game C's, in play
  for t, (replied, b) in seen.items():
    assert replied == (1.0 if t != 6 else 0.0)  # 6 made B's last move
    if replied:
      np.testing.assert_allclose(batch.reply_policy[b], [(t + 1) / 10, 1 - (t + 1) / 10, 0.0], rtol=1e-6)
      np.testing.assert_array_equal(batch.reply_legal[b], [True, True, (t + 1) % 2 == 0])
  assert _replay().last is None and replay_lib.sample(_replay(), jax.random.split(jax.random.PRNGKey(0), 2),
                                                      1).reply_policy is None


def test_the_compact_codec_decodes_a_reply_as_it_stored_it():
  from azjax import train_step as train_lib
  program = train_lib.build(azjax.preset("chess", "smoke"))
  replay = replay_lib.init(1, 4, train_lib._observation(program.env), program.num_actions, program.codec,
                           replies=True)
  state = batched_init(program.env)(jax.random.split(jax.random.PRNGKey(0), 1))
  policies = []
  for t in range(2):
    policy = jnp.where(state.legal_action_mask, jnp.arange(program.num_actions) + 1.0, 0.0)
    policies.append((policy / policy.sum(-1, keepdims=True), state.legal_action_mask))
    replay = replay_lib.add(replay, state.observation, *policies[-1], state.current_player)
    state = batched_step(program.env)(state, jnp.argmax(state.legal_action_mask, -1))
  replay = replay_lib.finish(replay, jnp.array([True]), jnp.zeros((1, 2)))
  batch = replay_lib.sample(replay, jax.random.split(jax.random.PRNGKey(3), 1), 16)
  first = np.asarray(batch.replied) == 1.0
  assert 0 < first.sum() < 16  # the first position has a reply, the second (the game's last) none
  np.testing.assert_allclose(batch.reply_policy[first], np.repeat(policies[1][0], first.sum(), 0), rtol=1e-6)
  np.testing.assert_array_equal(batch.reply_legal[first], np.repeat(policies[1][1], first.sum(), 0))


def test_a_sampled_position_comes_with_its_boards_8_and_32_plies_later_within_its_game():
  """With `network.future_position` (KataGo's future-position target): each sampled position's boards
  config.FUTURE_PLIES later, or past its game's end its game's last position with the same mover; across the ring's
  wrap; never a board of the next game."""
  from azjax.config import FUTURE_PLIES
  assert FUTURE_PLIES == (8, 32)
  digits = lambda t: np.array([(t // 3 ** d) % 3 - 1 for d in range(4)], np.int8)  # position t's board names it
  r = replay_lib.init(1, 48, jax.ShapeDtypeStruct((1,), jnp.int32), 3, board_points=4)
  ends = {40: [[1.0, -1.0]], 51: [[0.0, 0.0]], 55: [[-1.0, 1.0]]}  # games 0-40, 41-51 (12 plies), 52-55; 56 in play
  for t in range(58):
    r = replay_lib.add(r, jnp.array([[t]]), jnp.ones((1, 3)) / 3, jnp.ones((1, 3), bool), jnp.array([t % 2]),
                       board=jnp.asarray(digits(t))[None])
    if t in ends:
      r = replay_lib.finish(r, jnp.array([True]), jnp.array(ends[t]))
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 1), 512)
  games = [(0, 40), (41, 51), (52, 55)]
  # by hand: 8 and 32 plies on, or the game's last position with t's mover (41-51 ends on an even distance from 41)
  want = {10: (18, 40), 33: (39, 39), 41: (49, 51), 42: (50, 50), 50: (50, 50), 53: (55, 55), 54: (54, 54)}
  seen = set()
  for t, future in zip(np.asarray(batch.obs[:, 0]), np.asarray(batch.future)):
    start, end = next(g for g in games if g[0] <= t <= g[1])
    for h, plies in enumerate(FUTURE_PLIES):
      j = min(t + plies, t + (end - t) // 2 * 2)
      np.testing.assert_array_equal(future[:, h], digits(j), err_msg=f"position {t}, {plies} plies on")
    seen.add(int(t))
    if t in want:
      np.testing.assert_array_equal(future, np.stack([digits(j) for j in want[t]], -1))
  assert seen == set(range(10, 56))  # the ring holds 10-57; 56-57 are a game in play
  assert batch.future.shape == (512, 4, 2) and batch.future.dtype == jnp.float32
  assert _replay().board is None and replay_lib.sample(_replay(), jax.random.split(jax.random.PRNGKey(0), 2),
                                                       1).future is None


def test_a_sampled_position_comes_with_its_movers_material_change_2_and_8_plies_later_within_its_game():
  """With `network.material_change`: each sampled position's mover's material lead config.MATERIAL_PLIES later, less
  its lead now, or past its game's end its game's last position with the same mover; across the ring's wrap; never a
  position of the next game."""
  from azjax.config import MATERIAL_PLIES
  assert MATERIAL_PLIES == (2, 8)
  lead = lambda t: (7 * t) % 23 - 11  # position t's material lead names it
  r = replay_lib.init(1, 48, jax.ShapeDtypeStruct((1,), jnp.int32), 3, material=True)
  ends = {40: [[1.0, -1.0]], 51: [[0.0, 0.0]], 55: [[-1.0, 1.0]]}  # games 0-40, 41-51, 52-55; 56 in play
  for t in range(58):
    r = replay_lib.add(r, jnp.array([[t]]), jnp.ones((1, 3)) / 3, jnp.ones((1, 3), bool), jnp.array([t % 2]),
                       material=jnp.array([lead(t)]))
    if t in ends:
      r = replay_lib.finish(r, jnp.array([True]), jnp.array(ends[t]))
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 1), 512)
  # by hand: 2 and 8 plies on, or the game's last position with t's mover
  want = {10: (12, 18), 38: (40, 40), 39: (39, 39), 41: (43, 49), 49: (51, 51), 50: (50, 50), 53: (55, 55)}
  seen = set()
  for t, change in zip(np.asarray(batch.obs[:, 0]), np.asarray(batch.material_change)):
    end = next(e for e in (40, 51, 55) if t <= e)
    expected = [lead(min(t + plies, t + (end - t) // 2 * 2)) - lead(t) for plies in MATERIAL_PLIES]
    np.testing.assert_array_equal(change, expected, err_msg=f"position {t}")
    if t in want:
      np.testing.assert_array_equal(change, [lead(j) - lead(t) for j in want[t]])
    seen.add(int(t))
  assert seen == set(range(10, 56)) and set(want) <= seen
  assert batch.material_change.shape == (512, 2) and batch.material_change.dtype == jnp.float32
  assert _replay().material is None and replay_lib.sample(_replay(), jax.random.split(jax.random.PRNGKey(0), 2),
                                                          1).material_change is None
