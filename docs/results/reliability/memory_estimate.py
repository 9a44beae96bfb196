"""Issue 19.3: the start-up memory estimate against the measured peak, per config.

python docs/results/reliability/memory_estimate.py GAME PRESET [--set ...]
Measured: the growth of the process's peak RSS from just before the state is created to after
three train steps (CPU: the device's memory is the host's)."""
import resource
import sys

import jax

import azjax
from azjax import budget, train_step as train_lib

game, preset, overrides = sys.argv[1], sys.argv[2], [a for a in sys.argv[3:] if a != "--set"]
config = azjax.apply_overrides(azjax.preset(game, preset), overrides)
program, mesh = azjax.build(config), azjax.make_mesh()
abstract = train_lib.abstract_state(program)
step = azjax.make_train_step(program, mesh).lower(abstract).compile()
estimate = budget.estimate(config, abstract, mesh.size, compiled=step)
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
with open("/proc/self/status") as f:
  before = next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) * 1024
state = azjax.init_state(program, mesh)
for _ in range(3):
  state, metrics = step(state)
jax.block_until_ready(state)
measured = peak() - before
print(f"{game} {preset} {' '.join(overrides)}: estimate {estimate.total / 1e9:.3f} GB "
      f"(state {estimate.state / 1e9:.3f} + temporaries {estimate.temp / 1e9:.3f}); measured peak growth "
      f"{measured / 1e9:.3f} GB; estimate / measured = {estimate.total / max(measured, 1):.2f}")
