"""Throughput of the compiled step against its floor: the network passes alone.

For one config this measures, each as the median of `repeats` timed calls after a warm-up:
the whole train_step, its self-play half and its training half, each a program compiled on its
own, and their floors. The calls go in rounds, each program once a round, and each ratio is the
median of its rounds' ratios: this project's 2-core machines drift by up to 30% within a minute, so
medians taken minutes apart compared unlike machines (a self-play half once read slower than the whole
step that contains it). The floor of self-play is the same number of network forward passes (`search_calls`: plies x
(simulations + 1) calls, each over the self-play batch: one root evaluation and one per simulation) in
one loop with nothing else; the floor of training is the same number of forward+backward passes
and optimiser updates over the training batch. On many devices each floor runs on every device at once, on that
device's share of the games and of the minibatch, as the step splits them (and without the step's collectives).
FLOPs come from XLA's cost analysis of one network call (summed over the devices' shares), the peak from a large
measured matrix multiply on one device.
"""

from __future__ import annotations

import functools
import resource
import statistics
import time

import chex
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from azjax import arena, learner, selfplay, train_step as train_lib
from azjax.config import FUTURE_PLIES, MATERIAL_PLIES, Config, validate
from azjax.games import batched_init, batched_step
from azjax.network import make_network
from azjax.replay import Batch
from azjax.rules import masked_logits


def _clock(fn, arg):
  """A clock for `arg = fn(arg)` (fn donates or not): each call of the returned function runs one and returns
  its seconds. The warm-up call (the compile) is made here."""
  box = [jax.block_until_ready(fn(arg))]

  def tick() -> float:
    start = time.perf_counter()
    box[0] = jax.block_until_ready(fn(box[0]))
    return time.perf_counter() - start

  return tick


def _timed(fn, arg, repeats: int) -> float:
  """Median seconds of `repeats` calls `arg = fn(arg)` (fn donates or not) after a warm-up."""
  tick = _clock(fn, arg)
  return statistics.median(tick() for _ in range(repeats))


def _rounds(clocks: dict, repeats: int) -> dict[str, list[float]]:
  """`repeats` rounds of every clock once: per clock, its seconds in each round."""
  times = {name: [] for name in clocks}
  for _ in range(repeats):
    for name, tick in clocks.items():
      times[name].append(tick())
  return times


def on_every_device(fn, mesh: Mesh):
  """`fn` jitted to run on every device of `mesh` at once, each on its own slice of every leaf: leaves are
  [devices, ...], one slice a device (`split`). A floor's work divided as train_step divides the games."""
  local = lambda tree: jax.tree.map(lambda x: x[0], tree)
  stacked = lambda tree: jax.tree.map(lambda x: x[None], tree)
  mapped = jax.shard_map(lambda tree: stacked(fn(local(tree))), mesh=mesh, in_specs=P(train_lib.AXIS),
                         out_specs=P(train_lib.AXIS), check_vma=False)  # as train_step: pgx's unvarying constants
  # The same sharding in and out, spelled out: left to propagation, the second call would compile again.
  sharding = NamedSharding(mesh, P(train_lib.AXIS))
  return jax.jit(mapped, in_shardings=sharding, out_shardings=sharding)


def split(tree, devices: int):
  """Every leaf [B, ...] as [devices, B / devices, ...]: each device's share of the batch."""
  return jax.tree.map(lambda x: x.reshape(devices, x.shape[0] // devices, *x.shape[1:]), tree)


def replicated(tree, devices: int):
  """Every leaf as [devices, ...], the same copy for each device."""
  return jax.tree.map(lambda x: jnp.broadcast_to(x, (devices, *x.shape)), tree)


def _ratio(times: dict, top: str, *bottom: str) -> float:
  """The median over rounds of top's seconds / the sum of bottom's, each from the same round."""
  return statistics.median(t / sum(b) for t, *b in zip(times[top], *(times[name] for name in bottom)))


def _flops(lowered) -> float:
  """FLOPs of a lowered program, counted on its HLO before XLA optimises it for a platform: a GPU's compiled
  program has its convolutions as cuDNN custom calls, which count 0 (an H200's go9 figures were the dense layers
  alone, about 1/100 of the work), where the unoptimised HLO counts them on any platform as on the CPU."""
  cost = lowered.cost_analysis()
  cost = cost[0] if isinstance(cost, (list, tuple)) else cost
  return float(cost.get("flops", float("nan"))) if cost else float("nan")


def matmul_peak(repeats: int = 5) -> float:
  """Measured FLOP/s of a large float32 matrix multiply on the default device."""
  n = 4096 if jax.default_backend() != "cpu" else 1024
  a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32)
  seconds = _timed(jax.jit(functools.partial(matmul_chain, a)), a, repeats)
  return 8 * 2 * n ** 3 / seconds


def matmul_chain(a: jax.Array, x: jax.Array, links: int = 8) -> jax.Array:
  """x @ a, `links` times, each product rescaled to unit root mean square (n^2 work beside n^3), so that
  `matmul_peak`'s repeated calls multiply numbers of one scale: scaled by a constant, they fell to zero
  within three calls, and a peak measured on zeros (or denormals) is not the peak."""
  unit = lambda y: y * jax.lax.rsqrt(jnp.mean(jnp.square(y)))
  return jax.lax.fori_loop(0, links, lambda _, y: unit(y @ a), x)


def step_clock(steps: dict, phase: str, program, mesh):
  """A clock (`_clock`) of one train_step of `phase`, from a fresh state (the training phase's from a replay
  already holding finished games). `steps` holds each phase's step, compiled once and reused: compiles
  dominate a bench, and each chess configuration outran 130 s on an H200 when they were repeated."""
  state = train_lib.init_state(program, mesh)
  if phase == "train":
    for _ in range(max(2, 64 // program.config.selfplay.chunk_plies)):
      state, _ = steps["selfplay"](state)
  return _clock(lambda s: steps[phase](s)[0], state)


def search_calls(c: Config, steps) -> float:
  """Network calls over the self-play batch in one chunk: each ply a root evaluation and one per simulation.
  With playout caps (selfplay.full_search_fraction < 1) a ply searches in full where its coin says so and
  with selfplay.fast_simulations otherwise, and the coins differ from step to step: the count is the median
  over the train steps `steps` (the timed ones: 1..repeats, after the warm-up at step 0), as their time is."""
  plies, full_calls = c.selfplay.chunk_plies, c.search.num_simulations + 1
  if c.selfplay.full_search_fraction >= 1.0:
    return float(plies * full_calls)
  full = [int(selfplay.playout_coins(c.selfplay, jnp.int32(s)).sum()) for s in steps]
  return float(statistics.median(f * full_calls + (plies - f) * (c.selfplay.fast_simulations + 1) for f in full))


def inference_floor(program, calls: int, mesh: Mesh) -> tuple[object, float]:
  """(clock, FLOPs per call): the self-play step's `calls` network forward passes (`search_calls`) alone, each
  device on its share of the games."""
  c, devices = program.config, mesh.size
  keys = jax.random.split(jax.random.PRNGKey(0), c.selfplay.batch_size)
  obs = batched_init(program.env)(keys).observation.astype(jnp.float32)
  params, bn_state = program.network.init(jax.random.PRNGKey(1), obs[:1])

  def one(x):
    (logits, value), _ = program.network.apply(params, bn_state, x, False)
    return logits, value

  def loop(args):
    x, acc = args

    def body(_, acc):  # each call's input depends on the last output, so XLA cannot hoist or drop it
      logits, value = one(x + 1e-30 * acc)
      return acc + value.mean() + logits.mean()
    return x, jax.lax.fori_loop(0, calls, body, acc)

  share = split(obs, devices)
  flops = _flops(jax.jit(one).lower(share[0])) * devices
  return _clock(on_every_device(loop, mesh), (share, jnp.zeros(devices))), flops


def hashed_moves(i: chex.Array, legal: chex.Array) -> chex.Array:
  """[B] int32 a legal move in each game, scattered over the legal moves by a multiplicative hash of (i, game,
  action): a few integer operations an action, where a uniform draw (`arena.random_moves`, threefry bits for
  every action) cost as much as the game's steps themselves on chess (0.9 s of the 1.6-2.1 s that
  `selfplay_env_steps_s` measured at 64 games x 136 calls on the 2-core CPU, docs/results/bench/chess_moves)."""
  games, actions = legal.shape
  ids = (jnp.arange(games, dtype=jnp.uint32)[:, None] * jnp.uint32(actions) + jnp.arange(actions, dtype=jnp.uint32)
         + jnp.asarray(i, jnp.uint32) * jnp.uint32(0x9E3779B1))
  mixed = (ids * jnp.uint32(0x85EBCA6B)) ^ (ids >> 13)
  return jnp.argmax(jnp.where(legal, mixed * jnp.uint32(0xC2B2AE35) >> 8, 0), axis=-1).astype(jnp.int32)


def env_floor(program, calls: int, mesh: Mesh):
  """A clock of the self-play step's game steps alone: one vmapped env.step over the self-play batch (each
  device its share) per simulation and per real move (`calls`, from `search_calls`), from positions of play by
  `hashed_moves`."""
  c = program.config
  step = batched_step(program.env)
  start = batched_init(program.env)(jax.random.split(jax.random.PRNGKey(0), c.selfplay.batch_size))

  def loop(args):
    state, start = args

    def body(i, state):  # a scattered legal move in each game; a finished game starts again
      moved = step(state, hashed_moves(i, state.legal_action_mask))
      return selfplay.where_games(moved.terminated | moved.truncated, start, moved)
    return jax.lax.fori_loop(0, calls, body, state), start

  share = split(start, mesh.size)
  return _clock(on_every_device(loop, mesh), (share, share))


def training_floor(program, mesh: Mesh) -> tuple[object, float]:
  """(clock, FLOPs per update): the training step's updates alone, on a fixed minibatch, each device on its
  share of it."""
  c, devices = program.config, mesh.size
  obs = batched_init(program.env)(jax.random.split(jax.random.PRNGKey(0), c.train.batch_size)).observation
  n, uniform, ones = obs.shape[0], jnp.full((obs.shape[0], program.num_actions), 1.0 / program.num_actions), jnp.ones(
      obs.shape[0])
  legal = jnp.ones((n, program.num_actions), bool)
  # The auxiliary heads' targets where the config trains them, so that their losses stay in the program.
  aux = dict(**({"ownership": jnp.zeros((n, program.num_actions - 1)), "owned": ones} if c.network.ownership else {}),
             **({"plies_left": ones} if c.network.moves_left else {}),
             **({"reply_policy": uniform, "reply_legal": legal, "replied": ones} if c.network.opponent_policy else {}),
             **({"future": jnp.zeros((n, obs.shape[1] * obs.shape[2], len(FUTURE_PLIES)))}
                if c.network.future_position else {}),
             **({"material_change": jnp.zeros((n, len(MATERIAL_PLIES)))} if c.network.material_change else {}))
  batch = Batch(obs=obs, policy=uniform, legal=legal, value=jnp.zeros(n), weight=ones, **aux)
  network = make_network(c.network, program.num_actions)  # the training network (float32), without collectives
  params, bn_state = network.init(jax.random.PRNGKey(1), obs[:1])
  update = learner.make_update(network, program.optimizer, c.train, aux_weights=learner.aux_weights_of(c.network))

  # The minibatch is an argument, not a constant: XLA would otherwise fold what the network computes from it
  # (chess's attack planes) into the program, at compile time, and leave it out of the time.
  def loop(args):  # the updates as train_step runs them (train.update_loop: see learner.scan_updates)
    carry, batch = args
    return learner.scan_updates(lambda s, _: (update(*s, batch)[:3], None), carry,
                                jnp.arange(c.train.updates_per_step), c.train.update_loop)[0], batch

  carry, share = (params, bn_state, program.optimizer.init(params)), split(batch, devices)
  flops = _flops(jax.jit(lambda s, b: update(*s, b)).lower(carry, jax.tree.map(lambda x: x[0], share)))
  return _clock(on_every_device(loop, mesh), (replicated(carry, devices), share)), flops * devices


def random_positions(env, count: int, plies: int, key) -> tuple[jax.Array, jax.Array]:
  """(observations, legal masks) of `count` live positions from uniform random play, at depths 0..plies."""
  state = batched_init(env)(jax.random.split(key, count))
  depth = jax.random.randint(jax.random.fold_in(key, 1), (count,), 0, plies + 1)
  step = batched_step(env)
  for t in range(plies):
    moved = step(state, arena.random_moves(jax.random.fold_in(key, 2 + t), state))
    keep = (t < depth) & ~moved.terminated  # stop at the game's depth, and before the game ends
    state = selfplay.where_games(keep, moved, state)
  return state.observation, state.legal_action_mask


def precision(config: Config, variables=None, count: int = 1024, repeats: int = 5) -> dict:
  """bfloat16 against float32 inference on `count` positions from random play, with `variables`
  (a trained network's (params, bn_state); a fresh one if None): how often the best legal move is
  the same, the value's error, and the time of one call over the self-play batch in each."""
  from azjax.games import make_env, spec  # noqa: PLC0415
  from azjax.network import make_network  # noqa: PLC0415
  env = make_env(config.game)
  obs, legal = random_positions(env, count, spec(config.game).typical_plies, jax.random.PRNGKey(0))
  nets = {d: make_network(config.network, env.num_actions, dtype=d) for d in ("float32", "bfloat16")}
  params, bn_state = variables or nets["float32"].init(jax.random.PRNGKey(1), obs[:1])
  out = {d: jax.jit(lambda x, n=n: n.apply(params, bn_state, x, False)[0])(obs) for d, n in nets.items()}
  best = {d: jnp.argmax(masked_logits(o[0], legal), -1) for d, o in out.items()}
  error = jnp.abs(out["bfloat16"][1] - out["float32"][1])
  batch = obs[:config.selfplay.batch_size]
  times = {}
  for d, n in nets.items():
    call = jax.jit(lambda x, n=n: x + 1e-30 * n.apply(params, bn_state, x, False)[0][1].sum())
    times[d] = _timed(call, batch.astype(jnp.float32), repeats)
  agreement = float(jnp.mean(best["bfloat16"] == best["float32"]))
  return {"precision_positions": count, "bf16_policy_argmax_agreement": agreement,
          "bf16_value_mean_abs_error": float(error.mean()), "bf16_value_max_abs_error": float(error.max()),
          "inference_f32_s": times["float32"], "inference_bf16_s": times["bfloat16"],
          "bf16_speedup": times["float32"] / times["bfloat16"]}


def program_bytes(compiled) -> int:
  """Device bytes a compiled program needs: arguments + outputs - donated + temporaries (XLA's buffer assignment)."""
  m = compiled.memory_analysis()
  return m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes + m.temp_size_in_bytes


def selfplay_memory(config: Config, batch_sizes=(8, 16, 32), budget_bytes: float = 80e9) -> dict:
  """Memory of the self-play half, from XLA's buffer assignment of the compiled program (arguments +
  outputs - donated + temporaries) at three self-play batches, fitted as fixed + per_game x batch through the
  two largest, and the largest batch that fits `budget_bytes`. The buffer assignment is not linear at a few games
  (connect four's small preset: 29 KB a game between 2 and 4 games, about 101 KB from 32 on), so the fit is
  checked at the smallest batch: `memory_fit_error` is its prediction's relative error there. Measured with a
  replay of 4 positions per game, whose own cost per position (`replay_bytes_per_position`) is reported apart.
  `step_bytes` is the whole train_step (self-play, replay and updates) at the config as given."""
  from azjax.config import apply_overrides  # noqa: PLC0415
  totals = []
  for b in batch_sizes:
    c = apply_overrides(config, [f"selfplay.batch_size={b}", "selfplay.chunk_plies=1", f"replay.window={4 * b}",
                                 f"train.batch_size={b}", "train.updates_per_step=1"])
    program, mesh = train_lib.build(c), train_lib.make_mesh(jax.devices()[:1])
    abstract = train_lib.abstract_state(program)
    totals.append(program_bytes(train_lib.make_train_step(program, mesh, phase="selfplay").lower(abstract).compile()))
    replay = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(abstract.replay)) / c.replay.window
  (b0, b1, b2), (t0, t1, t2) = batch_sizes, totals
  per_game = (t2 - t1) / (b2 - b1)
  fixed = t1 - per_game * b1
  program, mesh = train_lib.build(config), train_lib.make_mesh(jax.devices()[:1])
  whole = program_bytes(train_lib.make_train_step(program, mesh).lower(train_lib.abstract_state(program)).compile())
  return {"memory_batches": list(batch_sizes), "memory_bytes": totals, "step_bytes": whole,
          "selfplay_fixed_bytes": fixed,
          "selfplay_bytes_per_game": per_game, "replay_bytes_per_position": replay,
          "memory_fit_error": (fixed + per_game * b0 - t0) / t0,
          "memory_budget_bytes": budget_bytes, "largest_selfplay_batch": int((budget_bytes - fixed) // per_game)}


def peak_memory() -> dict:
  """Peak device memory where the backend reports it, else the host's peak resident set."""
  stats = jax.devices()[0].memory_stats() or {}
  if "peak_bytes_in_use" in stats:
    return {"peak_device_bytes": int(stats["peak_bytes_in_use"])}
  return {"peak_host_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


MEASURES = ("throughput", "memory", "precision")


def run(config: Config, repeats: int = 5, measures=("throughput",), variables=None,
        budget_bytes: float = 80e9) -> dict:
  """The benchmark's figures, as a flat dict: `measures` picks throughput, memory and/or precision
  (bfloat16 against float32, with `variables` as the network if given)."""
  c = config
  result = {
      "game": c.game, "devices": len(jax.devices()), "platform": jax.devices()[0].platform,
      "device_kind": jax.devices()[0].device_kind, "network": f"{c.network.blocks}x{c.network.channels}",
      "inference_dtype": c.network.inference_dtype,
      "simulations": c.search.num_simulations, "selfplay_batch": c.selfplay.batch_size,
      "chunk_plies": c.selfplay.chunk_plies, "train_batch": c.train.batch_size,
      "updates_per_step": c.train.updates_per_step, "repeats": repeats}
  if "memory" in measures:
    result.update(selfplay_memory(c, budget_bytes=budget_bytes))
  if "precision" in measures:
    result.update(precision(c, variables, repeats=repeats))
  if "throughput" in measures:
    result.update(throughput(c, repeats))
  return result


def throughput(config: Config, repeats: int = 5) -> dict:
  """Compile time, the step's and each half's throughput, their floors and peak memory."""
  program, mesh = train_lib.build(config), train_lib.make_mesh()
  c = validate(config, mesh.size)  # a batch the devices do not divide is named (ConfigError) before any compile
  started = time.perf_counter()
  abstract = train_lib.abstract_state(program)  # compiled from shapes: no state of its own held through the timing
  compiled = lambda phase: train_lib.make_train_step(program, mesh, phase=phase).lower(abstract).compile()
  steps = {"all": compiled("all")}
  compile_s = time.perf_counter() - started
  steps.update((phase, compiled(phase)) for phase in ("selfplay", "train"))
  clocks = {name: step_clock(steps, phase, program, mesh)
            for name, phase in (("step", "all"), ("selfplay", "selfplay"), ("train", "train"))}
  infer_calls = round(search_calls(c, range(1, repeats + 1)))  # the steps the rounds time
  clocks["network"], infer_flops = inference_floor(program, infer_calls, mesh)
  clocks["game"] = env_floor(program, infer_calls, mesh)
  clocks["updates"], update_flops = training_floor(program, mesh)
  times = _rounds(clocks, repeats)
  median = {name: statistics.median(t) for name, t in times.items()}
  step_s, selfplay_s, train_s = median["step"], median["selfplay"], median["train"]
  infer_floor_s, env_s, train_floor_s = median["network"], median["game"], median["updates"]
  positions = c.selfplay.batch_size * c.selfplay.chunk_plies
  peak = matmul_peak(repeats)
  return {
      "compile_s": compile_s, "step_s": step_s, "selfplay_s": selfplay_s, "train_s": train_s,
      "selfplay_positions_per_s": positions / selfplay_s,
      "simulations_per_s": c.selfplay.batch_size * (infer_calls - c.selfplay.chunk_plies) / selfplay_s,
      "network_evaluations_per_s": c.selfplay.batch_size * infer_calls / selfplay_s,
      "train_steps_per_s": c.train.updates_per_step / train_s,
      "positions_trained_per_s": c.train.updates_per_step * c.train.batch_size / train_s,
      "step_positions_per_s": positions / step_s,
      "selfplay_floor_s": infer_floor_s, "train_floor_s": train_floor_s,
      "selfplay_env_steps_s": env_s,
      "selfplay_rest_s": selfplay_s - infer_floor_s - env_s,
      "selfplay_over_floor": _ratio(times, "selfplay", "network"), "train_over_floor": _ratio(times, "train", "updates"),
      "step_over_floor": _ratio(times, "step", "network", "updates"),
      "selfplay_over_network_and_game": _ratio(times, "selfplay", "network", "game"),
      "step_over_halves": _ratio(times, "step", "selfplay", "train"),
      "inference_flops_per_call": infer_flops, "update_flops": update_flops,
      "matmul_peak_flops_per_s": peak,
      "selfplay_floor_flops_per_s": infer_calls * infer_flops / infer_floor_s,
      "train_floor_flops_per_s": c.train.updates_per_step * update_flops / train_floor_s,
      **peak_memory(),
  }


ROWS = [  # (label, key, format)
    ("compile", "compile_s", "{:.1f} s"),
    ("train_step (self-play + updates)", "step_s", "{:.4g} s"),
    ("  self-play half", "selfplay_s", "{:.4g} s"),
    ("  training half", "train_s", "{:.4g} s"),
    ("self-play positions/s", "selfplay_positions_per_s", "{:,.0f}"),
    ("search simulations/s", "simulations_per_s", "{:,.0f}"),
    ("network evaluations/s", "network_evaluations_per_s", "{:,.0f}"),
    ("training updates/s", "train_steps_per_s", "{:.2f}"),
    ("positions trained/s", "positions_trained_per_s", "{:,.0f}"),
    ("floor: self-play's forward passes alone", "selfplay_floor_s", "{:.4g} s"),
    ("floor: training's updates alone", "train_floor_s", "{:.4g} s"),
    ("self-play's game steps alone", "selfplay_env_steps_s", "{:.4g} s"),
    ("self-play's rest (tree, replay, moves)", "selfplay_rest_s", "{:.4g} s"),
    ("self-play / floor", "selfplay_over_floor", "{:.2f}x"),
    ("training / floor", "train_over_floor", "{:.2f}x"),
    ("train_step / floor", "step_over_floor", "{:.2f}x"),
    ("self-play / (forward passes + game steps)", "selfplay_over_network_and_game", "{:.2f}x"),
    ("train_step / (self-play + training half)", "step_over_halves", "{:.2f}x"),
    ("FLOPs per inference call", "inference_flops_per_call", "{:.3g}"),
    ("FLOPs per update", "update_flops", "{:.3g}"),
    ("matmul peak (measured)", "matmul_peak_flops_per_s", "{:.3g} FLOP/s"),
    ("floor's inference FLOP/s", "selfplay_floor_flops_per_s", "{:.3g} FLOP/s"),
    ("floor's training FLOP/s", "train_floor_flops_per_s", "{:.3g} FLOP/s"),
    ("whole train_step at this config", "step_bytes", "{:,.0f} B"),
    ("self-play memory: fixed", "selfplay_fixed_bytes", "{:,.0f} B"),
    ("self-play memory: per game", "selfplay_bytes_per_game", "{:,.0f} B"),
    ("the fit's error at the smallest batch", "memory_fit_error", "{:+.1%}"),
    ("replay memory per position", "replay_bytes_per_position", "{:,.0f} B"),
    ("largest self-play batch in the budget", "largest_selfplay_batch", "{:,}"),
    ("bf16 vs fp32: best-move agreement", "bf16_policy_argmax_agreement", "{:.4f}"),
    ("bf16 vs fp32: value error (mean)", "bf16_value_mean_abs_error", "{:.2e}"),
    ("bf16 vs fp32: value error (max)", "bf16_value_max_abs_error", "{:.2e}"),
    ("one inference call, fp32", "inference_f32_s", "{:.4g} s"),
    ("one inference call, bf16", "inference_bf16_s", "{:.4g} s"),
    ("bf16 speed-up of one call", "bf16_speedup", "{:.2f}x"),
    # The whole benchmark's peak: the three timed programs' states (step, self-play, training) and the floors' live
    # together, so it is above what one run needs; "whole train_step at this config" (--measure memory) is that.
    ("peak device memory (whole benchmark)", "peak_device_bytes", "{:,} B"),
    ("peak host memory (RSS, whole benchmark)", "peak_host_rss_bytes", "{:,} B"),
]


def table(result: dict) -> str:
  head = (f"{result['game']}: {result['network']} network ({result['inference_dtype']} in search), "
          f"{result['simulations']} simulations, "
          f"{result['selfplay_batch']} games x {result['chunk_plies']} plies, {result['updates_per_step']} x "
          f"{result['train_batch']} updates; {result['devices']} x {result['device_kind']}; "
          f"median of {result['repeats']}")
  lines = [head]
  for label, key, fmt in ROWS:
    if key in result:
      lines.append(f"  {label:<42} {fmt.format(result[key])}")
  return "\n".join(lines)


