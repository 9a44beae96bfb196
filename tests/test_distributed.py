"""Many processes (issue 18): 2 processes x 2 CPU devices on localhost, JAX's CPU collectives (gloo)."""

import argparse
import csv
import os
import signal
import socket
import subprocess
import sys
import time

import jax
import numpy as np
import pytest

from azjax import arena, checkpoint as ckpt, distributed
from azjax.agent import load_agent
from azjax.games import make_env
from conftest import ROOT, run_module, xla_env

ARGS = ["--preset", "smoke", "--set", "run.checkpoint_every=2", "--set", "run.eval_games=2", "--no-progress"]


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def _env(devices: int) -> dict:
  return xla_env(f"--xla_force_host_platform_device_count={devices}", JAX_PLATFORMS="cpu")


def _launch(run_dir, steps: int, processes: int = 2, resume: bool = False, extra=()) -> list[subprocess.Popen]:
  """`processes` processes of one tictactoe run, 4 devices in all."""
  port, where = _free_port(), (["--resume", str(run_dir)] if resume else ["--run-dir", str(run_dir)])
  topology = lambda i: ["--coordinator", f"localhost:{port}", "--num-processes", str(processes),
                        "--process-id", str(i)] if processes > 1 else []
  return [subprocess.Popen([sys.executable, "-m", "experiments.tictactoe", *ARGS, "--set", f"train.num_steps={steps}",
                            *where, *topology(i), *extra], cwd=ROOT, env=_env(4 // processes), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True) for i in range(processes)]


def _finish(procs, timeout=900) -> list[tuple[int, str, str]]:
  out = []
  try:
    for p in procs:
      stdout, stderr = p.communicate(timeout=timeout)
      out.append((p.returncode, stdout, stderr))
  except subprocess.TimeoutExpired:  # a hung run: no process left behind
    for p in procs:
      p.kill()
    raise
  return out


def _running_past_step_2(run) -> list[subprocess.Popen]:
  """Two processes of a 400-step run, once its step-2 checkpoint is on disk (both still running)."""
  procs = _launch(run, steps=400)
  deadline = time.time() + 600
  while not (run / "checkpoints" / "2").is_dir() and time.time() < deadline:
    assert all(p.poll() is None for p in procs), [p.communicate()[1][-2000:] for p in procs if p.poll() is not None]
    time.sleep(0.5)
  return procs


def _params(run_dir, step: int):
  mngr = ckpt.manager(run_dir / "checkpoints")
  meta = ckpt.step_meta(run_dir / "checkpoints", step)
  from azjax.train_step import abstract_state, build
  abstract = abstract_state(build(ckpt.config_from_meta(meta)))
  return jax.tree.leaves(ckpt.restore_model(mngr, (abstract.params, abstract.bn_state), step))


def test_topology_from_flags_environment_and_clusters():
  flags = lambda **kw: argparse.Namespace(**{**dict(coordinator=None, num_processes=None, process_id=None), **kw})
  assert distributed.topology(flags(), {}) is None
  assert distributed.topology(flags(coordinator="h:1", num_processes=2, process_id=1), {}) == distributed.Topology(
      "h:1", 2, 1)
  env = {"AZJAX_COORDINATOR": "h:2", "AZJAX_NUM_PROCESSES": "4", "AZJAX_PROCESS_ID": "3"}
  assert distributed.topology(flags(), env) == distributed.Topology("h:2", 4, 3)
  assert distributed.topology(flags(process_id=0), env) == distributed.Topology("h:2", 4, 0)  # flags first
  assert distributed.topology(flags(coordinator="auto"), {}) == distributed.Topology(None, 0, 0)
  with pytest.raises(ValueError, match="--num-processes"):
    distributed.topology(flags(coordinator="h:1", process_id=0), {})
  with pytest.raises(ValueError, match="--num-processes must be at least 1, not 0"):
    distributed.topology(flags(coordinator="h:1", num_processes=0, process_id=0), {})
  with pytest.raises(ValueError, match="0..1"):
    distributed.topology(flags(coordinator="h:1", num_processes=2, process_id=2), {})
  with pytest.raises(ValueError, match="HOST:PORT"):
    distributed.topology(flags(coordinator="h", num_processes=2, process_id=0), {})
  assert distributed.parse_known(["--preset", "x", "--process-id", "1"]).process_id == 1
  assert distributed.detected_cluster({"SLURM_NTASKS": "8"}) == "SLURM"
  assert distributed.detected_cluster({"SLURM_NTASKS": "1", "OMPI_COMM_WORLD_SIZE": "1"}) is None
  assert distributed.detected_cluster({"TPU_WORKER_HOSTNAMES": "a,b"}) == "Cloud TPU"


def test_the_cpu_is_split_into_one_device_a_core_unless_told_otherwise(monkeypatch):
  flag = lambda value=None: argparse.Namespace(cpu_devices=value)
  cpu = {"JAX_PLATFORMS": "cpu"}
  for cores, devices in [(1, 1), (2, 2), (3, 2), (6, 4), (64, distributed.MAX_AUTO_CPU_DEVICES)]:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid, n=cores: set(range(n)))  # taskset's view
    assert distributed.cpu_devices(flag(), cpu) == devices, cores
  assert distributed.cpu_devices(flag("3"), cpu) == 3
  assert distributed.cpu_devices(flag(), {**cpu, "AZJAX_CPU_DEVICES": "1"}) == 1
  assert distributed.cpu_devices(flag("2"), {**cpu, "AZJAX_CPU_DEVICES": "1"}) == 2  # the flag first
  # XLA_FLAGS's own count is left alone, and so is a machine with an accelerator, unless asked
  assert distributed.cpu_devices(flag(), {**cpu, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}) is None
  monkeypatch.setattr(distributed, "_cpu_only", lambda: False)
  assert distributed.cpu_devices(flag(), {}) is None
  assert distributed.cpu_devices(flag("2"), {}) == 2
  for bad in ["0", "-1", "two"]:
    with pytest.raises(ValueError, match="--cpu-devices"):
      distributed.cpu_devices(flag(bad), cpu)


def test_a_run_on_two_cpu_devices_resumes_on_one(tmp_path, capfd):
  run_dir = tmp_path / "run"
  # Evaluated at steps 1 and 2: step 2 also plays step 1's checkpoint, restored on one device. Two devices take a
  # process of their own; this one has one, where the run resumes (`conftest.run_module`).
  r = subprocess.run([sys.executable, "-m", "experiments.tictactoe", *ARGS, "--set", "train.num_steps=2", "--set",
                      "run.eval_every=1", "--run-dir", str(run_dir), "--cpu-devices", "2"], cwd=ROOT,
                     env=xla_env(JAX_PLATFORMS="cpu"), capture_output=True, text=True, timeout=600)
  assert r.returncode == 0 and "with 2 of 2 cpu devices" in r.stdout, r.stderr[-2000:]
  with (run_dir / "evals.csv").open() as f:
    assert [(row["step"], row["opponent"]) for row in csv.DictReader(f)] == [("1", "random"), ("2", "random"),
                                                                              ("2", "step1")]
  run = lambda *args: run_module(capfd, "experiments.tictactoe", *ARGS, *args)
  code, out, err = run("--set", "train.num_steps=4", "--resume", str(run_dir), "--cpu-devices", "1")
  assert code == 0 and "with 1 of 1 cpu devices" in out, err[-2000:]
  assert "trained 2 steps" in out and "steps 3-4 (resumed at 2)" in out
  assert ckpt.steps(run_dir / "checkpoints")[-1] == 4
  code, _, err = run("--cpu-devices", "many", "--run-dir", str(tmp_path / "bad"))
  assert code == 2 and "--cpu-devices" in err


def test_a_bad_topology_is_refused_with_exit_2():
  r = subprocess.run([sys.executable, "-m", "experiments.tictactoe", "--preset", "smoke", "--coordinator",
                      "localhost:1", "--num-processes", "2"], cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert r.returncode == 2 and "--process-id" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_two_processes_train_as_one_and_their_checkpoint_plays_in_one(tmp_path):
  two, one = tmp_path / "two", tmp_path / "one"
  # Evaluated every 2 steps: step 4's plays step 2's network, which process 0 reads while process 1 waits in the
  # next step (orbax's own restore waited for every process there: the run hung).
  results = _finish(_launch(two, steps=4, extra=["--set", "run.eval_every=2"]), timeout=600)
  for i, (rc, stdout, stderr) in enumerate(results):
    assert rc == 0, stderr[-3000:]
    assert f"process {i} of 2 with 2 of 4 cpu devices" in stdout
  assert "run directory" in results[0][1] and "run directory" not in results[1][1]  # process 0 speaks
  assert sorted(ckpt.manager(two / "checkpoints").all_steps()) == [2, 4]
  with open(two / "evals.csv") as f:
    assert [(r["step"], r["opponent"]) for r in csv.DictReader(f)] == [("2", "random"), ("4", "random"), ("4", "step2")]
  (rc, stdout, stderr), = _finish(_launch(one, steps=4, processes=1))
  assert rc == 0, stderr[-3000:]
  # The same games and the same updates. Only the order of the gradient all-reduce's sums differs
  # (gloo between processes, XLA's in-process reduction within one), so parameters agree to rounding.
  for a, b in zip(_params(two, 4), _params(one, 4)):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
  with open(two / "metrics.csv") as f, open(one / "metrics.csv") as g:
    col = lambda rows, name: [r.split(",")[rows[0].split(",").index(name)] for r in rows[1:]]
    a, b = f.read().splitlines(), g.read().splitlines()
    assert col(a, "games") == col(b, "games") and col(a, "replay_positions") == col(b, "replay_positions")
  # Written by 2 processes, it loads in this one (a single device) and plays.
  agent = load_agent(two)
  result = arena.match(make_env("tictactoe"), agent.player(), arena.random_player, jax.random.PRNGKey(0), 2)
  assert result.wins + result.draws + result.losses == 2


@pytest.mark.slow
def test_sigterm_to_one_process_checkpoints_the_run_and_stops_every_process(tmp_path):
  """A scheduler's stop (SIGTERM to any process): JAX's preemption service names one step for all, where the run
  checkpoints and every process exits 0, saying how to resume (it went on training until SIGKILL)."""
  run = tmp_path / "run"
  procs = _running_past_step_2(run)
  procs[1].send_signal(signal.SIGTERM)
  results = _finish(procs, timeout=180)
  assert all(rc == 0 for rc, _, _ in results), [r[2][-2000:] for r in results]
  assert "stopped by a preemption notice (SIGTERM)" in results[0][1]
  latest = ckpt.manager(run / "checkpoints").latest_step()
  with open(run / "metrics.csv") as f:
    assert latest == int(list(csv.DictReader(f))[-1]["step"]) < 400  # checkpointed where it stopped


@pytest.mark.slow
def test_a_lost_process_stops_the_other_and_the_run_resumes(tmp_path):
  run = tmp_path / "run"
  procs = _running_past_step_2(run)
  procs[1].send_signal(signal.SIGKILL)
  killed = time.time()
  rc, _, stderr = _finish(procs[:1], timeout=120)[0]
  assert time.time() - killed < 60 and rc != 0
  assert "unhealthy" in stderr or "died" in stderr or "Connection closed" in stderr, stderr[-3000:]
  procs[1].wait()
  latest = ckpt.manager(run / "checkpoints").latest_step()
  assert latest is not None and latest >= 2
  ckpt.remove_unfinished(run / "checkpoints")
  results = _finish(_launch(run, steps=latest + 2, resume=True))
  assert all(rc == 0 for rc, _, _ in results), results[0][2][-3000:]
  assert ckpt.manager(run / "checkpoints").latest_step() == latest + 2
