"""Checkpoints with orbax: data only, never pickles.

A checkpoint holds three items: `state` (the whole TrainState, so a resumed run
continues bit for bit), `model` (params and batch-norm statistics, all an agent
needs) and `meta` (JSON: format, game, step and the resolved config). Trees are
stored as numbered leaves and rebuilt against the structure the config
implies, so a checkpoint can never smuggle in code or a foreign structure.

Faults. Orbax writes a step into `<step>.orbax-checkpoint-tmp` and renames it
when complete, so a process killed mid-write leaves only that folder, which no
listing counts and `remove_unfinished` deletes. Each committed step also gets
`azjax-files.json` (every file's size), so a step damaged on disk later (a file
truncated or missing) is named by `damage`; `restore_latest` then resumes from
the newest intact step and moves the damaged ones to `damaged-checkpoints/`.
A write that fails (disk full, unwritable) raises WriteError naming the path and
leaves the earlier checkpoints as they were.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
from pathlib import Path

import jax
import numpy as np
import orbax.checkpoint as ocp

from azjax import distributed
from azjax.checkpoint_files import (  # noqa: F401  (also read as ckpt.*)
    FORMAT, MANIFEST, CheckpointError, checkpoint_dir, config_from_meta, damage, describe, intact_meta, latest_meta,
    latest_step, meta_of, reason, step_meta, steps, warning)
from azjax.config import Config

ITEMS = ("state", "model", "meta")
LOCK = ".azjax-run.lock"  # in a run directory: held by the process that trains it (`hold`)
UNFINISHED = ".orbax-checkpoint-tmp"  # orbax's mark of a step (or item) whose write has not committed
DAMAGED = "damaged-checkpoints"  # beside checkpoints/: steps found damaged, kept for inspection


class WriteError(OSError):
  """A run's file or checkpoint could not be written (disk full, unwritable); the message names the path."""


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
  """Writes `path` whole or not at all (a temporary file renamed over it); WriteError names the path."""
  path = Path(path)
  tmp = path.with_name(f".{path.name}.tmp")
  try:
    tmp.write_text(text)
    os.replace(tmp, path)
  except OSError as e:
    try:
      tmp.unlink(missing_ok=True)
    except OSError:
      pass
    raise WriteError(f"could not write {path}: {reason(e)}") from e


@contextlib.contextmanager
def hold(run_dir: str | os.PathLike):
  """Holds `run_dir` for this process while the block runs; CheckpointError, naming the holder, if another
  process holds it. Two trainers in one directory would delete each other's checkpoint writes in progress
  (`remove_unfinished`) and log every evaluation twice. An advisory flock: the kernel drops it when its
  holder dies, so a killed run leaves nothing to clean up before its resume."""
  path = Path(run_dir) / LOCK
  try:
    f = open(path, "a+")
  except OSError as e:
    raise WriteError(f"could not write {path}: {reason(e)}") from e
  with f:
    try:
      fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
      f.seek(0)
      raise CheckpointError(f"{run_dir} is in use by {f.read().strip() or 'another process'} (it holds {path}); "
                            "wait for that run to stop, or choose another run directory") from None
    f.truncate(0)
    f.write(f"process {os.getpid()} on {socket.gethostname()}\n")
    f.flush()
    try:
      yield
    finally:
      fcntl.flock(f, fcntl.LOCK_UN)


def _leaves(tree) -> dict:
  return {f"{i:05d}": leaf for i, leaf in enumerate(jax.tree.leaves(tree))}


def _unleaves(treedef_source, flat: dict):
  return jax.tree.unflatten(jax.tree.structure(treedef_source), [flat[k] for k in sorted(flat)])


def reader(directory: str | os.PathLike) -> ocp.CheckpointManager:
  """A manager that reads the steps now on disk, on this process alone. A run's own manager restores at a barrier
  of every process (orbax's), so process 0, reading its evaluation's earlier networks while the others wait in
  the next train step, would wait for ever."""
  here = jax.process_index()
  # Not orbax's read_only, which logs three warnings at every evaluation: this manager is only ever restored from.
  options = ocp.CheckpointManagerOptions(create=False, enable_async_checkpointing=False,
                                         multiprocessing_options=ocp.options.MultiprocessingOptions(
                                             primary_host=here, active_processes={here}))
  return ocp.CheckpointManager(Path(directory).absolute(), options=options, item_names=ITEMS)


def manager(directory: str | os.PathLike, keep: int = 3, keep_period: int | None = None) -> ocp.CheckpointManager:
  """Keeps the latest `keep` checkpoints, and every one whose step is a multiple of `keep_period`."""
  options = ocp.CheckpointManagerOptions(max_to_keep=keep, keep_period=keep_period or None, create=True,
                                         enable_async_checkpointing=False)
  return ocp.CheckpointManager(Path(directory).absolute(), options=options, item_names=ITEMS)


def step_of(state) -> int:
  """A train state's step; a sweep's seed-stacked state has one per seed (step [S], all equal)."""
  return int(jax.device_get(state.step).max())


def save(mngr: ocp.CheckpointManager, state, config: Config, **extra) -> int:
  """Saves `state` under its step number; returns the step. `extra` goes into meta (JSON).

  A sweep's seed-stacked state saves the same way."""
  step = step_of(state)
  meta = {"format": FORMAT, "game": config.game, "step": step, "config": config.to_dict(), **extra}
  folder = Path(mngr.directory) / str(step)
  try:
    saved = mngr.save(step, args=ocp.args.Composite(
        state=ocp.args.StandardSave(_leaves(state)),
        model=ocp.args.StandardSave(_leaves((state.params, state.bn_state))),
        meta=ocp.args.JsonSave(meta)))
    mngr.wait_until_finished()
    if not saved or not folder.is_dir():
      raise FileExistsError(f"orbax did not commit step {step} (steps on disk: {steps(mngr.directory)})")
  except Exception as e:
    try:  # the failed write's threads are done before its temporary folder goes
      mngr.wait_until_finished()
    except Exception:
      pass
    remove_unfinished(mngr.directory, step)
    raise WriteError(f"could not write checkpoint step {step} to {folder}: {reason(e)}") from e
  if distributed.is_main():  # orbax has committed every process's shards; one manifest for all
    files = {p.relative_to(folder).as_posix(): p.stat().st_size for p in sorted(folder.rglob("*")) if p.is_file()}
    atomic_write_text(folder / MANIFEST, json.dumps({"format": FORMAT, "files": files}))
  return step


def remove_unfinished(directory: str | os.PathLike, step: int | None = None) -> list[str]:
  """Deletes the temporary folders of writes that never committed (all, or `step`'s); returns their names."""
  directory = Path(directory)
  if not directory.is_dir():
    return []
  removed = []
  for path in sorted(directory.iterdir()):
    if UNFINISHED in path.name and (step is None or path.name.split(".")[0] == str(step)):
      shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
      removed.append(path.name)
  return removed


def _move_aside(directory: Path, step: int) -> Path:
  """Moves a damaged step out of the checkpoints folder (so it is neither listed nor deleted); returns where."""
  target = directory.parent / DAMAGED
  target.mkdir(exist_ok=True)
  dest, n = target / str(step), 1
  while dest.exists():
    n += 1
    dest = target / f"{step}-{n}"
  os.replace(directory / str(step), dest)
  return dest


def load_model(mngr: ocp.CheckpointManager, abstract_model, step: int):
  """The network (params, batch-norm state) of one step; CheckpointError names what is damaged in it."""
  problems = damage(Path(mngr.directory) / str(step))
  if not problems:
    try:
      return restore_model(mngr, abstract_model, step)
    except Exception as e:
      problems = [f"model/ could not be read ({reason(e)})"]
  raise CheckpointError(f"checkpoint step {step} in {mngr.directory} is damaged: {describe(problems)}")


def _of_the_machine(e: Exception) -> bool:
  """Whether a restore failed for want of memory (host or device), not for what the files hold."""
  return isinstance(e, MemoryError) or "RESOURCE_EXHAUSTED" in str(e) or "out of memory" in str(e).lower()


def restore_latest(mngr: ocp.CheckpointManager, abstract_state, shardings, check=None, warn=warning):
  """Restores the newest intact step: returns (state, meta), or (None, None) when there is no step.

  A damaged newer step is reported through `warn` (the step, and the file or folder at fault) and,
  once an older one has restored, moved to damaged-checkpoints/ beside the checkpoints folder (a
  resumed run writes that step again). `check(meta)` may raise to refuse a foreign checkpoint; that
  is not damage. If no step restores, CheckpointError names each one's fault and nothing is moved."""
  directory, damaged = Path(mngr.directory), []
  for step in reversed(steps(directory)):
    meta, problems = intact_meta(directory / str(step))
    if not problems:
      if check is not None:
        check(meta)
      fault = layout_fault(directory / str(step), abstract_state)
      if fault:  # another version's state, not damage: refuse, move nothing
        raise CheckpointError(f"checkpoint step {step} in {directory} cannot be resumed by this version of azjax: "
                              f"{fault}. It was written by another version; its network still loads for play "
                              "(experiments.match, the engines)")
      try:
        state = restore_state(mngr, abstract_state, shardings, step)
      except Exception as e:
        if _of_the_machine(e):  # not the files' fault: moving the step aside would lose it
          raise CheckpointError(f"checkpoint step {step} in {directory} could not be restored: {reason(e)}. Its "
                                "files are intact and nothing was moved; resume again where there is room") from e
        problems = [f"state/ could not be read ({reason(e)})"]
    if problems:
      damaged.append((step, problems))
      continue
    for bad, why in damaged:  # every process found the same; process 0 moves them
      dest = _move_aside(directory, bad) if distributed.is_main() else directory.parent / DAMAGED / str(bad)
      warn(f"checkpoint step {bad} in {directory} is damaged: {describe(why)}; moved it to {dest}")
    if damaged:
      distributed.barrier("azjax-moved-damaged")
      mngr.reload()
      warn(f"resuming from step {step}, the latest intact checkpoint")
    return state, meta
  if damaged:
    raise CheckpointError(f"no intact checkpoint in {directory} ("
                          + "; ".join(f"step {s}: {describe(p)}" for s, p in damaged) + ")")
  return None, None


def layout_fault(folder: str | os.PathLike, abstract_state) -> str | None:
  """How a step's stored state differs from `abstract_state` (array count, shapes, dtypes), or None.

  The state is stored as numbered arrays, so a version that adds or drops a field cannot restore an
  older one; this names the first field of this version's state that the stored arrays do not match."""
  try:
    stored = ocp.PyTreeCheckpointHandler().metadata(Path(folder) / "state").tree
  except Exception:  # unreadable metadata: let the restore itself report it
    return None
  paths = jax.tree_util.tree_flatten_with_path(abstract_state)[0]
  for i, (path, leaf) in enumerate(paths):
    have = stored.get(f"{i:05d}")
    want = (tuple(leaf.shape), np.dtype(leaf.dtype))
    if have is None or (tuple(have.shape), np.dtype(have.dtype)) != want:
      found = "nothing" if have is None else f"{have.dtype}{list(have.shape)}"
      return (f"it holds {len(stored)} arrays where this version's state has {len(paths)}; array {i} "
              f"(state{jax.tree_util.keystr(path)}, {want[1]}{list(want[0])} here) is {found} there")
  if len(stored) != len(paths):
    return f"it holds {len(stored)} arrays where this version's state has {len(paths)}"
  return None


def _abstract(tree, shardings=None):
  if shardings is None:
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), tree)
  return jax.tree.map(lambda x, s: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s), tree, shardings)


def restore_state(mngr: ocp.CheckpointManager, abstract_state, shardings, step: int | None = None):
  """Restores the whole TrainState, placed with `shardings`."""
  step = latest_step(mngr.directory) if step is None else step
  target = _leaves(_abstract(abstract_state, shardings))
  restored = mngr.restore(step, args=ocp.args.Composite(state=ocp.args.StandardRestore(target)))
  return _unleaves(abstract_state, restored.state)


def restore_model(mngr: ocp.CheckpointManager, abstract_model, step: int | None = None):
  """Restores (params, bn_state) for inference, on this process's first device.

  The target names its device: a checkpoint written by several processes then loads in one."""
  step = latest_step(mngr.directory) if step is None else step
  here = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
  restored = mngr.restore(step, args=ocp.args.Composite(model=ocp.args.StandardRestore(
      _leaves(_abstract(abstract_model, jax.tree.map(lambda _: here, abstract_model))))))
  return _unleaves(abstract_model, restored.model)

