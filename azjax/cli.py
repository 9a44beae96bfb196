"""The command line of `python -m experiments.<game>`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from azjax import distributed
from azjax.config import SECTIONS, ConfigError, apply_overrides


def _field_table(game: str) -> str:
  from azjax.presets import PRESETS, preset
  configs = [preset(game, p).to_dict() for p in PRESETS]
  rows = [("game", *(c["game"] for c in configs)), ("seed", *(c["seed"] for c in configs))]
  for section in SECTIONS:
    for name in configs[0][section]:
      rows.append((f"{section}.{name}", *(c[section][name] for c in configs)))
  width = max(len(r[0]) for r in rows)
  lines = [f"  {'field':<{width}}  " + "  ".join(f"{p:>12}" for p in PRESETS)]
  for field, *values in rows:
    lines.append(f"  {field:<{width}}  " + "  ".join(f"{_fmt(v):>12}" for v in values))
  return "\n".join(lines)


def _fmt(v) -> str:
  if isinstance(v, (tuple, list)):
    return ",".join(str(x) for x in v) or "()"
  return f"{v:g}" if isinstance(v, float) else str(v)


def parser(game: str) -> argparse.ArgumentParser:
  p = argparse.ArgumentParser(
      prog=f"python -m experiments.{game}",
      description=f"Train AlphaZero on {game} by self-play.",
      formatter_class=argparse.RawDescriptionHelpFormatter,
      epilog="config fields (--set section.field=value) and their defaults per preset:\n" + _field_table(game))
  p.add_argument("--preset", default=None,
                 help="paper | small | cpu | smoke (default: cpu on a CPU, small on a GPU or TPU)")
  p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                 help="override a config field (repeatable)")
  p.add_argument("--run-dir", help="where config, metrics, TensorBoard files, checkpoints and the log go")
  p.add_argument("--resume", metavar="PATH", help="continue the run in PATH from its latest checkpoint")
  p.add_argument("--seed", type=int, help="random seed (same as --set seed=N)")
  p.add_argument("--no-progress", action="store_true", help="no progress bar")
  distributed.add_arguments(p)
  return p


def _without_missing_engine(config, overrides: list[str], say):
  """A preset's engine games (run.eval_engine_games) left out, with a line saying so, where the engine is not
  installed; asked for with --set, a missing engine stops the run at its start instead, naming its package."""
  if not config.run.eval_engine_games or any(o.startswith("run.eval_engine_games=") for o in overrides):
    return config
  from azjax.engines.match import ANCHOR_ENGINES, anchor_installed
  if anchor_installed(config.game):
    return config
  name = ANCHOR_ENGINES[config.game]
  say(f"evaluation: {name} is not installed, so the evaluations play without it (sudo apt-get install {name} "
      f"adds its {config.run.eval_engine_games} games)")
  return apply_overrides(config, ["run.eval_engine_games=0"])


def main(game: str, argv=None) -> int:
  """Runs an experiment; returns the exit code, with one clear message on failure: 2 for bad input (or no
  intact checkpoint to resume), 3 when training diverged, 4 when a file or checkpoint could not be written
  (disk full, unwritable; the earlier checkpoints are intact)."""
  try:  # first: building the parser imports the games, and pgx's import starts JAX's backend
    joined = distributed.initialize(distributed.parse_known(argv))
  except ValueError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  args = parser(game).parse_args(argv)
  print(joined, flush=True)
  say = print if distributed.is_main() else (lambda *a, **k: None)  # process 0 speaks for the run
  from azjax import checkpoint as ckpt
  from azjax.loop import DivergenceError, train
  from azjax.presets import preset
  overrides = list(args.overrides) + ([f"seed={args.seed}"] if args.seed is not None else [])
  try:
    if args.resume:
      directory, step = ckpt.checkpoint_dir(args.resume)
      if step is not None and step != ckpt.latest_step(directory):  # a run resumes from its newest step only
        raise ckpt.CheckpointError(
            f"--resume {args.resume}: a run resumes from its latest checkpoint, step {ckpt.latest_step(directory)}, "
            f"not step {step}; to branch from step {step}, copy the run directory and move its later steps aside")
      saved = directory.parent / "config.json"
      if not ckpt.steps(directory) and saved.is_file():  # stopped before its first checkpoint: start it again
        try:
          saved_config = json.loads(saved.read_text())
          meta = {"game": saved_config["game"], "config": saved_config}
        except (ValueError, KeyError, TypeError) as e:
          raise ckpt.CheckpointError(f"no checkpoint in {directory}, and {saved} is unreadable ({e})") from None
        say(f"no checkpoint in {directory} yet: the run starts again from step 0 with {saved}", file=sys.stderr)
      else:
        meta = ckpt.latest_meta(directory)  # the newest intact step's; training reports any damaged newer one
      if meta["game"] != game:
        raise ckpt.CheckpointError(f"{args.resume} is a {meta['game']} run, not {game}")
      config = apply_overrides(ckpt.config_from_meta(meta), overrides)
      run_dir = directory.parent
      if args.run_dir is not None and Path(args.run_dir).resolve() != run_dir.resolve():
        raise ConfigError("--run-dir", args.run_dir, f"{run_dir} or none with --resume (a run continues in its "
                          "own directory)")
      if args.preset is not None:  # the same command line again, with --resume: harmless, but said
        say(f"note: --preset {args.preset} does not apply to a resumed run: it keeps its saved config "
            "(--set changes a field)", file=sys.stderr)
    else:
      if args.preset is None:
        import jax
        from azjax.presets import default_preset
        args.preset = default_preset(jax.default_backend())
        say(f"preset: {args.preset} (chosen for the {jax.default_backend()} backend; --preset to change)")
      config = apply_overrides(preset(game, args.preset), overrides)
      config = _without_missing_engine(config, overrides, say)
      if config.game != game:
        raise ConfigError("game", config.game, f"{game} (this is experiments.{game})")
      if args.run_dir is None and distributed.topology(args) is not None:
        raise ConfigError("--run-dir", None, "a directory every process names alike (a run on several processes)")
      run_dir = args.run_dir or f"runs/{game}-{args.preset}-{time.strftime('%Y%m%d-%H%M%S')}"
    result = train(config, run_dir, resume=bool(args.resume), progress=not args.no_progress)
  except (ConfigError, ckpt.CheckpointError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  except DivergenceError as e:
    print(f"error: {e}", file=sys.stderr)
    return 3
  except OSError as e:  # ckpt.WriteError names the file; the run stopped with its earlier checkpoints intact
    print(f"error: {e}", file=sys.stderr)
    return 4
  say(f"run directory: {result.run_dir}")
  trained, where = result.step - result.start_step, ""
  if result.start_step:  # a resumed run names the steps it trained (none, if it had already finished)
    where = (f", steps {result.start_step + 1}-{result.step} (resumed at {result.start_step})" if trained
             else f" (at step {result.step})")
  say(f"trained {trained} steps in {result.seconds:.1f} s{where}")
  if result.out_of_time:
    why = "a preemption notice (SIGTERM)" if result.preempted else f"run.max_minutes={config.run.max_minutes:g}"
    say(f"stopped by {why} before train.num_steps={config.train.num_steps}: --resume {result.run_dir} continues it")
  if result.evaluation is not None:
    say(f"evaluation against the uniform random player: {result.evaluation}")
  return 0
