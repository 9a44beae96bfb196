"""Many processes, one program: JAX's multi-controller runtime (`jax.distributed`).

Every process (one per host: a TPU pod slice's workers, a SLURM job's tasks) runs the same
`train_step` over one global mesh of every device of every process. Each process plays the games
of its own devices and keeps their replay lanes; the updates are one all-reduce. A game slot's
randomness comes from its global index, so it does not depend on how many processes share the
games. Process 0 writes the logs, CSV files, TensorBoard files and plots, and plays the
evaluation games; every process writes its own shards of each checkpoint (orbax) and process 0
its metadata.

Start-up, in this order: `--coordinator HOST:PORT --num-processes N --process-id I`; else the
environment variables AZJAX_COORDINATOR, AZJAX_NUM_PROCESSES, AZJAX_PROCESS_ID; else, when the
environment says it is one of several SLURM tasks, Open MPI ranks or GKE TPU workers, JAX's own
detection; else a single process, as before. `--coordinator auto` (alone) asks JAX to detect the
topology wherever it can (Cloud TPU VMs, whose workers learn it from the metadata server, and
Kubernetes too).

Faults: every process sends the coordinator a heartbeat; when one dies, JAX stops every other one
(exit code 134, its message naming the lost task) within `HEARTBEAT_TIMEOUT_S`, and a collective
that loses its peer fails at once. The run then resumes from its last checkpoint.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os

import jax
import numpy as np

ENV = {"coordinator": "AZJAX_COORDINATOR", "num_processes": "AZJAX_NUM_PROCESSES", "process_id": "AZJAX_PROCESS_ID"}
CPU_DEVICES_ENV = "AZJAX_CPU_DEVICES"
# `--cpu-devices auto` stops here: untried beyond 2 cores, and past a few devices each holds too few games and
# rows to keep its core busy (the presets' 64 games would be 8 a device).
MAX_AUTO_CPU_DEVICES = 8
# A cluster JAX detects by itself, and the variable that says it runs several processes.
CLUSTERS = {"SLURM": "SLURM_NTASKS", "Open MPI": "OMPI_COMM_WORLD_SIZE", "Cloud TPU": "TPU_WORKER_HOSTNAMES"}
# A process silent this long is declared dead and the others stop (JAX's default, 100 s, is for
# large pods; a run here loses at most the work since its last checkpoint either way).
HEARTBEAT_TIMEOUT_S = 30
SHUTDOWN_TIMEOUT_S = 60  # how long a finished process waits for the others at exit


@dataclasses.dataclass(frozen=True)
class Topology:
  coordinator: str | None  # HOST:PORT of process 0's coordination service
  num_processes: int
  process_id: int


def add_arguments(parser: argparse.ArgumentParser) -> None:
  """The start-up flags of every experiment and sweep command."""
  group = parser.add_argument_group("many machines (jax.distributed; also AZJAX_COORDINATOR etc., or detected)")
  group.add_argument("--coordinator", metavar="HOST:PORT",
                     help="process 0's address, the same on every process; `auto`: JAX detects the topology")
  group.add_argument("--num-processes", type=int, metavar="N", help="how many processes take part")
  group.add_argument("--process-id", type=int, metavar="I", help="this process's index, 0 to N-1")
  add_cpu_devices_argument(group)


def add_cpu_devices_argument(parser) -> None:
  """`--cpu-devices`, read by `cpu_devices` (the experiments' and the bench's commands)."""
  parser.add_argument("--cpu-devices", metavar="N|auto",
                      help="on a machine without an accelerator, split the CPU into N devices that play and train "
                           "side by side (also AZJAX_CPU_DEVICES); default auto: one a core this process may use, "
                           f"rounded down to a power of two, at most {MAX_AUTO_CPU_DEVICES}; 1 for one device")


def split_cpu(args: argparse.Namespace | None = None, environ=os.environ) -> None:
  """Splits the CPU into `cpu_devices` devices, where JAX has not started yet (a notebook or a test keeps the
  devices it has). Raises ValueError for a bad --cpu-devices."""
  split = cpu_devices(args, environ)
  if split is not None:
    try:
      jax.config.update("jax_num_cpu_devices", split)
    except RuntimeError:  # JAX's backend is already up
      pass


def parse_known(argv=None) -> argparse.Namespace:
  """The start-up flags alone, read from the command line before anything else (the rest is left)."""
  parser = argparse.ArgumentParser(add_help=False)
  add_arguments(parser)
  return parser.parse_known_args(argv)[0]


def topology(args: argparse.Namespace | None = None, environ=os.environ) -> Topology | None:
  """The topology the flags or the AZJAX_ variables give (flags first), None when neither gives one.

  Raises ValueError naming what is missing or out of range."""
  given = {k: getattr(args, k, None) for k in ENV}
  for k, var in ENV.items():
    if given[k] is None and environ.get(var):
      given[k] = environ[var]
  if all(v is None for v in given.values()):
    return None
  if given["coordinator"] == "auto" and given["num_processes"] is None and given["process_id"] is None:
    return Topology(None, 0, 0)  # JAX detects it
  missing = [f"--{k.replace('_', '-')} (or {ENV[k]})" for k, v in given.items() if v is None]
  if missing:
    raise ValueError(f"a run on several processes needs {', '.join(missing)} as well")
  try:
    n, i = int(given["num_processes"]), int(given["process_id"])
  except ValueError:
    raise ValueError(f"--num-processes and --process-id must be integers, not {given['num_processes']!r} and "
                     f"{given['process_id']!r}") from None
  if n < 1:
    raise ValueError(f"--num-processes must be at least 1, not {n}")
  if not 0 <= i < n:
    raise ValueError(f"--process-id must be in 0..{n - 1} with --num-processes {n}, not {i}")
  if ":" not in str(given["coordinator"]):
    raise ValueError(f"--coordinator must be HOST:PORT, not {given['coordinator']!r}")
  return Topology(str(given["coordinator"]), n, i)


def detected_cluster(environ=os.environ) -> str | None:
  """The name of a cluster JAX can detect with more than one process, from its environment."""
  for name, var in CLUSTERS.items():
    value = environ.get(var, "")
    count = len([h for h in value.split(",") if h]) if name == "Cloud TPU" else int(value) if value.isdigit() else 0
    if count > 1:
      return name
  return None


def cpu_devices(args: argparse.Namespace | None = None, environ=os.environ) -> int | None:
  """How many devices to split the CPU into (`--cpu-devices`, else AZJAX_CPU_DEVICES, else auto), or None to leave
  JAX's default: where an accelerator is installed, or XLA_FLAGS already forces a host device count.

  Why: one XLA CPU device runs a step's convolutions on about one core; on 2 cores the chess `cpu` preset made 692
  self-play positions a second on one device and 1,043 on two (docs/results/learning, section 56). The devices
  share the step as processes do (`selfplay.batch_size` games and `train.batch_size` rows split evenly).
  Raises ValueError for a value that is not a positive integer or `auto`."""
  value = getattr(args, "cpu_devices", None) or environ.get(CPU_DEVICES_ENV) or "auto"
  if "xla_force_host_platform_device_count" in environ.get("XLA_FLAGS", ""):
    return None
  if value == "auto":
    if not _cpu_platform(environ):
      return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(1 << (cores.bit_length() - 1), MAX_AUTO_CPU_DEVICES)
  if not (str(value).isdigit() and int(value) >= 1):
    raise ValueError(f"--cpu-devices (or {CPU_DEVICES_ENV}) must be a positive integer or auto, not {value!r}")
  return int(value)


def initialize(args: argparse.Namespace | None = None, environ=os.environ) -> str:
  """Splits the CPU into devices (`cpu_devices`), joins the other processes (when there are any); returns the
  line that says where this process stands.

  Call before anything touches a device; a process whose JAX has already started (a notebook, a test) keeps
  the devices it has."""
  split_cpu(args, environ)
  topo, cluster = topology(args, environ), None
  if topo is None:
    cluster = detected_cluster(environ)
  if topo is not None or cluster is not None:
    if _cpu_platform(environ):
      jax.config.update("jax_cpu_collectives_implementation", "gloo")  # CPU collectives across processes
    kwargs = dict(heartbeat_timeout_seconds=HEARTBEAT_TIMEOUT_S, shutdown_timeout_seconds=SHUTDOWN_TIMEOUT_S)
    if topo is not None and topo.coordinator is not None:
      jax.distributed.initialize(topo.coordinator, topo.num_processes, topo.process_id, **kwargs)
    else:
      jax.distributed.initialize(**kwargs)
  how = f"({cluster}, detected) " if cluster else "(detected) " if topo and topo.coordinator is None else ""
  return (f"process {jax.process_index()} of {jax.process_count()} {how}with {jax.local_device_count()} of "
          f"{jax.device_count()} {jax.devices()[0].platform} devices")


def _cpu_platform(environ) -> bool:
  """JAX will run on the CPU: JAX_PLATFORMS says so, or no accelerator plugin is installed."""
  return (environ.get("JAX_PLATFORMS") or "").startswith("cpu") or _cpu_only()


def _cpu_only() -> bool:
  """No accelerator plugin is installed (looked up without starting a backend)."""
  import importlib.util
  return not any(importlib.util.find_spec(m) for m in ("jax_cuda12_plugin", "jax_cuda13_plugin", "libtpu"))


def is_main() -> bool:
  """Process 0 writes the logs and plays the evaluations."""
  return jax.process_index() == 0


def local(tree):
  """A replicated tree as arrays this process can use alone (evaluation games on process 0): on the host
  wherever the mesh has several devices, since a game's program cannot mix its arrays on all of them with
  a checkpoint's restored on one."""
  return jax.device_get(tree) if jax.device_count() > 1 else tree


def from_main(value: bool) -> bool:
  """Process 0's `value` in every process (it alone plays evaluation games)."""
  if jax.process_count() == 1:
    return value
  from jax.experimental import multihost_utils
  return bool(multihost_utils.broadcast_one_to_all(np.int32(value)))


def preempted(step: int) -> bool:
  """Whether the run stops at `step` for a preemption notice: SIGTERM (a scheduler's `scancel`, a pod's stop) to
  any process of a run of several, which JAX's preemption service catches and turns into one step that every
  process reaches. Call it at every step. A run of one process ends at SIGTERM as any program does."""
  if jax.process_count() == 1:
    return False
  from jax.experimental import multihost_utils
  return bool(multihost_utils.reached_preemption_sync_point(step))


def barrier(name: str, timeout_s: int = 3600) -> None:
  """Every process waits here until all have arrived (a no-op for one process).

  The coordination service's barrier, not a collective: gloo gives the processes only 30 s to meet
  at their first collective over a set of devices, and one process may compile for longer than
  that; the service waits `timeout_s`. (JAX has no public name for it: orbax calls it the same way.)"""
  if jax.process_count() > 1:
    from jax._src import distributed as jax_distributed
    # Every process passes the same barriers in the same order, so the count makes each name unique.
    jax_distributed.global_state.client.wait_at_barrier(f"{name}-{next(_BARRIERS)}", timeout_in_ms=timeout_s * 1000)


_BARRIERS = itertools.count()
