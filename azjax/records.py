"""A run's logs: CSV files of rows keyed by step that survive kills, cut back to a checkpoint on
resume, and TensorBoard's event file, written where a failure can be seen."""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

from azjax.checkpoint import WriteError, reason


def read_rows(path: Path) -> list[dict]:
  """Every row of a CSV file (none if it does not exist)."""
  if not path.exists():
    return []
  with path.open() as f:
    return list(csv.DictReader(f))


def row_step(row: dict) -> int | None:
  """A row's step, or None for a row cut short (a kill mid-append) or unreadable."""
  if None in row or None in row.values():
    return None
  try:
    return int(row["step"])
  except (KeyError, ValueError):
    return None


class CsvLog:
  """A CSV file of rows keyed by step; on resume, rows after the checkpoint are dropped.

  Rewriting it is atomic and a row cut short by a kill is dropped, so a kill at any moment loses
  no row up to the checkpoint; a failed write raises WriteError naming the file."""

  def __init__(self, path: Path, keep_until: int):
    self.path, self.fields = path, None
    if path.exists():
      with path.open(newline="") as f:
        rows = []
        for r in csv.DictReader(f):
          step = row_step(r)
          if step is None or step > keep_until:
            break  # rows are in step order: the rest are after the checkpoint, or cut short
          rows.append(r)
      if rows:
        self.fields = list(rows[0])
      self._write(rows, "w")

  def _write(self, rows, mode):
    path = self.path if mode == "a" else self.path.with_name(f".{self.path.name}.tmp")
    try:
      with path.open(mode, newline="") as f:
        writer = csv.DictWriter(f, fieldnames=self.fields or [])
        if mode == "w" and self.fields:
          writer.writeheader()
        writer.writerows(rows)
      if mode == "w":
        os.replace(path, self.path)
    except OSError as e:
      raise WriteError(f"could not write {self.path}: {reason(e)}") from e

  def _widened(self, rows: list[dict]) -> bool:
    """Adds the columns of `rows` the file lacks (a resumed run's config may log more); True if any."""
    new = [k for row in rows for k in row if k not in (self.fields or [])]
    self.fields = list(dict.fromkeys((self.fields or []) + new))
    return bool(new)

  def append(self, row: dict):
    if self._widened([row]):  # the first row, or new columns: the file is rewritten, earlier rows left blank there
      self.extend([row])
    else:
      self._write([{k: row.get(k, "") for k in self.fields}], "a")

  def extend(self, rows: list[dict]):
    """Adds `rows` together: the file is rewritten atomically, so a kill leaves all of them or none (an
    evaluation's rows: one missing would pass for an evaluation finished)."""
    if not rows:
      return
    self._widened(rows)
    self._write(read_rows(self.path) + [{k: row.get(k, "") for k in self.fields} for row in rows], "w")


class EventLog:
  """TensorBoard scalars, written in the caller's thread and flushed on demand.

  tensorboardX's SummaryWriter writes from a thread of its own: when a write fails there (disk full)
  that thread dies, its bounded queue fills, and the next `add_scalar` blocks the run for ever. Here
  the same event file is written synchronously, so a failed write raises WriteError naming the file.
  Given a `purge_step`, TensorBoard hides the events at and after it that the run wrote before
  (tensorboardX's purge_step): a run resumed from the checkpoint of step s passes s + 1."""

  def __init__(self, folder: Path, purge_step: int | None = None):
    from tensorboardX.event_file_writer import EventsWriter
    from tensorboardX.proto.event_pb2 import Event, SessionLog
    from tensorboardX.summary import scalar
    self._event, self._scalar = Event, scalar
    try:
      folder.mkdir(parents=True, exist_ok=True)
      # Named by the time in seconds, as tensorboardX does, and by the first step: a run resumed
      # within the second it started must not overwrite its first file.
      self._events = EventsWriter(str(folder / "events"), filename_suffix=f".step{purge_step or 0}")
      self.path = Path(self._events._file_name)
      if purge_step:
        self._events.write_event(Event(step=purge_step, session_log=SessionLog(status=SessionLog.START)))
    except OSError as e:
      raise WriteError(f"could not write {folder}: {reason(e)}") from e

  def _do(self, what, *args):
    try:
      return what(*args)
    except OSError as e:
      raise WriteError(f"could not write {self.path}: {reason(e)}") from e

  def add_scalar(self, tag: str, value: float, step: int):
    self._do(self._events.write_event, self._event(wall_time=time.time(), step=step,
                                                   summary=self._scalar(tag, value)))

  def flush(self):
    self._do(self._events.flush)

  def close(self):
    self._do(self._events.close)
