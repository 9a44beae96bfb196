"""Checkpoints with orbax: data only, never pickles.

A checkpoint holds three items: `state` (the whole TrainState, so a resumed run
continues bit for bit), `model` (params and batch-norm statistics, all an agent
needs) and `meta` (JSON: format, game, step and the resolved config). Trees are
stored as numbered leaves and rebuilt against the structure the config
implies, so a checkpoint can never smuggle in code or a foreign structure.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax
import orbax.checkpoint as ocp

from azjax.config import Config, ConfigError, from_dict

FORMAT = "azjax-checkpoint-1"
ITEMS = ("state", "model", "meta")


class CheckpointError(ValueError):
  """A checkpoint that is missing, foreign or incompatible with the config."""


def _leaves(tree) -> dict:
  return {f"{i:05d}": leaf for i, leaf in enumerate(jax.tree.leaves(tree))}


def _unleaves(treedef_source, flat: dict):
  return jax.tree.unflatten(jax.tree.structure(treedef_source), [flat[k] for k in sorted(flat)])


def manager(directory: str | os.PathLike, keep: int = 3, keep_period: int | None = None) -> ocp.CheckpointManager:
  """Keeps the latest `keep` checkpoints, and every one whose step is a multiple of `keep_period`."""
  options = ocp.CheckpointManagerOptions(max_to_keep=keep, keep_period=keep_period or None, create=True,
                                         enable_async_checkpointing=False)
  return ocp.CheckpointManager(Path(directory).absolute(), options=options, item_names=ITEMS)


def save(mngr: ocp.CheckpointManager, state, config: Config, **extra) -> int:
  """Saves `state` under its step number; returns the step. `extra` goes into meta (JSON).

  A sweep's seed-stacked state (step [S], all equal) saves the same way."""
  step = int(jax.device_get(state.step).max())
  meta = {"format": FORMAT, "game": config.game, "step": step, "config": config.to_dict(), **extra}
  mngr.save(step, args=ocp.args.Composite(
      state=ocp.args.StandardSave(_leaves(state)),
      model=ocp.args.StandardSave(_leaves((state.params, state.bn_state))),
      meta=ocp.args.JsonSave(meta)))
  mngr.wait_until_finished()
  return step


def read_meta(mngr: ocp.CheckpointManager, step: int | None = None) -> dict:
  step = mngr.latest_step() if step is None else step
  if step is None:
    raise CheckpointError(f"no checkpoint in {mngr.directory}")
  meta = mngr.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore())).meta
  if not isinstance(meta, dict) or meta.get("format") != FORMAT:
    raise CheckpointError(f"{mngr.directory} step {step} is not an azjax checkpoint")
  return meta


def _abstract(tree, shardings=None):
  if shardings is None:
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), tree)
  return jax.tree.map(lambda x, s: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s), tree, shardings)


def restore_state(mngr: ocp.CheckpointManager, abstract_state, shardings, step: int | None = None):
  """Restores the whole TrainState, placed with `shardings`."""
  step = mngr.latest_step() if step is None else step
  target = _leaves(_abstract(abstract_state, shardings))
  restored = mngr.restore(step, args=ocp.args.Composite(state=ocp.args.StandardRestore(target)))
  return _unleaves(abstract_state, restored.state)


def restore_model(mngr: ocp.CheckpointManager, abstract_model, step: int | None = None):
  """Restores (params, bn_state) for inference."""
  step = mngr.latest_step() if step is None else step
  restored = mngr.restore(step, args=ocp.args.Composite(model=ocp.args.StandardRestore(
      _leaves(_abstract(abstract_model)))))
  return _unleaves(abstract_model, restored.model)


def checkpoint_dir(path: str | os.PathLike) -> tuple[Path, int | None]:
  """Accepts a run directory, its checkpoints/ folder or one step's folder; returns (checkpoints dir, step)."""
  path = Path(path)
  if (path / "checkpoints").is_dir():
    return path / "checkpoints", None
  if path.name.isdigit() and (path / "meta").exists():
    return path.parent, int(path.name)
  if path.is_dir() and any(p.name.isdigit() for p in path.iterdir()):
    return path, None
  raise CheckpointError(f"{path} is neither a run directory nor a checkpoint")


def config_from_meta(meta: dict) -> Config:
  try:
    return from_dict(meta["config"])
  except (ConfigError, KeyError, TypeError) as e:
    raise CheckpointError(f"the checkpoint's config is unreadable: {e}") from None
