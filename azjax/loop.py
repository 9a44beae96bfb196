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

import contextlib
import dataclasses
import logging
import os
import sys
import time
from pathlib import Path

import jax
from tqdm.auto import tqdm

from azjax import arena, budget, checkpoint as ckpt, distributed, evaluation, learner, train_step as train_lib
from azjax.records import CsvLog, EventLog, read_rows, row_step
from azjax.config import Config, ConfigError, validate
from azjax.games import spec

# Fields that fix the shapes of the saved state, and the seed, whose keys it carries on: a resumed run must keep
# them (network.inference_dtype aside: how the network runs, not what it holds); and switches whose being on
# (non-zero) adds a part to it (the replay's search values, gating's best network): it must keep them on or off.
STRUCTURAL_FIELDS = ("game", "seed", "network", "selfplay.batch_size", "selfplay.resign_turns", "replay.window",
                     "replay.compact", "train.optimizer")
FREE_FIELDS = ("network.inference_dtype",)
STRUCTURAL_SWITCHES = ("train.q_ratio", "run.gate_games")


class DivergenceError(RuntimeError):
  """The run produced a non-finite loss or parameters; it stopped without checkpointing that state."""


def check_finite(step: int, metrics: dict, checkpoints) -> None:
  """Raises DivergenceError naming the step and the quantity if a step's loss or parameters are not finite, and
  the latest checkpoint in the folder `checkpoints` (listed only then: this runs every step)."""
  flags = jax.device_get({k: metrics[k] for k in ("finite_loss", "finite_params")})
  bad = [k.removeprefix("finite_") for k, v in flags.items() if not bool(v.all())]
  if bad:
    last_checkpoint = ckpt.latest_step(checkpoints)
    where = f"step {last_checkpoint}" if last_checkpoint is not None else "none yet"
    raise DivergenceError(
        f"step {step}: the {' and the '.join(bad)} {'is' if len(bad) == 1 else 'are'} not finite; the run stopped "
        f"and saved nothing of it (latest good checkpoint: {where}). Resume from it with --resume, e.g. with "
        "--set train.learning_rate=<lower>")


def _write_failed(e: OSError, step: int, mngr, run_dir: Path) -> ckpt.WriteError:
  """The error that stops a run which could not write: the path, the step, and the checkpoint to resume from."""
  what = str(e) if isinstance(e, ckpt.WriteError) else f"I/O error on {e.filename or run_dir}: {ckpt.reason(e)}"
  try:
    mngr.reload()
  except Exception:
    pass
  latest = ckpt.latest_step(mngr.directory)
  kept = f"its latest checkpoint, step {latest}, is intact" if latest is not None else "it has no checkpoint yet"
  return ckpt.WriteError(f"{what}. The run stopped at step {step}; {kept}. Free some space (or make {run_dir} "
                         f"writable), then resume it with --resume {run_dir}")


@dataclasses.dataclass
class RunResult:
  run_dir: Path
  step: int  # the step the run stopped at
  metrics: dict | list  # the last logged row (with seeds: one per seed)
  evaluation: arena.MatchResult | None  # the final evaluation against the uniform random player
  seconds: float
  ratings: object = None  # elo.Ratings of every player evaluated in the run
  out_of_time: bool = False  # stopped by run.max_minutes before train.num_steps (resume to continue)
  preempted: bool = False  # stopped so by a preemption notice (SIGTERM to a run of several processes)
  start_step: int = 0  # the step it started from (a resumed run's checkpoint; 0 for a new run)


def _get(config: Config, path: str):
  value = config
  for part in path.split("."):
    value = getattr(value, part)
  return value


def _fields(config: Config, path: str) -> list[str]:
  """`path`, or each of its fields where it is a section (network), less FREE_FIELDS."""
  value = _get(config, path)
  if not dataclasses.is_dataclass(value):
    return [path]
  return [f for field in dataclasses.fields(value) for f in _fields(config, f"{path}.{field.name}")
          if f not in FREE_FIELDS]


def check_compatible(saved: Config, config: Config) -> None:
  """Raises CheckpointError naming every structural field on which the configs differ."""
  diffs = [f"{f} (checkpoint {_get(saved, f)!r}, config {_get(config, f)!r})" for s in STRUCTURAL_FIELDS
           for f in _fields(config, s) if _get(saved, f) != _get(config, f)]
  diffs += [f"{f} on or off (checkpoint {_get(saved, f)!r}, config {_get(config, f)!r})" for f in STRUCTURAL_SWITCHES
            if bool(_get(saved, f)) != bool(_get(config, f))]
  if diffs:
    raise ckpt.CheckpointError("the checkpoint does not fit this config: " + "; ".join(diffs))


class _FileHandler(logging.FileHandler):
  """A log file whose write errors stop the run (logging's own handler prints them and goes on)."""

  def handleError(self, record):
    e = sys.exc_info()[1]
    if isinstance(e, OSError):
      raise ckpt.WriteError(f"could not write {self.baseFilename}: {ckpt.reason(e)}") from e
    super().handleError(record)


def _quietly(fn, *args) -> None:
  """Logs an error where the log itself may be what cannot be written."""
  try:
    fn(*args)
  except OSError:
    pass


def _quiet_logger() -> logging.Logger:
  """The log of a process other than 0: it keeps nothing (errors reach the terminal as exceptions)."""
  log = logging.getLogger("azjax.run.quiet")
  log.propagate = False
  log.addHandler(logging.NullHandler())
  return log


def _logger(run_dir: Path) -> logging.Logger:
  log = logging.getLogger(f"azjax.run.{run_dir}")
  for handler in list(log.handlers):  # the run directory was removed and made again in this process: a new file
    if not Path(handler.baseFilename).exists():
      log.removeHandler(handler)
      handler.close()
  if not log.handlers:
    log.setLevel(logging.INFO)
    log.propagate = False  # the progress bar owns the terminal
    try:
      handler = _FileHandler(run_dir / "run.log")
    except OSError as e:
      raise ckpt.WriteError(f"could not write {run_dir / 'run.log'}: {ckpt.reason(e)}") from e
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(handler)
  return log


def short_lanes(config: Config) -> list[str]:
  """A note when a lane holds fewer positions than two typical games record (it then loses their openings once it
  wraps); none for a run too short to wrap one (smoke). Without selfplay.record_fast, a game records only its
  full-search plies."""
  plies = spec(config.game).typical_plies
  recorded = 1.0 if config.selfplay.record_fast else config.selfplay.full_search_fraction
  if config.lane_size >= recorded * min(2 * plies, config.train.num_steps * config.selfplay.chunk_plies):
    return []
  each = f"{plies} plies each" + ("" if recorded == 1.0 else f", about {round(recorded * plies)} recorded")
  return [f"replay.window={config.replay.window} keeps {config.lane_size} positions per self-play game "
          f"(selfplay.batch_size={config.selfplay.batch_size}), under two typical {config.game} games "
          f"({each}): a game's first positions may be overwritten before it ends; raise replay.window"]


def unreached_drops(config: Config) -> list[str]:
  """A note for each learning-rate drop (train.lr_boundaries, counted in updates) the run cannot reach: a preset's
  drops sit at a fraction of its own train.num_steps, and a shorter run keeps them, so its rate never drops there."""
  most = config.train.num_steps * config.train.updates_per_step
  return [f"train.lr_boundaries: the drop at update {b} lies past the run's at most {most} updates "
          "(train.num_steps x train.updates_per_step), so the learning rate never drops there; set "
          "train.lr_boundaries for this length" for b in config.train.lr_boundaries if b >= most]


def train(config: Config, run_dir: str | os.PathLike | None = None, *, resume: bool = False,
          progress: bool = True, callback=None, seeds: list[int] | None = None, evaluator=None,
          desc: str | None = None) -> RunResult:
  """Trains `config` in `run_dir` (resuming its latest checkpoint if `resume`); returns the result.

  With `seeds`, the runs of `config` with those seeds train together in one program on a
  seed-stacked state (`train_step.init_state(..., seeds)`); metrics.csv gains a seed column, one
  row per seed. `evaluator` plays the evaluation games (`evaluation.RunEvaluation` for one run,
  `evaluation.SeedEvaluation` for seeds, by default). `callback(run_dir, step)`, if given, runs
  whenever new rows reach the CSV files (a notebook redraws its plots from them).

  On several processes (`distributed.initialize`), every process calls it with the same arguments;
  process 0 alone writes the logs, CSV and TensorBoard files and plays the evaluations, and holds the
  run directory (`checkpoint.hold`: a second process training in it is refused)."""
  started = time.time()
  validate(config, len(jax.devices()))
  if seeds and config.run.gate_games:
    raise ConfigError("run.gate_games", config.run.gate_games, "0 in a sweep (gating is per run)")
  if seeds and config.run.max_minutes:
    raise ConfigError("run.max_minutes", config.run.max_minutes, "0 in a sweep (a unit runs its train.num_steps)")
  run_dir = Path(run_dir or f"runs/{config.game}-{time.strftime('%Y%m%d-%H%M%S')}")
  run_dir.mkdir(parents=True, exist_ok=True)
  with ckpt.hold(run_dir) if distributed.is_main() else contextlib.nullcontext():
    return _train(config, run_dir, resume, progress, callback, seeds, evaluator, desc, started)


def _train(config: Config, run_dir: Path, resume: bool, progress: bool, callback, seeds, evaluator, desc,
           started: float) -> RunResult:
  main = distributed.is_main()
  devices = jax.devices()
  n = len(seeds) if seeds else 0
  # Every evaluated checkpoint stays on disk (orbax's keep_period): later evaluations play the latest
  # run.eval_pool of them, and all of them stay for matches after the run.
  pool = config.run.eval_every if config.run.eval_pool and not n else None
  mngr = ckpt.manager(run_dir / "checkpoints", keep=config.run.keep_checkpoints, keep_period=pool)
  notes = [f"removed {name}: a checkpoint write the run was stopped in" for name in ckpt.remove_unfinished(
      mngr.directory)] if main else []
  distributed.barrier("azjax-removed-unfinished")
  if ckpt.latest_step(mngr.directory) is not None and not resume:
    raise ckpt.CheckpointError(f"{run_dir} already holds checkpoints; resume it or choose another run directory")

  program = train_lib.build(config)
  mesh = train_lib.make_mesh(devices)
  # Refuse a config too big for the machine before the long wait: the state's size is known at once,
  # the step's temporaries once XLA has compiled it (the compiled step is the one the loop runs).
  abstract = train_lib.abstract_state(program, n)
  budget.check(config, budget.estimate(config, abstract, mesh.size))
  shardings = train_lib.state_shardings(abstract, mesh, n)
  state = None
  if resume and ckpt.latest_step(mngr.directory) is not None:
    def check(meta):
      if meta["game"] != config.game:
        raise ckpt.CheckpointError(f"the checkpoint is of {meta['game']}, not {config.game}")
      if meta.get("seeds") != (list(seeds) if n else None):
        raise ckpt.CheckpointError(f"the checkpoint holds seeds {meta.get('seeds')}, not {seeds}")
      check_compatible(ckpt.config_from_meta(meta), config)
    # Restored before the compile, so that a checkpoint this run cannot use is refused at once.
    state, _ = ckpt.restore_latest(mngr, abstract, shardings, check=check, warn=notes.append)
    if state is not None:
      state = state.replace(opt_state=learner.with_momentum(state.opt_state, config.train))
  # A run resumed at or past its train.num_steps trains nothing: say so, and skip the compile (minutes at the
  # paper's sizes); an evaluation a kill cut short is still played.
  finished = state is not None and ckpt.step_of(state) >= config.train.num_steps
  if finished:
    notes.append(f"the run already reached train.num_steps={config.train.num_steps}: nothing to train "
                 "(--set train.num_steps=N to continue it)")
  if main and state is None:  # written before the first compile (minutes at the paper's sizes): a run killed
    ckpt.atomic_write_text(run_dir / "config.json", config.to_json())  # in it can start again (--resume)
  train_step = None if finished else train_lib.compiled_train_step(program, mesh, n)
  memory = budget.estimate(config, abstract, mesh.size, compiled=train_step)
  budget.check(config, memory)
  notes += short_lanes(config)
  notes += unreached_drops(config)
  if state is None:
    distributed.barrier("azjax-init")  # the processes compile at different speeds; meet before the first
    state = train_lib.init_state(program, mesh, seeds)  # program that spans them all
  distributed.barrier("azjax-start")
  step = start_step = ckpt.step_of(state)
  if main:
    ckpt.atomic_write_text(run_dir / "config.json", config.to_json())

  log = _logger(run_dir) if main else _quiet_logger()
  for note in notes:
    log.warning("%s", note)
    print(f"warning: {note}", file=sys.stderr, flush=True)
  log.info("%s %s%s on %d %s device(s), from step %d", "resuming" if step else "starting", config.game,
           f" (seeds {seeds})" if n else "", len(devices), devices[0].platform, step)
  log.info("%s", memory)
  if progress and main:
    print(memory, flush=True)
  metrics_csv = CsvLog(run_dir / "metrics.csv", step) if main else None
  abstract_model = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), (abstract.params,
                                                                                  abstract.bn_state))
  if evaluator is None:
    evaluator = (evaluation.SeedEvaluation(config, seeds, {}) if n else
                 evaluation.RunEvaluation(config, mngr, abstract_model))
  # Resumed at an evaluation step whose games are missing (a kill cut the evaluation short), the run
  # plays that evaluation again.
  redo_eval = evaluator.open(run_dir, step) if main else False
  gating = evaluation.Gating(config) if config.run.gate_games else None
  if gating and main:
    gating.open(run_dir, step)
  # TensorBoard hides the events at and after a purge step: the checkpoint's own step stays shown (a resumed
  # run with no checkpoint yet, killed before its first, starts again at step 1: all of the first try's go).
  writer = EventLog(run_dir / "tb", purge_step=step + 1 if step or resume else None) if main else None

  positions_per_step = config.selfplay.batch_size * config.selfplay.chunk_plies
  bar = tqdm(total=config.train.num_steps, initial=step, disable=not (progress and main), unit="step",
             dynamic_ncols=True,
             desc=desc)
  pending, last_rows = [], []
  clock, clock_step = time.time(), step

  def rows_of(s: int, m: dict, rate: float) -> list[dict]:
    """One metrics.csv row per run: one, or one per seed."""
    base = {"step": s, "positions": s * positions_per_step, "positions_per_s": rate}
    if not n:
      return [{**base, **{k: float(v) for k, v in m.items()}}]
    return [{"step": s, "seed": seed, **{k: v for k, v in base.items() if k != "step"},
             **{k: float(v[i]) for k, v in m.items()}} for i, seed in enumerate(seeds)]

  def flush(keep_newest: bool):
    """Reads back pending metrics; `keep_newest` leaves the step still running on device for next time."""
    nonlocal clock, clock_step, last_rows
    ready = pending[:-1] if keep_newest else list(pending)
    if not main:  # the other processes keep no logs
      del pending[:len(ready)]
      return
    if not ready:
      return
    steps = jax.device_get(ready)
    del pending[:len(ready)]
    now = time.time()
    rate = (steps[-1][0] - clock_step) * positions_per_step / max(now - clock, 1e-9)
    clock, clock_step = now, steps[-1][0]
    for s, m in steps:
      last_rows = rows_of(s, m, rate)
      for row in last_rows:
        metrics_csv.append(row)
        for k, v in row.items():
          if k not in ("step", "seed"):
            writer.add_scalar(f"train/{k}" + (f"_seed{row['seed']}" if n else ""), v, s)
    writer.flush()
    row = last_rows[0]
    bar.set_postfix(pos_s=f"{rate:,.0f}", loss=f"{row['loss']:.3f}", v=f"{row['value_loss']:.3f}",
                    p=f"{row['policy_loss']:.3f}")
    for row in last_rows:
      log.info("step %d: %s", row["step"], ", ".join(f"{k}={v:.4g}" for k, v in row.items() if k != "step"))
    if callback:
      callback(run_dir, steps[-1][0])

  def evaluate(step):
    if not main:
      return
    report = evaluator(step, *distributed.local((state.params, state.bn_state)), last_rows)
    for k, v in report.scalars.items():
      writer.add_scalar(f"eval/{k}", v, step)
    writer.flush()
    for line in report.lines:
      log.info("%s", line)
    if callback:
      callback(run_dir, step)
    bar.write(report.summary)

  def gate(state, step):
    """Gating: the trained network replaces self-play's if it wins the gating games (decided on process 0)."""
    promoted = False
    if main:
      promoted, line = gating(step, *distributed.local((state.params, state.bn_state, state.best)))
      log.info("%s", line)
      bar.write(line)
    return train_lib.promote(state, shardings) if distributed.from_main(promoted) else state

  try:
    if redo_eval:
      last_rows = [r for r in read_rows(run_dir / "metrics.csv") if row_step(r) == step]
      evaluate(step)
    previous = None
    out_of_time = preempted = False
    while step < config.train.num_steps and not out_of_time:
      state, metrics = train_step(state)
      step += 1
      pending.append((step, metrics))
      bar.update(1)
      if previous is not None:  # the step before this one has finished: reading its flags does not stall
        check_finite(*previous, mngr.directory)
      previous = (step, metrics)
      # Read at logged steps only, and process 0's clock decides, so that every process stops at the same step.
      preempted = distributed.preempted(step)  # checkpointed and stopped like a run out of time
      out_of_time = preempted or bool(config.run.max_minutes and step % config.run.log_every == 0 and
                                      distributed.from_main(time.time() - started > 60 * config.run.max_minutes))
      last = step == config.train.num_steps or out_of_time
      if step % config.run.log_every == 0 or last:
        flush(keep_newest=not last)
      evaluating = evaluation.is_evaluation_step(config, step)
      if step % config.run.checkpoint_every == 0 or evaluating or last:  # the run's end, evaluated or not
        check_finite(step, metrics, mngr.directory)  # never checkpoint a diverged state
        flush(keep_newest=False)  # every logged row up to a checkpoint survives a crash after it
        if evaluating and gating:  # before the checkpoint, which then holds the decision
          state = gate(state, step)
        ckpt.save(mngr, state, config, **({"seeds": list(seeds)} if n else {}))  # evaluations play it later
      if evaluating:
        evaluate(step)
    distributed.barrier("azjax-run-finished")  # the others wait for process 0's last evaluation
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
      if writer is not None:
        writer.close()
    except OSError:
      if not stopping:
        raise
  seconds = time.time() - started
  log.info("finished at step %d in %.1f s", step, seconds)
  stopped = step < config.train.num_steps
  if stopped:
    log.info("stopped by %s at step %d of %d; --resume %s continues it",
             "a preemption notice (SIGTERM)" if preempted else f"run.max_minutes={config.run.max_minutes:g}",
             step, config.train.num_steps, run_dir)
  return RunResult(run_dir=run_dir, step=step, metrics=last_rows[0] if len(last_rows) == 1 else last_rows,
                   evaluation=evaluator.result, seconds=seconds, ratings=evaluator.ratings, out_of_time=stopped,
                   preempted=preempted, start_step=start_step)
