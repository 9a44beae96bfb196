"""The training loop: thin and impure on purpose.

It runs the compiled `train_step`, and only decides when to read metrics back
(every `run.log_every` steps, one step late so the device never waits), log
them (CSV, TensorBoard, a progress bar, run.log), evaluate and checkpoint.

A run directory holds: config.json, metrics.csv, evals.csv (every evaluation
game result), elo.csv and elo.png (the Elo curve), tb/ (TensorBoard event
files), checkpoints/ (orbax) and run.log.

A run killed at any moment loses only the work since its last checkpoint: resumed, it
continues bit for bit (an evaluation the kill interrupted is played again). A damaged
latest checkpoint is reported and the run resumes from the one before; a file that
cannot be written (disk full) stops the run with WriteError naming it.
"""

from __future__ import annotations

import csv
import dataclasses
import logging
import os
import sys
import time
from pathlib import Path

import jax
from tqdm.auto import tqdm

from azjax import arena, budget, checkpoint as ckpt, evaluation, train_step as train_lib
from azjax.agent import Agent
from azjax.config import Config, validate

# Fields that fix the shapes of the saved state: a resumed run must keep them.
STRUCTURAL_FIELDS = ("game", "network", "selfplay.batch_size", "replay.window", "replay.compact", "train.optimizer")


class DivergenceError(RuntimeError):
  """The run produced a non-finite loss or parameters; it stopped without checkpointing that state."""


def check_finite(step: int, metrics: dict, last_checkpoint) -> None:
  """Raises DivergenceError naming the step and the quantity if a step's loss or parameters are not finite."""
  flags = jax.device_get({k: metrics[k] for k in ("finite_loss", "finite_params")})
  bad = [k.removeprefix("finite_") for k, v in flags.items() if not bool(v.all())]
  if bad:
    where = f"step {last_checkpoint}" if last_checkpoint is not None else "none yet"
    raise DivergenceError(
        f"step {step}: the {' and the '.join(bad)} {'is' if len(bad) == 1 else 'are'} not finite; the run stopped "
        f"and saved nothing of it (latest good checkpoint: {where}). Resume from it with --resume, e.g. with "
        "--set train.learning_rate=<lower>")


def _write_failed(e: OSError, step: int, mngr, run_dir: Path) -> ckpt.WriteError:
  """The error that stops a run which could not write: the path, the step, and the checkpoint to resume from."""
  what = str(e) if isinstance(e, ckpt.WriteError) else f"I/O error on {e.filename or run_dir}: {ckpt._reason(e)}"
  try:
    mngr.reload()
  except Exception:
    pass
  latest = mngr.latest_step()
  kept = f"its latest checkpoint, step {latest}, is intact" if latest is not None else "it has no checkpoint yet"
  return ckpt.WriteError(f"{what}. The run stopped at step {step}; {kept}. Free some space (or make {run_dir} "
                         f"writable), then resume it with --resume {run_dir}")


@dataclasses.dataclass
class RunResult:
  run_dir: Path
  step: int
  metrics: dict  # the last logged row
  evaluation: arena.MatchResult | None  # the final evaluation against the uniform random player
  seconds: float
  ratings: object = None  # elo.Ratings of every player evaluated in the run


def _get(config: Config, path: str):
  value = config
  for part in path.split("."):
    value = getattr(value, part)
  return value


def check_compatible(saved: Config, config: Config) -> None:
  """Raises CheckpointError naming every structural field on which the configs differ."""
  diffs = [f"{f} (checkpoint {_get(saved, f)!r}, config {_get(config, f)!r})" for f in STRUCTURAL_FIELDS
           if _get(saved, f) != _get(config, f)]
  if diffs:
    raise ckpt.CheckpointError("the checkpoint does not fit this config: " + "; ".join(diffs))


class _FileHandler(logging.FileHandler):
  """A log file whose write errors stop the run (logging's own handler prints them and goes on)."""

  def handleError(self, record):
    e = sys.exc_info()[1]
    if isinstance(e, OSError):
      raise ckpt.WriteError(f"could not write {self.baseFilename}: {ckpt._reason(e)}") from e
    super().handleError(record)


def _quietly(fn, *args) -> None:
  """Logs an error where the log itself may be what cannot be written."""
  try:
    fn(*args)
  except OSError:
    pass


def _logger(run_dir: Path) -> logging.Logger:
  log = logging.getLogger(f"azjax.run.{run_dir}")
  if not log.handlers:
    log.setLevel(logging.INFO)
    log.propagate = False  # the progress bar owns the terminal
    try:
      handler = _FileHandler(run_dir / "run.log")
    except OSError as e:
      raise ckpt.WriteError(f"could not write {run_dir / 'run.log'}: {ckpt._reason(e)}") from e
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(handler)
  return log


def _row_step(row: dict) -> int | None:
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
          step = _row_step(r)
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
      raise ckpt.WriteError(f"could not write {self.path}: {ckpt._reason(e)}") from e

  def append(self, row: dict):
    if self.fields is None:
      self.fields = list(row)
      self._write([], "w")
    self._write([{k: row.get(k, "") for k in self.fields}], "a")


def train(config: Config, run_dir: str | os.PathLike | None = None, *, resume: bool = False,
          progress: bool = True, callback=None) -> RunResult:
  """Trains `config` in `run_dir` (resuming its latest checkpoint if `resume`); returns the result.

  `callback(run_dir, step)`, if given, runs whenever new rows reach metrics.csv or evals.csv (a
  notebook redraws its plots from them)."""
  started = time.time()
  devices = jax.devices()
  validate(config, len(devices))
  run_dir = Path(run_dir or f"runs/{config.game}-{time.strftime('%Y%m%d-%H%M%S')}")
  run_dir.mkdir(parents=True, exist_ok=True)
  # Evaluated checkpoints stay on disk: later evaluations play them.
  mngr = ckpt.manager(run_dir / "checkpoints", keep=config.run.keep_checkpoints, keep_period=config.run.eval_every)
  notes = [f"removed {name}: a checkpoint write the run was stopped in" for name in ckpt.remove_unfinished(
      mngr.directory)]
  if mngr.latest_step() is not None and not resume:
    raise ckpt.CheckpointError(f"{run_dir} already holds checkpoints; resume it or choose another run directory")

  program = train_lib.build(config)
  mesh = train_lib.make_mesh(devices)
  # Refuse a config too big for the machine before the long wait: the state's size is known at once,
  # the step's temporaries once XLA has compiled it (the compiled step is the one the loop runs).
  abstract = train_lib.abstract_state(program)
  budget.check(config, budget.estimate(config, abstract, mesh.size))
  train_step = train_lib.make_train_step(program, mesh).lower(abstract).compile()
  memory = budget.estimate(config, abstract, mesh.size, compiled=train_step)
  budget.check(config, memory)
  state = None
  if resume and mngr.latest_step() is not None:
    def check(meta):
      if meta["game"] != config.game:
        raise ckpt.CheckpointError(f"the checkpoint is of {meta['game']}, not {config.game}")
      check_compatible(ckpt.config_from_meta(meta), config)
    state, _ = ckpt.restore_latest(mngr, abstract, train_lib.state_shardings(abstract, mesh), check=check,
                                   warn=notes.append)
  if state is None:
    state = train_lib.init_state(program, mesh)
  step = int(jax.device_get(state.step))
  ckpt.atomic_write_text(run_dir / "config.json", config.to_json())

  log = _logger(run_dir)
  for note in notes:
    log.warning("%s", note)
    print(f"warning: {note}", file=sys.stderr, flush=True)
  log.info("%s %s on %d %s device(s), from step %d", "resuming" if step else "starting", config.game,
           len(devices), devices[0].platform, step)
  log.info("%s", memory)
  if progress:
    print(memory, flush=True)
  metrics_csv = CsvLog(run_dir / "metrics.csv", step)
  # Resumed at an evaluation step whose games are not in evals.csv (a kill cut the evaluation short), the
  # run plays that evaluation again.
  redo_eval = step > 0 and bool((config.run.eval_every and step % config.run.eval_every == 0)
                                or step == config.train.num_steps) and not any(
      _row_step(r) == step for r in evaluation.read_rows(run_dir / "evals.csv"))
  evals_csv = CsvLog(run_dir / "evals.csv", step - 1 if redo_eval else step)
  from tensorboardX import SummaryWriter  # imported here: only runs write event files
  writer = SummaryWriter(str(run_dir / "tb"), purge_step=step if step else None)

  positions_per_step = config.selfplay.batch_size * config.selfplay.chunk_plies
  bar = tqdm(total=config.train.num_steps, initial=step, disable=not progress, unit="step", dynamic_ncols=True)
  pending, last_row, final = [], {}, None
  clock, clock_step = time.time(), step

  def flush(keep_newest: bool):
    """Reads back pending metrics; `keep_newest` leaves the step still running on device for next time."""
    nonlocal clock, clock_step, last_row
    ready = pending[:-1] if keep_newest else list(pending)
    if not ready:
      return
    rows = jax.device_get(ready)
    del pending[:len(ready)]
    now = time.time()
    rate = (rows[-1][0] - clock_step) * positions_per_step / max(now - clock, 1e-9)
    clock, clock_step = now, rows[-1][0]
    for s, m in rows:
      row = {"step": s, "positions": s * positions_per_step, "positions_per_s": rate,
             **{k: float(v) for k, v in m.items()}}
      metrics_csv.append(row)
      for k, v in row.items():
        if k != "step":
          writer.add_scalar(f"train/{k}", v, row["step"])
    last_row = row
    bar.set_postfix(pos_s=f"{rate:,.0f}", loss=f"{row['loss']:.3f}", v=f"{row['value_loss']:.3f}",
                    p=f"{row['policy_loss']:.3f}")
    log.info("step %d: %s", row["step"], ", ".join(f"{k}={v:.4g}" for k, v in row.items() if k != "step"))
    if callback:
      callback(run_dir, row["step"])

  abstract_model = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), (state.params, state.bn_state))
  ratings = None

  def run_eval(step):
    nonlocal ratings
    agent = Agent(config=config, params=state.params, bn_state=state.bn_state, step=step)
    key = jax.random.fold_in(train_lib.seed_key(config.seed, "eval"), step)
    rows = evaluation.play_round(config, agent, evaluation.opponents(config, mngr, step, abstract_model), key)
    for row in rows:
      evals_csv.append(row)
      writer.add_scalar(f"eval/score_vs_{row['opponent']}", row["score"], step)
      log.info("step %d: %s against %s: %d wins, %d draws, %d losses, score %.3f (95%% CI %.3f-%.3f)", step,
               row["player"], row["opponent"], row["wins"], row["draws"], row["losses"], row["score"],
               row["score_lo"], row["score_hi"])
    ratings, curve = evaluation.fit_curve(evaluation.read_rows(run_dir / "evals.csv"))
    evaluation.write_curve(run_dir, curve)
    evaluation.plot_curve(curve, ratings, run_dir / "elo.png", f"{config.game}: Elo over training")
    now = curve[-1]
    writer.add_scalar("eval/elo", now["elo"], step)
    log.info("step %d: Elo %.0f (95%% CI %.0f to %.0f) with random = 0", step, now["elo"], now["elo_lo"],
             now["elo_hi"])
    vs_random = rows[0]
    result = arena.MatchResult(wins=vs_random["wins"], draws=vs_random["draws"], losses=vs_random["losses"])
    return result, now

  def evaluate(step):
    result, now = run_eval(step)
    if callback:
      callback(run_dir, step)
    bar.write(f"step {step}: Elo {now['elo']:.0f} ({now['elo_lo']:.0f} to {now['elo_hi']:.0f}); "
              f"against uniform random: {result}")
    return result

  try:
    if redo_eval:
      final = evaluate(step)
    previous = None
    while step < config.train.num_steps:
      state, metrics = train_step(state)
      step += 1
      pending.append((step, metrics))
      bar.update(1)
      if previous is not None:  # the step before this one has finished: reading its flags does not stall
        check_finite(*previous, mngr.latest_step())
      previous = (step, metrics)
      last = step == config.train.num_steps
      if step % config.run.log_every == 0 or last:
        flush(keep_newest=not last)
      evaluating = (config.run.eval_every and step % config.run.eval_every == 0) or last
      if step % config.run.checkpoint_every == 0 or evaluating:
        check_finite(step, metrics, mngr.latest_step())  # never checkpoint a diverged state
        flush(keep_newest=False)  # every logged row up to a checkpoint survives a crash after it
        ckpt.save(mngr, state, config)  # an evaluated network is always on disk: later evaluations play it
      if evaluating:
        final = evaluate(step)
  except DivergenceError as e:
    flush(keep_newest=False)  # the rows up to the bad step show how it diverged
    _quietly(log.error, "%s", e)
    raise
  except OSError as e:  # disk full or unwritable: stop, naming the path; the last checkpoint stays as it was
    error = _write_failed(e, step, mngr, run_dir)
    _quietly(log.error, "%s", error)
    raise error from e
  finally:
    stopping = sys.exc_info()[1] is not None  # then an error closing the event file must not replace it
    bar.close()
    try:
      writer.close()
    except OSError:
      if not stopping:
        raise
  seconds = time.time() - started
  log.info("finished at step %d in %.1f s", step, seconds)
  return RunResult(run_dir=run_dir, step=step, metrics=last_row, evaluation=final, seconds=seconds,
                   ratings=ratings)
