import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax.config import NetworkConfig
from azjax.games import make_env
from azjax.network import make_network
from conftest import batched_init, batched_step


@pytest.mark.parametrize("game", ["tictactoe", "go9"])
def test_shapes(game):
  env = make_env(game)
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 5))
  net = make_network(NetworkConfig(blocks=2, channels=8, value_hidden=16), env.num_actions)
  params, bn_state = net.init(jax.random.PRNGKey(1), state.observation)
  (logits, value), _ = net.apply(params, bn_state, state.observation, False)
  assert logits.shape == (5, env.num_actions) and value.shape == (5,)
  assert np.all(np.abs(value) <= 1.0)
  convs = [k for k in params if "conv" in k]
  assert len(convs) == 1 + 2 * 2 + 2  # stem, two per block, the two heads


@pytest.mark.parametrize("head", ["ownership", "moves_left", "future_position", "material_change"])
@pytest.mark.parametrize("pooling", [False, True])
def test_an_auxiliary_head_only_adds_parameters_so_checkpoints_without_it_keep_their_names(head, pooling):
  """Each auxiliary head (but the opponent reply's, which widens the policy's last layer) adds its own parameters and
  leaves every other one's name and shape as they were: a network without it reads the same trunk and heads."""
  obs = jnp.zeros((2, 3, 3, 2))
  plain = NetworkConfig(blocks=1, channels=8, value_hidden=8, global_pooling=pooling)
  without = jax.tree.map(jnp.shape, make_network(plain, 10).init(jax.random.PRNGKey(1), obs))
  on = NetworkConfig(**{**{f: getattr(plain, f) for f in plain.__dataclass_fields__}, head: 0.5})
  with_head = jax.tree.map(jnp.shape, make_network(on, 10).init(jax.random.PRNGKey(1), obs))
  for tree, extended in zip(without, with_head):  # params, then batch-norm state
    assert set(tree) <= set(extended) and all(tree[k] == extended[k] for k in tree), head
  assert len(with_head[0]) > len(without[0])


def test_batch_norm_train_and_eval_modes():
  env = make_env("connect_four")
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 8))
  for a in [3, 2, 4]:
    state = batched_step(env)(state, jax.random.randint(jax.random.PRNGKey(a), (8,), 0, 7))
  params, bn_state = net.init(jax.random.PRNGKey(1), state.observation)
  # Eval mode: moving averages are read, never written; the output does not depend on the rest of the batch.
  (l_all, v_all), bn_eval = net.apply(params, bn_state, state.observation, False)
  (l_one, v_one), _ = net.apply(params, bn_state, state.observation[:1], False)
  np.testing.assert_allclose(l_all[:1], l_one, atol=1e-5)
  jax.tree.map(np.testing.assert_array_equal, bn_eval, bn_state)
  # Train mode: batch statistics are used and the moving averages move.
  (l_train, _), bn_train = net.apply(params, bn_state, state.observation, True)
  assert not np.allclose(l_train, l_all)
  moved = jax.tree.leaves(jax.tree.map(lambda a, b: bool(jnp.any(a != b)), bn_train, bn_state))
  assert any(moved)


def test_untrained_network_in_eval_mode_is_not_saturated():
  env = make_env("tictactoe")
  net = make_network(NetworkConfig(blocks=2, channels=16, value_hidden=16), env.num_actions)
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 4))
  state = batched_step(env)(state, jnp.array([0, 1, 4, 8]))
  params, bn_state = net.init(jax.random.PRNGKey(1), state.observation)
  (logits, value), _ = net.apply(params, bn_state, state.observation, False)
  assert np.all(np.abs(value) < 0.99)
  assert np.all(jax.nn.softmax(logits).max(-1) < 0.99)


def test_bfloat16_inference_agrees_with_float32():
  env = make_env("go9")
  config = NetworkConfig(blocks=2, channels=32, value_hidden=32)
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 64))
  step = batched_step(env)
  for t in range(20):  # positions from random play
    legal = state.legal_action_mask
    state = step(state, jax.random.categorical(jax.random.PRNGKey(t), jnp.where(legal, 0.0, -jnp.inf)))
  f32 = make_network(config, env.num_actions)
  bf16 = make_network(config, env.num_actions, dtype="bfloat16")
  params, bn_state = f32.init(jax.random.PRNGKey(1), state.observation)
  (l32, v32), _ = f32.apply(params, bn_state, state.observation, False)
  (l16, v16), bn_out = bf16.apply(params, bn_state, state.observation, False)
  assert l16.dtype == v16.dtype == jnp.float32 and jax.tree.leaves(params)[0].dtype == jnp.float32
  jax.tree.map(np.testing.assert_array_equal, bn_out, bn_state)  # statistics untouched, still float32
  assert not np.array_equal(np.asarray(l16), np.asarray(l32))  # it really computed in bfloat16
  # bfloat16 keeps 8 significant bits: values agree to about 1e-2, and the preferred move mostly agrees.
  assert float(jnp.max(jnp.abs(v16 - v32))) < 0.05
  agree = jnp.argmax(jnp.where(state.legal_action_mask, l16, -jnp.inf), -1) == jnp.argmax(
      jnp.where(state.legal_action_mask, l32, -jnp.inf), -1)
  assert float(agree.mean()) > 0.8


def test_global_pooling_carries_a_corner_across_the_board_in_one_block():
  """`network.global_pooling` (KataGo): with it a stone at one corner changes the trunk at the far corner after
  one block (seen through the per-point ownership head); without it the stem and one block's three 3x3
  convolutions reach 3 points, not the 8 between the corners. Off, the network's parameters are the papers'."""
  env = make_env("go9")
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 4))
  state = batched_step(env)(state, jnp.array([10, 20, 30, 40]))
  obs = state.observation.astype(jnp.float32)
  moved = obs.at[:, 0, 0, :2].set(1.0 - obs[:, 0, 0, :2])  # stones flipped at the corner (0, 0)
  far = {}
  for pooling in (False, True):
    net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8, ownership=1.0, global_pooling=pooling),
                       env.num_actions)
    params, bn_state = net.init(jax.random.PRNGKey(1), obs)
    own = lambda o: net.apply_heads(params, bn_state, o, False)[0].ownership.reshape(-1, 9, 9)
    far[pooling] = float(jnp.max(jnp.abs(own(moved)[:, 4:, 4:] - own(obs)[:, 4:, 4:])))
    (_, value), _ = net.apply(params, bn_state, obs, False)
    assert value.shape == (4,) and np.all(np.abs(value) < 1.0)
    linears = [k for k in params if "linear" in k]
    assert len(linears) == 3 + (1 if pooling else 0)  # policy, value's two; one per block with pooling
  assert far[False] == 0.0 and far[True] > 1e-4


def test_liberty_planes_carry_a_chains_liberties_along_it_in_one_block():
  """`network.liberties` (KataGo's input planes): a white stone at one end of a black chain along the top edge
  takes its third-last liberty, and with the planes the trunk at the chain's other end, 8 points away, knows it
  after one block (seen through the per-point ownership head); without them the stem and one block reach 3 points."""
  env = make_env("go9")
  obs = jnp.zeros((1, 9, 9, 17), jnp.float32).at[0, 0, :, 0].set(1.0)  # the mover's chain: the whole top row
  obs = obs.at[0, 1, :6, 1].set(1.0)  # the opponent under its first six: liberties (1, 6), (1, 7), (1, 8)
  moved = obs.at[0, 1, 8, 1].set(1.0)  # one more: two liberties
  near = {}
  for liberties in (False, True):
    net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8, ownership=1.0, liberties=liberties),
                       env.num_actions)
    params, bn_state = net.init(jax.random.PRNGKey(1), obs)
    stem = [v["w"] for k, v in params.items() if k.endswith("conv2_d")][0]
    assert stem.shape[2] == 17 + (3 if liberties else 0)
    own = lambda o: net.apply_heads(params, bn_state, o, False)[0].ownership.reshape(-1, 9, 9)
    near[liberties] = float(jnp.max(jnp.abs(own(moved)[:, :2, :3] - own(obs)[:, :2, :3])))
  assert near[False] == 0.0 and near[True] > 1e-4


@pytest.mark.parametrize("game, planes", [("chess", 14 + 7 + 4), ("go9", 2 + 1)])
def test_a_shorter_history_reads_the_current_position_and_the_constant_planes_only(game, planes):
  """`network.history=1`: the stem reads the current position's planes and the constant ones (with chess's attack
  planes); changing an older position's planes changes nothing, changing the current one's or a constant plane does."""
  env = make_env(game)
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 4))
  for t in range(6):  # random play: the history holds earlier positions that differ from the current one
    legal = state.legal_action_mask.astype(jnp.float32)
    state = batched_step(env)(state, jax.random.categorical(jax.random.PRNGKey(t), jnp.log(legal)))
  obs = state.observation.astype(jnp.float32)
  channels = obs.shape[-1]
  per_position = (channels - 7) // 8 if game == "chess" else 2
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8, history=1, attacks=game == "chess"),
                     env.num_actions)
  params, bn_state = net.init(jax.random.PRNGKey(1), obs)
  stem = [v["w"] for k, v in params.items() if k.endswith("conv2_d")][0]
  assert stem.shape[2] == planes
  out = lambda o: net.apply(params, bn_state, o, False)[0][1]
  flip = lambda o, c: o.at[..., c].set(1.0 - o[..., c])
  np.testing.assert_array_equal(out(obs), out(obs.at[..., per_position:8 * per_position].set(1.0)))
  assert any(not np.array_equal(out(obs), out(flip(obs, c))) for c in range(per_position))  # the current position
  assert not np.array_equal(out(obs), out(flip(obs, channels - 1)))  # a constant plane (chess: no-progress; Go: colour)
  # The papers' eight positions read the older planes.
  full = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8), env.num_actions)
  fparams, fbn = full.init(jax.random.PRNGKey(1), obs)
  fout = lambda o: full.apply(fparams, fbn, o, False)[0][1]
  assert not np.array_equal(fout(obs), fout(obs.at[..., per_position:8 * per_position].set(1.0)))
