"""A checkpoint's folders read as files, without orbax or jax: which step is whole, and its meta.

The engines answer a GUI's handshake (`uci`, `usi`) from this before the network
and its libraries load: python-chess gives that answer 10 s, and importing jax,
orbax and pgx's chess tables alone can take longer on two busy cores.
`checkpoint.py` reads and writes the arrays with orbax and picks steps with these.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from azjax.config import Config, ConfigError, from_dict

FORMAT = "azjax-checkpoint-1"
MANIFEST = "azjax-files.json"  # in each committed step: {"files": {relative path: size in bytes}}
META = "meta/metadata"  # the meta item as orbax's JsonSave writes it: plain JSON


class CheckpointError(ValueError):
  """A checkpoint that is missing, foreign or incompatible with the config."""


def reason(e: BaseException) -> str:
  """An exception in one line of at most 400 characters (an OSError by its strerror)."""
  text = e.strerror if isinstance(e, OSError) and e.strerror else (str(e) or type(e).__name__)
  text = text.strip().splitlines()[0] if text.strip() else type(e).__name__
  return text if len(text) <= 400 else text[:400] + "..."


def warning(message: str) -> None:
  print(f"warning: {message}", file=sys.stderr, flush=True)


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


def steps(directory: str | os.PathLike) -> list[int]:
  """The committed steps in a checkpoints folder, oldest first (an unfinished write's folder has a suffix).

  Every reader picks its step from this one listing (resume, load, evaluation pool, engines); orbax's
  manager only writes and prunes."""
  directory = Path(directory)
  return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit() and p.is_dir()) \
      if directory.is_dir() else []


def latest_step(directory: str | os.PathLike) -> int | None:
  """The newest committed step in a checkpoints folder, or None (whole or not: see `latest_meta`)."""
  found = steps(directory)
  return found[-1] if found else None


def damage(folder: str | os.PathLike) -> list[str]:
  """What is missing or truncated in one step's folder, each named by its path in it ([] when nothing is).

  Checked against the step's azjax-files.json; a step without one (written before it existed, or
  killed between orbax's commit and writing it) is checked for its items only."""
  folder = Path(folder)
  if not folder.is_dir():
    return [f"the folder {folder} is missing"]
  try:
    files = json.loads((folder / MANIFEST).read_text())["files"]
    if not isinstance(files, dict):
      raise TypeError(files)
  except FileNotFoundError:
    files = {"state": None, "model": None, META: None}
  except (OSError, ValueError, KeyError, TypeError):
    return [f"{MANIFEST} is unreadable"]
  problems, missing = [], set()
  for name, size in files.items():
    path = folder / name
    if not path.exists():
      parts = name.split("/")  # name the outermost folder that is gone, once
      folders = ["/".join(parts[:i]) for i in range(1, len(parts))]
      gone = next((f + "/" for f in folders if not (folder / f).exists()),
                  name + ("/" if size is None and "/" not in name else ""))
      if gone not in missing:
        missing.add(gone)
        problems.append(f"{gone} is missing")
    elif size is not None and path.stat().st_size != size:
      actual = path.stat().st_size
      problems.append(f"{name} is truncated ({actual} of {size} bytes)" if actual < size
                      else f"{name} has {actual} bytes, not {size}")
  return problems


def describe(problems: list[str]) -> str:
  return ", ".join(problems[:4]) + (f" and {len(problems) - 4} more" if len(problems) > 4 else "")


def intact_meta(folder: str | os.PathLike) -> tuple[dict | None, list[str]]:
  """(the step's meta, []) when nothing in its folder is damaged, else (None, what is damaged).

  CheckpointError if the meta reads but is not an azjax checkpoint's (foreign, not damaged)."""
  folder = Path(folder)
  problems = damage(folder)
  if problems:
    return None, problems
  try:
    meta = json.loads((folder / META).read_text())
  except (OSError, ValueError) as e:
    return None, [f"meta/ could not be read ({reason(e)})"]
  if not isinstance(meta, dict) or meta.get("format") != FORMAT:
    raise CheckpointError(f"{folder.parent} step {folder.name} is not an azjax checkpoint")
  return meta, []


def latest_meta(directory: str | os.PathLike, warn=None) -> dict:
  """The meta of the newest step that is not damaged (CheckpointError naming each damaged one if none is);
  `warn`, if given, hears of each damaged newer step passed over."""
  directory, found = Path(directory), []
  if not steps(directory):
    raise CheckpointError(f"no checkpoint in {directory}")
  for step in reversed(steps(directory)):
    meta, problems = intact_meta(directory / str(step))
    if not problems:
      if found and warn:
        warn(f"{'; '.join(found)} in {directory}: damaged, passed over; using step {step}")
      return meta
    found.append(f"step {step}: {describe(problems)}")
  raise CheckpointError(f"no intact checkpoint in {directory} ({'; '.join(found)})")


def step_meta(directory: str | os.PathLike, step: int) -> dict:
  """The meta of one named step; CheckpointError if it is not there or names what is damaged in it."""
  directory = Path(directory)
  if step not in steps(directory):
    raise CheckpointError(f"no checkpoint step {step} in {directory} (there are {steps(directory)})")
  meta, problems = intact_meta(directory / str(step))
  if problems:
    raise CheckpointError(f"checkpoint step {step} in {directory} is damaged: {describe(problems)}")
  return meta


def meta_of(path: str | os.PathLike, step: int | None = None, warn=None) -> dict:
  """The meta an agent loads from a run directory or checkpoint: `step`'s, the path's own, else the newest
  intact one's (see `latest_meta`)."""
  directory, path_step = checkpoint_dir(path)
  step = step if step is not None else path_step
  return latest_meta(directory, warn) if step is None else step_meta(directory, step)


# Fields whose default changed after runs were saved without them, with the value those runs had: a saved config
# that lacks one keeps it, so a resumed run goes on as it was and an old checkpoint plays as it did.
SAVED_BEFORE = {("search", "play_unvisited"): True}  # the default until results section 67 (config.SearchConfig)


def config_from_meta(meta: dict) -> Config:
  """A checkpoint's (or a run directory's config.json's) Config, fields it predates set as they then were."""
  try:
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in meta["config"].items()}
    for (section, field), value in SAVED_BEFORE.items():
      if isinstance(data.get(section), dict):
        data[section].setdefault(field, value)
    return from_dict(data)
  except (ConfigError, KeyError, TypeError, AttributeError) as e:
    raise CheckpointError(f"the checkpoint's config is unreadable: {e}") from None
