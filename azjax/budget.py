"""Will a config fit the machine? Checked before the long wait, from the state's shapes and XLA's own
memory analysis of the compiled step, against the device's memory (host RAM on a CPU).

A refusal is a ConfigError that names the field to lower and a value that fits.
"""

from __future__ import annotations

import dataclasses
import os

import jax

from azjax.config import Config, ConfigError

GB = 1e9


def available_bytes(device) -> int:
  """Memory one device may use: its allocator's limit on an accelerator, the host's available RAM on a CPU."""
  stats = device.memory_stats() if device.platform != "cpu" else None
  if stats and stats.get("bytes_limit"):
    return int(stats["bytes_limit"])
  try:
    with open("/proc/meminfo") as f:
      info = dict(line.split(":", 1) for line in f)
    return int(info["MemAvailable"].split()[0]) * 1024
  except (OSError, KeyError, ValueError):
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def nbytes(tree) -> int:
  return sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(tree))


@dataclasses.dataclass(frozen=True)
class Estimate:
  """Bytes per device: the state (replay included), the step's temporaries, and what the device has."""
  state: int
  replay: int
  temp: int | None  # None before compiling
  available: int

  @property
  def total(self) -> int:
    return self.state + (self.temp or 0)

  def __str__(self) -> str:
    temp = f" + {self.temp / GB:.2f} GB of the step's temporaries" if self.temp is not None else ""
    return (f"memory per device: {self.state / GB:.2f} GB of state ({self.replay / GB:.2f} GB of it replay){temp}"
            f" = {self.total / GB:.2f} GB; the device has {self.available / GB:.1f} GB available")


def estimate(config: Config, abstract_state, num_devices: int, compiled=None, device=None) -> Estimate:
  """The estimate for a state of these shapes (`train_step.abstract_state`), split over `num_devices`."""
  temp = None
  if compiled is not None:
    m = compiled.memory_analysis()
    temp = m.temp_size_in_bytes + max(m.output_size_in_bytes - m.alias_size_in_bytes, 0)
  split = nbytes(abstract_state.actors) + nbytes(abstract_state.replay)  # the games and replay lanes are split;
  replicated = nbytes(abstract_state) - split  # every device holds the network and optimiser whole (STATE_SPECS)
  return Estimate(state=split // num_devices + replicated, replay=nbytes(abstract_state.replay) // num_devices,
                  temp=temp, available=available_bytes(device or jax.devices()[0]))


def check(config: Config, e: Estimate) -> None:
  """Raises ConfigError naming the field to lower (replay.window or selfplay.batch_size) and a value that fits."""
  if e.total <= e.available:
    return
  others = e.total - e.replay
  per_position = e.replay / config.replay.window
  games = config.selfplay.batch_size
  window = int((e.available * 0.9 - others) / per_position) // games * games
  if window >= config.train.batch_size:
    raise ConfigError("replay.window", config.replay.window,
                      f"{e}: it does not fit; at most {window} positions do (lower replay.window)")
  per_game = (e.temp or 0) / games
  fit = int(max(e.available * 0.9 - e.state, 0) / per_game) if per_game else 0
  raise ConfigError("selfplay.batch_size", games,
                    f"{e}: it does not fit; lower selfplay.batch_size (about {fit} games' search fits beside "
                    "this state) and replay.window with it")
