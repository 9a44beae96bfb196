"""`train_step(state) -> (state, metrics)`: one self-play chunk and several updates, one XLA program.

The program runs per device under `jax.shard_map` over a one-axis mesh of every
device (axis `batch`): games and their replay lanes are split along the axis,
parameters and optimiser state are replicated, gradients and batch-norm moments
are summed across it. Self-play is written per shard because mctx's search,
left to automatic sharding, compiles to many all-gathers.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import chex
import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pgx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from azjax import learner, replay as replay_lib, rules, selfplay, symmetry
from azjax.config import Config, validate
from azjax.games import make_env, spec
from azjax.network import Network, make_network
from azjax.search import SearchOutput, compiler_options, make_search

AXIS = "batch"


@chex.dataclass(frozen=True)
class Best:
  """Gating [AGZ]: the network self-play plays, and the step it was trained to."""
  params: hk.Params
  bn_state: hk.State
  step: chex.Array  # [] int32


@chex.dataclass(frozen=True)
class TrainState:
  params: hk.Params  # network weights (replicated)
  bn_state: hk.State  # batch-norm moving averages (replicated)
  opt_state: optax.OptState  # optimiser state, with the learning rate it last used (replicated)
  actors: selfplay.Actors  # games in play (sharded)
  replay: replay_lib.Replay  # replay lanes, one per game slot (sharded)
  step: chex.Array  # [] int32 train_steps taken (replicated)
  key: chex.PRNGKey  # (replicated)
  best: Best | None = None  # with gating (run.gate_games), self-play's network (replicated); else None


def make_mesh(devices=None) -> Mesh:
  """A one-axis mesh over `devices` (default: all)."""
  devices = jax.devices() if devices is None else devices
  return Mesh(np.asarray(devices), (AXIS,))


# A prefix of the state: games and replay split along the mesh axis, everything else replicated.
STATE_SPECS = TrainState(params=P(), bn_state=P(), opt_state=P(), actors=P(AXIS), replay=P(AXIS), step=P(), key=P(),
                         best=P())


def state_specs(seeds: int = 0) -> TrainState:
  """STATE_SPECS, behind a leading unsplit seed axis when `seeds` (a sweep's seeds in one program)."""
  if not seeds:
    return STATE_SPECS
  return jax.tree.map(lambda spec: P(None, *spec), STATE_SPECS, is_leaf=lambda x: isinstance(x, P))


def state_shardings(state: TrainState, mesh: Mesh, seeds: int = 0) -> TrainState:
  """A NamedSharding for every leaf of `state`."""
  return jax.tree.map(lambda spec, sub: jax.tree.map(lambda _: NamedSharding(mesh, spec), sub), state_specs(seeds),
                      state, is_leaf=lambda x: isinstance(x, P))


@dataclasses.dataclass(frozen=True)
class Program:
  """Everything built from a config: the env, the networks, the search and the optimiser."""
  config: Config
  env: pgx.Env
  network: Network  # inference (batch norm with moving averages; config.network.inference_dtype)
  train_network: Network  # training (float32; batch-norm moments over the device axis)
  optimizer: optax.GradientTransformation
  search: Callable[..., SearchOutput]  # search(variables, keys [B], states [B], noise=True)
  fast_search: Callable[..., SearchOutput] | None  # playout-cap randomisation's small search, or None
  codec: replay_lib.Codec  # how replay stores a position

  @property
  def num_actions(self) -> int:
    return self.env.num_actions


def build(config: Config) -> Program:
  env = make_env(config.game)
  num_actions = env.num_actions
  network = make_network(config.network, num_actions, dtype=config.network.inference_dtype)
  return Program(config=config, env=env, network=network,
                 train_network=make_network(config.network, num_actions, axis_name=AXIS),
                 optimizer=learner.make_optimizer(config.train),
                 search=make_search(env, network, config.search, config.game),
                 fast_search=make_search(env, network, config.search, config.game, config.selfplay.fast_simulations)
                 if config.selfplay.full_search_fraction < 1.0 else None,
                 codec=replay_lib.make_codec(config.replay.compact, _observation(env), num_actions,
                                             spec(config.game).scalar_planes, spec(config.game).max_legal_moves))


def _observation(env) -> jax.ShapeDtypeStruct:
  obs = jax.eval_shape(env.init, jax.random.PRNGKey(0)).observation
  return jax.ShapeDtypeStruct(obs.shape, obs.dtype)


def _init(program: Program, key) -> TrainState:
  config = program.config
  key, net_key, env_key = jax.random.split(key, 3)
  slots = jnp.arange(config.selfplay.batch_size, dtype=jnp.int32)
  actors = selfplay.init_actors(program.env, env_key, slots, config.selfplay)
  obs = actors.env.observation
  params, bn_state = program.network.init(net_key, obs[:1])
  replay = replay_lib.init(config.selfplay.batch_size, config.lane_size,
                           jax.ShapeDtypeStruct(obs.shape[1:], obs.dtype), program.num_actions, program.codec,
                           rules.GO_SIZES[config.game] ** 2 if config.network.ownership else 0,
                           moves_left=bool(config.network.moves_left), q=bool(config.train.q_ratio),
                           replies=bool(config.network.opponent_policy),
                           board_points=obs.shape[1] * obs.shape[2] if config.network.future_position else 0,
                           material=bool(config.network.material_change))
  best = Best(params=params, bn_state=bn_state, step=jnp.int32(0)) if config.run.gate_games else None
  return TrainState(params=params, bn_state=bn_state, opt_state=program.optimizer.init(params), actors=actors,
                    replay=replay, step=jnp.int32(0), key=key, best=best)


# Each use of a run's seed draws from its own stream. (Offsets like seed + 1 collided: seed 1's
# training stream was seed 0's evaluation stream.)
KEY_PURPOSES = ("train", "eval", "anchor", "gate")


def seed_key(seed: int, purpose: str = "train") -> jax.Array:
  """The key of `purpose` for a run with this seed: the one place seeds become keys."""
  return jax.random.fold_in(jax.random.PRNGKey(seed), KEY_PURPOSES.index(purpose))


def _seed_keys(seeds) -> jax.Array:
  return jnp.stack([seed_key(s) for s in seeds])


def abstract_state(program: Program, seeds: int = 0) -> TrainState:
  """The state's shapes and dtypes, without computing it (with a leading axis of `seeds` runs if nonzero)."""
  init = functools.partial(_init, program)
  if seeds:
    return jax.eval_shape(jax.vmap(init), _seed_keys(range(seeds)))
  return jax.eval_shape(init, jax.random.PRNGKey(0))


def init_state(program: Program, mesh: Mesh, seeds=None) -> TrainState:
  """The initial state, created directly with its sharding.

  With `seeds` (a list of ints), one state per seed stacked on a leading axis: the runs of a sweep
  that differ only in their seed, trained together by `make_train_step(..., seeds=len(seeds))`.
  Seed s starts exactly as a single run with `config.seed = s` does."""
  validate(program.config, mesh.size)
  if seeds is None:
    shardings = state_shardings(abstract_state(program), mesh)
    return jax.jit(_init, static_argnums=0, out_shardings=shardings)(program,
                                                                     seed_key(program.config.seed))
  shardings = state_shardings(abstract_state(program, len(seeds)), mesh, len(seeds))
  return jax.jit(jax.vmap(functools.partial(_init, program)), out_shardings=shardings)(_seed_keys(seeds))


PHASES = ("all", "selfplay", "train")


def _shard_step(program: Program, state: TrainState, coins: chex.Array, phase: str = "all"):
  """One train_step on this device's share of the games (inside shard_map).

  `coins`: the chunk's playout-cap coins (`selfplay.playout_coins`), the same for every seed.
  `phase` "selfplay" or "train" runs only that half (benchmarks time each alone)."""
  config = program.config
  key, play_key, train_key, probe_key = jax.random.split(state.key, 4)
  best = state.best  # gating: self-play plays the best network so far, not the latest
  variables = (state.params, state.bn_state) if best is None else (best.params, best.bn_state)
  metrics = {}
  if phase == "train":
    actors, replay = state.actors, state.replay
  else:
    resign_below = None
    if config.selfplay.resign:  # v_resign from the check games so far, the same for every game of the chunk
      resign_below = selfplay.resign_threshold(state.actors.calibration, config.selfplay.resign_false_positives, AXIS)
    actors, replay, (moves, outcomes) = selfplay.play_chunk(program.env, program.search, config.selfplay, variables,
                                                            state.actors, state.replay, play_key, config.game,
                                                            program.fast_search, resign_below, coins,
                                                            replay_lib.ValueTarget.of(config))
    metrics = selfplay.chunk_metrics(moves, outcomes, AXIS)
    if config.selfplay.resign:  # the calibration, with the check games this chunk finished
      metrics["resign_threshold"] = resign_below
      metrics["resign_false_positives"] = selfplay.resign_false_positives(actors.calibration, resign_below, AXIS)
  update = learner.make_update(program.train_network, program.optimizer, config.train, AXIS,
                               learner.aux_weights_of(config.network))
  per_lane = config.train.batch_size // config.selfplay.batch_size

  # Train only once every lane has finished a game. A minibatch takes the same number of rows from
  # every lane, and an empty lane's rows (weight 0) would still enter the batch-norm moments: early
  # on, hundreds of copies of the empty board beside a few real positions. Normalised by that
  # batch, the real rows blow up, and within a few updates the value head saturates for good
  # (issue 16: go9's value head stuck at -1 from step 4). Until then the updates are skipped whole.
  # From then on it stays true: a lane whose window holds only its game in progress (lanes shorter
  # than a game) gives weight-0 rows of real positions. Gating on the labelled positions in the
  # window instead stopped training for good once any lane was shorter than its game (go9 on a GPU:
  # 128-position lanes, 380 steps and no update).
  ready = jax.lax.pmin(jnp.min(replay.labelled), AXIS) > 0

  def body(carry, update_key):
    update_key, augment_key = jax.random.split(update_key)
    batch = replay_lib.sample(replay, selfplay.per_game_keys(update_key, actors.slot), per_lane,
                              by_window=config.replay.sampling == "window")
    if config.train.augment:
      keys = selfplay.per_row_keys(augment_key, actors.slot, per_lane)  # a row's symmetry: the same on any mesh
      obs, policy, legal, ownership, reply, future = jax.vmap(functools.partial(symmetry.augment,
                                                                                size=rules.GO_SIZES[config.game]))(
          keys, batch.obs, batch.policy, batch.legal, batch.ownership, (batch.reply_policy, batch.reply_legal),
          batch.future)
      batch = batch.replace(obs=obs, policy=policy, legal=legal, ownership=ownership,
                            reply_policy=reply[0], reply_legal=reply[1], future=future)
    *new, losses = update(*carry, batch)
    keep = lambda n, o: jnp.where(ready, n, o)
    return jax.tree.map(keep, tuple(new), carry), jax.tree.map(lambda x: keep(x, 0.0), losses)

  updates = 0 if phase == "selfplay" else config.train.updates_per_step
  (params, bn_state, opt_state), losses = learner.scan_updates(
      body, (state.params, state.bn_state, state.opt_state), jax.random.split(train_key, updates),
      config.train.update_loop)
  losses = jax.tree.map(lambda x: x if updates else jnp.zeros((1,), jnp.float32), losses)
  metrics.update({
      "loss": losses.total.mean(), "value_loss": losses.value.mean(), "policy_loss": losses.policy.mean(),
      "l2": losses.l2.mean(), "updates": ready * updates,
      **{f"{name}_loss": loss.mean() for name, loss in losses.aux.items()},  # e.g. ownership_loss
      "learning_rate": learner.current_learning_rate(opt_state),  # the optimiser's own, at its last update
      "replay_positions": jax.lax.psum(replay_lib.size(replay).sum(), AXIS),
      # Divergence checks the loop reads every step (loop.check_finite): 1.0 while all is well.
      "finite_loss": jnp.isfinite(losses.total).all().astype(jnp.float32),
      "finite_params": _usable(program, params, bn_state, replay, actors, probe_key).astype(jnp.float32),
  })
  if best is not None:
    metrics["selfplay_network"] = best.step  # gating: the step of the network self-play played
  state = TrainState(params=params, bn_state=bn_state, opt_state=opt_state, actors=actors, replay=replay,
                     step=state.step + 1, key=key, best=best)
  return state, metrics


def promote(state: TrainState, shardings: TrainState) -> TrainState:
  """Gating: the trained network becomes self-play's. Copied, not shared: the step donates the state,
  and one buffer cannot be donated twice."""
  copy = jax.jit(lambda s: Best(params=jax.tree.map(jnp.copy, s.params), bn_state=jax.tree.map(jnp.copy, s.bn_state),
                                step=jnp.copy(s.step)), out_shardings=shardings.best)
  return state.replace(best=copy(state))


def _usable(program: Program, params, bn_state, replay, actors, key) -> chex.Array:
  """[] bool: the parameters are finite and still evaluate positions to finite numbers.

  Finite is not enough: an exploding update leaves weights near 1e30 that are finite yet overflow
  the next forward pass. One position per lane, in inference mode, costs little."""
  finite = jnp.all(jnp.array([jnp.isfinite(p).all() for p in jax.tree.leaves(params)]))
  batch = replay_lib.sample(replay, selfplay.per_game_keys(key, actors.slot), 1)
  (logits, value), _ = program.train_network.apply(params, bn_state, batch.obs, False)
  usable = finite & jnp.isfinite(logits).all() & jnp.isfinite(value).all()
  return jax.lax.pmin(usable.astype(jnp.int32), AXIS) > 0


def make_train_step(program: Program, mesh: Mesh, seeds: int = 0, phase: str = "all"):
  """The compiled `train_step(state) -> (state, metrics)`; the state is donated.

  With `seeds`, the state carries that many runs on a leading axis (see `init_state`) and one
  program steps them all: vmapped inside each device's shard, so games stay split over devices
  and every metric gains a leading seed axis."""
  if phase not in PHASES:
    raise ValueError(f"phase={phase!r}: one of {', '.join(PHASES)}")
  body = functools.partial(_shard_step, program, phase=phase)

  def shard_step(state):  # the coins come from the step count outside the seeds' vmap: one set for all
    coins = selfplay.playout_coins(program.config.selfplay, state.step[0] if seeds else state.step)
    return (jax.vmap(body, in_axes=(0, None)) if seeds else body)(state, coins)

  specs = state_specs(seeds)
  step = jax.shard_map(shard_step, mesh=mesh, in_specs=(specs,), out_specs=(specs, P()),
                       check_vma=False)  # mctx's while-loop state starts from unvarying constants
  # Explicit shardings: left to propagation, a one-device mesh may hand back
  # equivalent but differently spelled shardings, and the next call recompiles.
  shardings = state_shardings(abstract_state(program, seeds), mesh, seeds)
  return jax.jit(step, in_shardings=(shardings,), out_shardings=(shardings, NamedSharding(mesh, P())),
                 donate_argnums=0, compiler_options=compiler_options())


def step_structure(config: Config) -> tuple:
  """The parts of a config that decide the train step's program: all but the seed (the state carries the keys),
  the run's length and its run settings, of which gating alone adds to the state (the self-play network)."""
  return (config.game, config.network, config.search, config.selfplay, config.replay,
          dataclasses.replace(config.train, num_steps=0), bool(config.run.gate_games))


# A few: each holds an executable, and a process trains few structures (a sweep's combinations take turns).
_COMPILED: dict = {}
_COMPILED_KEPT = 4


def compiled_train_step(program: Program, mesh: Mesh, seeds: int = 0):
  """`make_train_step` lowered and compiled, once per process for each step structure, mesh and seed count: a
  resumed run, a notebook training again or a sweep's next group of seeds reuses it. Tracing and lowering take
  seconds even at tic-tac-toe's smoke size, and jax's compilation cache (where it is on) covers neither; XLA's
  compile takes longer at larger sizes."""
  # jit's own cache also keys on the settings that change a trace; those a caller may set around a run.
  key = (step_structure(program.config), mesh, seeds, jax.config.jax_numpy_rank_promotion,
         jax.config.jax_enable_x64)
  if key not in _COMPILED:
    while len(_COMPILED) >= _COMPILED_KEPT:
      del _COMPILED[next(iter(_COMPILED))]  # the oldest
    _COMPILED[key] = make_train_step(program, mesh, seeds).lower(abstract_state(program, seeds)).compile()
  return _COMPILED[key]
