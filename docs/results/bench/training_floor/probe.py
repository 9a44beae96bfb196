"""The bench's training floor (chess `cpu` preset) with its minibatch a compile-time constant (before, as at ad13c0f)
and an argument (now, `azjax.bench.training_floor`): seconds for a step's updates, FLOPs, and wall time with compiles.

  taskset -c 1 python docs/results/bench/training_floor/probe.py > docs/results/bench/training_floor/chess-cpu.txt
"""
import statistics, time, jax, jax.numpy as jnp
import azjax
from azjax import bench, learner, train_step as train_lib
from azjax.games import batched_init
from azjax.network import make_network
from azjax.replay import Batch

config = azjax.preset("chess", "cpu")
program = azjax.build(config)
c = program.config

def before(program, repeats):
  obs = batched_init(program.env)(jax.random.split(jax.random.PRNGKey(0), c.train.batch_size)).observation
  batch = Batch(obs=obs, policy=jnp.full((obs.shape[0], program.num_actions), 1.0 / program.num_actions),
                legal=jnp.ones((obs.shape[0], program.num_actions), bool), value=jnp.zeros(obs.shape[0]),
                weight=jnp.ones(obs.shape[0]))
  network = make_network(c.network, program.num_actions)
  params, bn_state = network.init(jax.random.PRNGKey(1), obs[:1])
  update = learner.make_update(network, program.optimizer, c.train)
  def loop(carry):
    return learner.scan_updates(lambda s, _: (update(*s, batch)[:3], None), carry,
                                jnp.arange(c.train.updates_per_step), c.train.update_loop)[0]
  carry = (params, bn_state, program.optimizer.init(params))
  flops = bench._flops(jax.jit(lambda s: update(*s, batch)).lower(carry).compile())
  seconds = bench._timed(jax.jit(loop), carry, repeats)
  return seconds, flops

def now(program, repeats):  # bench.training_floor: a clock (bench._clock) since 2026-12-03, a mesh since 12-05
  tick, flops = bench.training_floor(program, train_lib.make_mesh())
  return statistics.median(tick() for _ in range(repeats)), flops

for name, fn in [("now (argument)", now), ("before (constant)", before), ("now (argument)", now)]:
  start = time.perf_counter()
  seconds, flops = fn(program, 5)
  print(f"{name}: {seconds:.3f} s for {c.train.updates_per_step} updates (median of 5), {flops:.3e} FLOPs an update, "
        f"{time.perf_counter() - start:.1f} s in all (compiles included)", flush=True)
