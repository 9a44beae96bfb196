"""Faults (issue 19): kills at any moment, checkpoints damaged on disk, disks that fill up, killed sweeps.

Every interrupted run here is compared with one uninterrupted run of the same config (`reference`,
which keeps every step's checkpoint): after resuming, the whole TrainState is equal bit for bit.
"""

import csv
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import azjax
from azjax import checkpoint as ckpt, evaluation, sweep, train_step as train_lib
from conftest import ROOT, run_module

STEPS = 8
FLAGS = ["--set", "run.checkpoint_every=1", "--set", f"train.num_steps={STEPS}"]
ENV = dict(os.environ, JAX_PLATFORMS="cpu")

# The experiment's CLI, SIGKILLed by itself inside the checkpoint write whose step folder path ends with
# $AZJAX_KILL_IN: at orbax's commit of the first item finished in it (the other items may still be
# writing, and the step is not committed). Without the variable it is the plain CLI.
KILLABLE = """
import os, signal, sys
from orbax.checkpoint._src.path import atomicity
commit = atomicity.AtomicRenameTemporaryPath.finalize
async def finalize(self):
  final, where = self.get_final(), os.environ.get("AZJAX_KILL_IN")
  if where and any(str(p).split(".orbax-checkpoint-tmp")[0].endswith(where) for p in (final, final.parent)):
    os.kill(os.getpid(), signal.SIGKILL)
  return await commit(self)
atomicity.AtomicRenameTemporaryPath.finalize = finalize
import azjax
from experiments import sweep
sys.exit(sweep.main(sys.argv[2:]) if sys.argv[1] == "sweep" else azjax.experiment_main(sys.argv[1], sys.argv[2:]))
"""


def _config(*overrides):
  return azjax.apply_overrides(azjax.preset("tictactoe", "smoke"),
                               ["run.checkpoint_every=1", f"train.num_steps={STEPS}", *overrides])


def _cli(*args, kill_in=None, **kw):
  env = dict(ENV, AZJAX_KILL_IN=kill_in) if kill_in else ENV
  return subprocess.run([sys.executable, "-c", KILLABLE, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                        timeout=600, **kw)


def _resume(run, capfd):
  """`--resume PATH`, run in this process (`conftest.run_module`): it reuses the compiled step of the reference,
  trained here. The kills are real processes, and so are the refused resumes below."""
  return run_module(capfd, "experiments.tictactoe", "--resume", str(run), "--no-progress")


def _state(run, step=None):
  config = _config()
  abstract = train_lib.abstract_state(azjax.build(config))
  mngr = ckpt.manager(Path(run) / "checkpoints", keep=100)
  return jax.device_get(ckpt.restore_state(mngr, abstract, train_lib.state_shardings(abstract, azjax.make_mesh()),
                                           step))


def _assert_same(a, b):
  assert jax.tree.structure(a) == jax.tree.structure(b)
  jax.tree.map(np.testing.assert_array_equal, a, b)


def _rows(path, drop=("positions_per_s",)):  # the rate is wall-clock time: it differs between runs
  with open(path, newline="") as f:
    return [{k: v for k, v in r.items() if k not in drop} for r in csv.DictReader(f)]


def _steps(run):
  return sorted(int(p.name) for p in (Path(run) / "checkpoints").iterdir() if p.name.isdigit())


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
  """An uninterrupted run keeping every step's checkpoint."""
  run = tmp_path_factory.mktemp("reference") / "run"
  assert azjax.train(_config(f"run.keep_checkpoints={STEPS}"), run, progress=False).step == STEPS
  return run


def _partial_copy(reference, run, last):
  """The reference run as it was just after its checkpoint `last` (logs keep later rows: resume drops them)."""
  shutil.copytree(reference, run)
  for step in _steps(run):
    if step > last:
      shutil.rmtree(run / "checkpoints" / str(step))
  return run


def _assert_finished_like(run, reference):
  _assert_same(_state(run), _state(reference, STEPS))
  assert _steps(run)[-1] == STEPS and not [p for p in (run / "checkpoints").iterdir() if ckpt.UNFINISHED in p.name]
  assert _rows(run / "metrics.csv") == _rows(reference / "metrics.csv")  # every step once, same numbers
  assert [int(r["step"]) for r in _rows(run / "metrics.csv")] == list(range(1, STEPS + 1))
  assert _rows(run / "evals.csv") == _rows(reference / "evals.csv")
  assert _tensorboard_steps(run) == list(range(1, STEPS + 1))  # every step once, as in metrics.csv


def _tensorboard_steps(run):
  """The steps of the run's train/loss events, as TensorBoard's own reader shows them."""
  tb = EventAccumulator(str(run / "tb"))
  tb.Reload()
  return [e.step for e in tb.Scalars("train/loss")]


def test_kill_9_inside_a_checkpoint_write_then_resume_is_bit_for_bit(tmp_path, reference, capfd):
  """SIGKILL at the commit of step 4's first item: only 4.orbax-checkpoint-tmp is left of it."""
  run = tmp_path / "run"
  r = _cli("tictactoe", "--preset", "smoke", "--run-dir", str(run), "--no-progress", *FLAGS,
           kill_in=str(Path("checkpoints") / "4"))
  assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
  assert _steps(run) == [1, 2, 3] and (run / "checkpoints" / "4.orbax-checkpoint-tmp").is_dir()
  code, out, err = _resume(run, capfd)
  assert code == 0, err[-2000:]
  assert "removed 4.orbax-checkpoint-tmp" in err and f"trained {STEPS - 3} steps" in out  # from step 3's checkpoint
  assert f"steps 4-{STEPS} (resumed at 3)" in out
  _assert_finished_like(run, reference)


def test_kill_9_at_a_random_moment_then_resume_is_bit_for_bit(tmp_path, reference, capfd):
  """An outside SIGKILL as soon as a checkpoint write is seen under way once two steps are committed (or,
  failing that, once five are)."""
  run = tmp_path / "run"
  p = subprocess.Popen([sys.executable, "-m", "experiments.tictactoe", "--preset", "smoke", "--run-dir", str(run),
                        "--no-progress", *FLAGS], cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
  seen, deadline = None, time.time() + 240
  try:
    while p.poll() is None and time.time() < deadline:
      names = os.listdir(run / "checkpoints") if (run / "checkpoints").is_dir() else []
      committed = sum(n.isdigit() for n in names)
      seen = next((n for n in names if ckpt.UNFINISHED in n), None) if committed >= 2 else None
      if seen or committed >= 5:
        break
      time.sleep(0.001)
  finally:
    p.send_signal(signal.SIGKILL)
    p.wait()
  assert p.returncode == -signal.SIGKILL, "the run ended before it could be killed"
  on_disk = sorted(os.listdir(run / "checkpoints"))
  code, out, err = _resume(run, capfd)
  print(f"killed {'during the write of ' + seen if seen else 'after a committed checkpoint'}; on disk: {on_disk}")
  assert code == 0, err[-2000:]
  _assert_finished_like(run, reference)


def test_a_kill_before_the_first_checkpoint_resumes_from_step_0(tmp_path, reference, capfd):
  run = tmp_path / "run"
  r = _cli("tictactoe", "--preset", "smoke", "--run-dir", str(run), "--no-progress", *FLAGS,
           kill_in=str(Path("checkpoints") / "1"))
  assert r.returncode == -signal.SIGKILL and _steps(run) == []
  code, _, err = _resume(run, capfd)
  assert code == 0 and "starts again from step 0" in err, err[-2000:]
  _assert_finished_like(run, reference)


def test_a_truncated_file_in_the_latest_checkpoint_is_named_and_the_run_resumes_from_the_one_before(
    tmp_path, reference, capfd):
  run = _partial_copy(reference, tmp_path / "run", 5)
  data = max((run / "checkpoints" / "5" / "state").rglob("d/*"), key=lambda p: p.stat().st_size)
  size = data.stat().st_size
  with open(data, "r+b") as f:
    f.truncate(size // 2)
  name = data.relative_to(run / "checkpoints" / "5").as_posix()
  code, _, err = _resume(run, capfd)
  assert code == 0, err[-2000:]
  for text in (err, (run / "run.log").read_text()):
    assert f"checkpoint step 5 in {run / 'checkpoints'} is damaged: {name} is truncated ({size // 2} of {size} " \
           "bytes)" in text and "resuming from step 4" in text, text[-3000:]
  assert (run / ckpt.DAMAGED / "5" / name).exists()  # kept for a look, out of orbax's way
  _assert_finished_like(run, reference)


def test_missing_folders_and_unreadable_meta_fall_back_step_by_step(tmp_path, reference, capfd):
  run = _partial_copy(reference, tmp_path / "run", 5)
  shutil.rmtree(run / "checkpoints" / "5" / "state")
  meta = run / "checkpoints" / "4" / "meta" / "metadata"  # garbled in place (same size), and no manifest to tell
  meta.write_bytes(b"\0" * meta.stat().st_size)
  (run / "checkpoints" / "4" / ckpt.MANIFEST).unlink()
  # Nothing restores: each step is named with its fault and nothing moves.
  abstract = train_lib.abstract_state(azjax.build(_config()))
  shardings = train_lib.state_shardings(abstract, azjax.make_mesh())
  broken = _partial_copy(run, tmp_path / "broken", 5)
  for step in (1, 2, 3):
    (broken / "checkpoints" / str(step) / "model" / "_METADATA").unlink()
  with pytest.raises(azjax.CheckpointError, match=r"no intact checkpoint .*step 5: state/ is missing; step 4: meta/ "
                     r"could not be read .*step 3: model/_METADATA is missing"):
    ckpt.restore_latest(ckpt.manager(broken / "checkpoints"), abstract, shardings)
  assert _steps(broken) == [1, 2, 3, 4, 5]
  # The run resumes from step 3 and ends where the reference did at step 6.
  result = azjax.train(_config("train.num_steps=6"), run, resume=True, progress=False)
  assert result.step == 6
  err, log = capfd.readouterr().err, (run / "run.log").read_text()
  for text in (err, log):
    assert "checkpoint step 5 in" in text and "is damaged: state/ is missing" in text
    assert "checkpoint step 4 in" in text and "is damaged: meta/ could not be read" in text
    assert "resuming from step 3" in text
  assert sorted(os.listdir(run / ckpt.DAMAGED)) == ["4", "5"]
  _assert_same(_state(run), _state(reference, 6))


def _truncate_model(run, step) -> str:
  """Cuts step's largest network file in half; returns the fault as `damage` names it."""
  data = max((run / "checkpoints" / str(step) / "model").rglob("d/*"), key=lambda p: p.stat().st_size)
  size = data.stat().st_size
  with open(data, "r+b") as f:
    f.truncate(size // 2)
  return f"{data.relative_to(run / 'checkpoints' / str(step)).as_posix()} is truncated ({size // 2} of {size} bytes)"


def test_a_damaged_checkpoint_is_passed_over_by_load_agent_and_the_evaluation_pool(tmp_path, reference, capfd):
  run = _partial_copy(reference, tmp_path / "run", STEPS)
  fault = _truncate_model(run, STEPS)
  # The latest intact step loads as an agent, the damaged one named; named itself, it is refused.
  agent = azjax.load_agent(run)
  assert agent.step == STEPS - 1
  assert f"step {STEPS}: {fault}" in capfd.readouterr().err
  with pytest.raises(azjax.CheckpointError, match=f"checkpoint step {STEPS} in .* is damaged: {re.escape(fault)}"):
    azjax.load_agent(run, step=STEPS)
  # An evaluation at step 6 with a pool of 2 plays steps 3 and 4 when step 5 is damaged, and says so.
  fault = _truncate_model(run, 5)
  config = _config("run.eval_every=1", "run.eval_pool=2")
  abstract = train_lib.abstract_state(azjax.build(config))
  players = evaluation.opponents(config, ckpt.manager(run / "checkpoints"), 6, (abstract.params, abstract.bn_state))
  assert [p.name for p in players] == ["random", "step3", "step4"]
  assert f"checkpoint step 5 in {run / 'checkpoints'} is damaged: {fault}; the evaluation plays without it" \
      in capfd.readouterr().err
  assert _steps(run) == list(range(1, STEPS + 1))  # nothing moved: only a resumed run moves damaged steps


def test_a_checkpoint_of_another_version_is_refused_by_name_and_left_in_place(tmp_path, reference):
  """A state whose fields changed (here one array's shape, as a version adding a field shifts them) is not
  damage: the refusal names the first field that does not match, and no checkpoint is moved aside."""
  run = _partial_copy(reference, tmp_path / "run", 3)
  abstract = train_lib.abstract_state(azjax.build(_config()))
  low = abstract.actors.low_value
  other = abstract.replace(actors=abstract.actors.replace(
      low_value=jax.ShapeDtypeStruct(low.shape[:1] + (3,), low.dtype)))
  assert ckpt.layout_fault(run / "checkpoints" / "3", abstract) is None
  with pytest.raises(azjax.CheckpointError, match=r"checkpoint step 3 in .* cannot be resumed by this version of "
                     r"azjax: .*state\.actors\.low_value, float32\[8, 3\] here\) is float32\[8, 2\] there"):
    ckpt.restore_latest(ckpt.manager(run / "checkpoints"), other, train_lib.state_shardings(other, azjax.make_mesh()))
  assert _steps(run) == [1, 2, 3] and not (run / ckpt.DAMAGED).exists()


def test_a_checkpoint_that_cannot_be_written_stops_the_run_and_keeps_the_previous(tmp_path, reference, monkeypatch):
  """A real failed write: from step 3's save on, no file may grow past 1 kB (RLIMIT_FSIZE; Python ignores
  SIGXFSZ, so writes fail with EFBIG as they would with ENOSPC), which even root cannot write past."""
  run, real_save = tmp_path / "run", ckpt.save

  def save_on_a_full_disk(mngr, state, config, **extra):
    if int(state.step) < 3:
      return real_save(mngr, state, config, **extra)
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, limit[1]))
    try:
      return real_save(mngr, state, config, **extra)
    finally:
      resource.setrlimit(resource.RLIMIT_FSIZE, limit)

  monkeypatch.setattr(ckpt, "save", save_on_a_full_disk)
  with pytest.raises(ckpt.WriteError) as e:
    azjax.train(_config(), run, progress=False)
  message = str(e.value)
  assert f"could not write checkpoint step 3 to {run / 'checkpoints' / '3'}" in message and "File too large" in message
  assert "The run stopped at step 3; its latest checkpoint, step 2, is intact" in message and "--resume" in message
  assert message in (run / "run.log").read_text()
  # Orbax's writer threads may outlive the failed save and leave some of 3.orbax-checkpoint-tmp: never a step.
  assert ckpt.manager(run / "checkpoints").all_steps() == [1, 2]
  assert set(os.listdir(run / "checkpoints")) <= {"1", "2", "3.orbax-checkpoint-tmp"}
  _assert_same(_state(run), _state(reference, 2))
  monkeypatch.undo()  # space again: the run goes on from step 2
  assert azjax.train(_config(), run, resume=True, progress=False).step == STEPS
  _assert_finished_like(run, reference)


def test_a_log_that_cannot_be_written_stops_the_run(tmp_path, reference):
  """Real ENOSPC: metrics.csv turns into /dev/full after step 5's checkpoint."""
  run = tmp_path / "run"

  def fill_the_disk(run_dir, step):
    if step == 5:
      os.symlink("/dev/full", run_dir / "full")
      os.replace(run_dir / "full", run_dir / "metrics.csv")

  with pytest.raises(ckpt.WriteError) as e:
    azjax.train(_config(), run, progress=False, callback=fill_the_disk)
  message = str(e.value)
  assert f"could not write {run / 'metrics.csv'}: No space left on device" in message, message
  assert "its latest checkpoint, step 5, is intact" in message
  _assert_same(_state(run), _state(reference, 5))


@pytest.mark.timeout(600)
def test_an_event_file_that_cannot_be_written_stops_the_run_and_does_not_hang(tmp_path, reference):
  """Real ENOSPC: after step 5's rows, the event file's open descriptor is pointed at /dev/full.
  tensorboardX's own writer thread died of that, and its full queue then blocked the run for ever."""
  run = tmp_path / "run"

  def fill_the_disk(run_dir, step):
    if step == 5:
      (events,) = (run_dir / "tb").iterdir()
      fd = next(int(fd) for fd in os.listdir("/proc/self/fd")
                if os.path.realpath(f"/proc/self/fd/{fd}") == str(events.resolve()))
      full = os.open("/dev/full", os.O_WRONLY)
      os.dup2(full, fd)
      os.close(full)

  with pytest.raises(ckpt.WriteError) as e:
    azjax.train(_config(), run, progress=False, callback=fill_the_disk)
  (events,) = (run / "tb").iterdir()
  assert f"could not write {events}: No space left on device" in str(e.value), str(e.value)
  assert "The run stopped at step 6; its latest checkpoint, step 5, is intact" in str(e.value)
  _assert_same(_state(run), _state(reference, 5))


def test_the_cli_exits_4_naming_a_file_it_cannot_write(tmp_path, reference):
  run = _partial_copy(reference, tmp_path / "run", 4)
  (run / "run.log").unlink()
  os.symlink("/dev/full", run / "run.log")
  before = sorted(p.relative_to(run).as_posix() for p in (run / "checkpoints").rglob("*"))
  r = _cli("tictactoe", "--resume", str(run), "--no-progress")
  assert r.returncode == 4, r.stderr[-2000:]
  assert r.stderr.strip().splitlines()[-1] == f"error: could not write {run / 'run.log'}: No space left on device"
  assert "Traceback" not in r.stderr
  assert sorted(p.relative_to(run).as_posix() for p in (run / "checkpoints").rglob("*")) == before
  _assert_same(_state(run), _state(reference, 4))


HOLDER = """
import sys, time
from azjax import checkpoint as ckpt
with ckpt.hold(sys.argv[1]):
  print("held", flush=True)
  time.sleep(600)
"""


def test_a_run_directory_another_process_holds_is_refused_untouched_and_freed_when_that_process_dies(
    tmp_path, reference, capfd):
  """A second trainer in one run directory would delete the first's checkpoint write in progress and log its
  evaluations twice: it is refused, naming the holder, before it touches a file. A SIGKILLed holder frees it."""
  run = _partial_copy(reference, tmp_path / "run", 5)  # the reference's lock file comes along, held by no one
  before = sorted((p.relative_to(run).as_posix(), p.stat().st_mtime_ns) for p in run.rglob("*"))
  holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                            text=True)
  try:
    assert holder.stdout.readline() == "held\n"
    r = _cli("tictactoe", "--resume", str(run), "--no-progress")
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.strip().splitlines()[-1].startswith(f"error: {run} is in use by process {holder.pid} on ")
    after = sorted((p.relative_to(run).as_posix(), p.stat().st_mtime_ns) for p in run.rglob("*"))
    assert [a for a in after if a[0] != ckpt.LOCK] == [b for b in before if b[0] != ckpt.LOCK]
  finally:
    holder.send_signal(signal.SIGKILL)
    holder.wait()
  code, _, err = _resume(run, capfd)
  assert code == 0, err[-2000:]
  _assert_finished_like(run, reference)


def test_csv_logs_survive_a_kill_mid_write(tmp_path):
  from azjax.records import CsvLog
  path = tmp_path / "metrics.csv"
  path.write_text("step,loss\n1,0.5\n2,0.25\n3,0.125\n4,0.")  # killed while appending step 4, after step 3's checkpoint
  CsvLog(path, keep_until=3)
  assert path.read_text().splitlines() == ["step,loss", "1,0.5", "2,0.25", "3,0.125"]
  path.write_text("step,loss\n1,0.5\n2,0.25\n1")  # "12,..." cut after its first digit: not read as step 1
  CsvLog(path, keep_until=2)
  assert path.read_text().splitlines() == ["step,loss", "1,0.5", "2,0.25"]
  assert not list(tmp_path.glob(".*.tmp"))
  # Resumed with a config that logs more (e.g. --set selfplay.resign=true): the new column is kept, not dropped.
  log = CsvLog(path, keep_until=2)
  log.append({"step": 3, "loss": 0.125, "resign_threshold": -0.9})
  log.append({"step": 4, "loss": 0.0625, "resign_threshold": -0.8})
  assert path.read_text().splitlines() == ["step,loss,resign_threshold", "1,0.5,", "2,0.25,", "3,0.125,-0.9",
                                           "4,0.0625,-0.8"]


def test_an_evaluation_cut_short_leaves_none_of_its_rows_and_is_played_again(tmp_path, reference, monkeypatch):
  """A kill anywhere in an evaluation (here in its plot, after every game) leaves evals.csv without that step, so
  a resumed run plays the evaluation again rather than taking its first rows for all of it."""
  run = _partial_copy(reference, tmp_path / "run", STEPS)
  config = _config()
  abstract = train_lib.abstract_state(azjax.build(config))
  mngr = ckpt.manager(run / "checkpoints")
  evaluator = evaluation.RunEvaluation(config, mngr, (abstract.params, abstract.bn_state))
  assert not evaluator.open(run, STEPS)  # the reference evaluated its last step
  evaluator.open(run, STEPS - 1)  # as a run resumed from the step before: that evaluation's rows are dropped
  assert all(int(r["step"]) < STEPS for r in _rows(run / "evals.csv"))

  def killed(*args):
    raise KeyboardInterrupt
  monkeypatch.setattr(evaluation, "plot_curve", killed)
  params, bn_state = ckpt.load_model(mngr, (abstract.params, abstract.bn_state), STEPS)
  with pytest.raises(KeyboardInterrupt):
    evaluator(STEPS, params, bn_state, [])
  assert evaluator.open(run, STEPS)  # missing: the resumed run evaluates it again
  monkeypatch.undo()
  evaluator(STEPS, params, bn_state, [])
  assert _rows(run / "evals.csv") == _rows(reference / "evals.csv")


SWEEP = ["--game", "tictactoe", "--preset", "smoke", "--grid", "search.num_simulations=4,2", "--seeds", "2",
         "--set", "train.num_steps=4", "--set", "run.eval_every=2", "--set", "run.checkpoint_every=1",
         "--set", "run.log_every=1", "--no-progress"]


def test_a_killed_sweep_run_again_finishes_every_run_once(tmp_path, capfd):
  out = tmp_path / "sweep"
  second = out / "search.num_simulations=2" / "seeds-0-1"
  r = _cli("sweep", *SWEEP, "--out", str(out), kill_in=str(second.relative_to(out) / "checkpoints" / "3"))
  assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
  first = out / "search.num_simulations=4" / "seeds-0-1"
  done = (first / "done").stat().st_mtime_ns
  assert not (second / "done").exists() and (second / "checkpoints" / "3.orbax-checkpoint-tmp").is_dir()
  # Run again in this process: the uninterrupted sweep below then reuses the compiled steps.
  code, _, err = run_module(capfd, "experiments.sweep", *SWEEP, "--out", str(out))
  assert code == 0, err[-2000:]
  assert (first / "done").stat().st_mtime_ns == done  # the finished unit did not run again
  rows = _rows(out / "results.csv")
  keys = [(r["combination"], r["seed"], r["step"]) for r in rows]
  assert sorted(keys) == sorted((c, s, st) for c in ("search.num_simulations=4", "search.num_simulations=2")
                                for s in ("0", "1") for st in ("2", "4"))
  metrics = [(r["seed"], r["step"]) for r in _rows(second / "metrics.csv")]
  assert metrics == [(s, str(st)) for st in range(1, 5) for s in ("0", "1")]  # each step once, in order
  fixed = [SWEEP[i + 1] for i, a in enumerate(SWEEP) if a == "--set"]
  whole = sweep.run_sweep(tmp_path / "whole", "tictactoe", "smoke", fixed, ["search.num_simulations=4,2"], [0, 1],
                          progress=False)  # uninterrupted
  assert rows == _rows(whole / "results.csv")


def test_a_restore_that_fails_for_want_of_memory_moves_nothing_aside(tmp_path, reference, monkeypatch):
  # Out of memory (a device's RESOURCE_EXHAUSTED) is the machine's fault, not the files': the intact newest step
  # stays, where a move aside and a resume from the step before would lose a step's work.
  run = _partial_copy(reference, tmp_path / "run", 5)
  restore = ckpt.restore_state

  def short_of_memory(mngr, abstract, shardings, step=None):
    if step == 5:
      raise RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.00GiB")
    return restore(mngr, abstract, shardings, step)

  monkeypatch.setattr(ckpt, "restore_state", short_of_memory)
  abstract = train_lib.abstract_state(azjax.build(_config()))
  shardings = train_lib.state_shardings(abstract, azjax.make_mesh())
  with pytest.raises(azjax.CheckpointError, match="step 5 .*could not be restored: .*RESOURCE_EXHAUSTED.*nothing "
                                                  "was moved"):
    ckpt.restore_latest(ckpt.manager(run / "checkpoints"), abstract, shardings)
  assert _steps(run) == [1, 2, 3, 4, 5] and not (run / ckpt.DAMAGED).exists()


def test_a_resumed_run_trains_with_the_momentum_its_config_sets(tmp_path, reference):
  # inject_hyperparams keeps SGD's momentum in the optimiser state: a resume must take the config's, as it
  # takes the learning rate's, and not the checkpoint's.
  run = _partial_copy(reference, tmp_path / "run", STEPS - 2)
  azjax.train(_config("train.momentum=0.0"), run, resume=True, progress=False)
  resumed, uninterrupted = _state(run), _state(reference, STEPS)
  assert float(resumed.opt_state.hyperparams["momentum"]) == 0.0
  assert float(uninterrupted.opt_state.hyperparams["momentum"]) == pytest.approx(0.9)
  assert not np.array_equal(jax.tree.leaves(resumed.params)[0], jax.tree.leaves(uninterrupted.params)[0])


def test_a_run_directory_made_again_in_the_same_process_gets_its_own_run_log(tmp_path):
  from azjax.loop import _logger
  run = tmp_path / "run"
  run.mkdir()
  _logger(run).info("first")
  shutil.rmtree(run)  # a notebook starting over in the same folder
  run.mkdir()
  _logger(run).info("second")
  assert (run / "run.log").read_text().endswith("second\n")


def test_a_run_that_starts_again_from_step_0_shows_each_step_once_in_tensorboard(tmp_path, reference):
  # Killed before its first checkpoint (here: the checkpoint removed) after its events reached the disk.
  run = tmp_path / "run"
  azjax.train(_config("run.checkpoint_every=100"), run, progress=False)
  shutil.rmtree(run / "checkpoints" / str(STEPS))
  azjax.train(_config("run.checkpoint_every=100"), run, resume=True, progress=False)
  assert _tensorboard_steps(run) == list(range(1, STEPS + 1))


def test_a_run_killed_in_its_first_compile_starts_again_from_step_0(tmp_path, reference, capfd, monkeypatch):
  run = tmp_path / "run"

  def killed(*args, **kwargs):
    raise KeyboardInterrupt  # as a kill during XLA's compile, before any step

  with monkeypatch.context() as m:
    m.setattr(train_lib, "compiled_train_step", killed)
    with pytest.raises(KeyboardInterrupt):
      azjax.train(_config(), run, progress=False)
  code, _, err = _resume(run, capfd)
  assert code == 0 and "starts again from step 0" in err, err[-2000:]
  _assert_finished_like(run, reference)
