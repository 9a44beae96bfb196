"""Sweeps: every combination of a grid of config values, several seeds each.

The seeds of one combination train in ONE XLA program: `make_train_step(...,
seeds=S)` vmaps the step inside each device's shard, so on several devices every
seed's games are split over them. `seeds_per_program` caps how many share a
program when memory does not allow all. A sweep directory holds:

  sweep.json                    the game, preset, fixed overrides, grid and seeds
  <combination>/seeds-<a>-<b>/  one unit: a combination and a group of seeds
      checkpoints/              the seed-stacked TrainState (a resumed unit continues exactly)
      metrics.csv, results.csv  training metrics, and one row per seed and evaluation point
      done                      written last: a resumed sweep skips the unit
  results.csv                   tidy: one row per run (combination, seed) and evaluation point
  summary.csv, summary.md       per combination at its last evaluation: mean and 95% t-interval over seeds
  elo.png, score_vs_random.png  curves per combination: mean over seeds and its 95% band

A unit is trained by the run loop (`loop.train` with `seeds`). An evaluation point plays each
seed's network (with search) against the uniform random player and, when
`run.eval_mcts_simulations` > 0, pure MCTS; the pure MCTS anchor's own games against random
are played once per unit, so Elo (random = 0) is fitted for every run and step from anchors
alone (`evaluation.SeedEvaluation`).
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from pathlib import Path

import numpy as np

from azjax import checkpoint as ckpt, distributed, evaluation
from azjax.config import Config, ConfigError, apply_overrides
from azjax.loop import train
from azjax.records import read_rows

SUMMARY_METRICS = ("elo", "score_vs_random", "loss")


def parse_grid(items: list[str]) -> dict[str, list[str]]:
  """['search.num_simulations=8,32', ...] -> {'search.num_simulations': ['8', '32'], ...}.

  Commas inside brackets belong to one value: `train.lr_boundaries=[100,200],[300,400]`."""
  grid = {}
  for item in items:
    field, sep, text = item.partition("=")
    if not sep or not text:
      raise ConfigError(item, item, "expected --grid section.field=value1,value2,...")
    values = [v.strip() for v in re.split(r",(?![^\[\(]*[\]\)])", text) if v.strip()]
    if field.strip() in grid:
      raise ConfigError(field, text, "each field appears in one --grid only")
    grid[field.strip()] = [v.strip("[]()") if v.startswith(("[", "(")) else v for v in values]
  return grid


def combinations(base: Config, grid: dict[str, list[str]]) -> list[tuple[str, dict, Config]]:
  """(name, {field: value}, validated config) for every combination; bad values raise ConfigError."""
  out = []
  for values in itertools.product(*grid.values()) if grid else [()]:
    chosen = dict(zip(grid, values))
    config = apply_overrides(base, [f"{k}={v}" for k, v in chosen.items()])
    name = ",".join(f"{k}={v}" for k, v in chosen.items()) or "base"
    out.append((name.replace("/", "_"), chosen, config))
  return out


def seed_groups(seeds: list[int], per_program: int) -> list[list[int]]:
  per_program = per_program or len(seeds)
  return [seeds[i:i + per_program] for i in range(0, len(seeds), per_program)]


def run_unit(config: Config, seeds: list[int], unit: Path, labels: dict, progress: bool = True) -> None:
  """Trains (or resumes) the runs of `config` with `seeds` in one program: the run loop on a seed-stacked
  state, evaluated against the anchors (`evaluation.SeedEvaluation`); writes `done` when finished."""
  result = train(config, unit, resume=True, progress=progress, seeds=seeds,
                 evaluator=evaluation.SeedEvaluation(config, seeds, labels), desc=unit.parent.name)
  if distributed.is_main():
    ckpt.atomic_write_text(unit / "done", json.dumps({"steps": result.step, "seeds": seeds}))
  distributed.barrier("azjax-unit-done")


def run_sweep(out: str | Path, game: str, preset_name: str, fixed: list[str], grid_items: list[str],
              seeds: list[int], seeds_per_program: int = 0, progress: bool = True) -> Path:
  """Runs (or resumes) a sweep in `out`; returns the directory. Finished units are skipped.

  On several processes every process calls it alike; process 0 writes the sweep's own files."""
  from azjax.presets import preset
  out = Path(out)
  spec = {"game": game, "preset": preset_name, "set": list(fixed), "grid": list(grid_items), "seeds": list(seeds)}
  fields, grid = [item.partition("=")[0].strip() for item in fixed], parse_grid(grid_items)
  for field in fields + list(grid):
    if field == "seed":  # each run's seed is its place in --seeds; a seed field would be recorded and not used
      raise ConfigError("seed", field, "given by --seeds in a sweep (seeds 0..N-1 for every combination)")
    if field == "game":  # the sweep's records, plots and checks are the --game's
      raise ConfigError("game", field, "given by --game in a sweep (one game a sweep)")
  both = sorted(set(fields) & set(grid))
  if both:  # the grid's values would silently replace the fixed one
    raise ConfigError(both[0], both[0], "in --grid or in --set, not both")
  # Every config is valid before anything runs (the game is --game's: `game` was refused above).
  combos = combinations(apply_overrides(preset(game, preset_name), fixed), grid)
  for _, _, config in combos:  # a sweep's evaluation plays the anchors alone (evaluation.SeedEvaluation)
    if config.run.eval_engine_games:
      raise ConfigError("run.eval_engine_games", config.run.eval_engine_games, "0 in a sweep: real engines play "
                        "in a run's evaluations (python -m experiments.<game>) or in experiments.match")
  out.mkdir(parents=True, exist_ok=True)
  spec_path = out / "sweep.json"
  if spec_path.exists() and json.loads(spec_path.read_text()) != spec:
    raise ckpt.CheckpointError(f"{out} holds another sweep ({spec_path}); choose another --out")
  groups = seed_groups(list(seeds), seeds_per_program)
  for name, _, _ in combos:  # a unit of another grouping would count its seeds twice in the summary
    other = sorted({p.name for p in (out / name).glob("seeds-*")} - {f"seeds-{g[0]}-{g[-1]}" for g in groups})
    if other:
      raise ckpt.CheckpointError(f"{out / name} holds {', '.join(other)}, which --seeds-per-program "
                                 f"{seeds_per_program} does not make: resume with the one that made it")
  main = distributed.is_main()
  if main:
    ckpt.atomic_write_text(spec_path, json.dumps(spec, indent=2))
  for name, chosen, config in combos:
    for group in groups:
      unit = out / name / f"seeds-{group[0]}-{group[-1]}"
      if (unit / "done").exists():
        continue
      (out / name).mkdir(parents=True, exist_ok=True)
      if main:
        ckpt.atomic_write_text(out / name / "config.json", config.to_json())
      run_unit(config, group, unit, {"combination": name, **chosen}, progress)
      if main:
        summarise(out)
  if main:
    summarise(out)
  return out


# ------------------------------------------------------------------------------------------------ results


def read_results(out: Path) -> list[dict]:
  """Every unit's results.csv, combinations in grid order and seed groups in seed order.

  A folder that holds only the sweep's tidy results.csv (its units removed) reads as that table.
  """
  out = Path(out)
  names = [None]
  if (out / "sweep.json").exists():
    names = [",".join(f"{k}={v}" for k, v in zip(grid, values)).replace("/", "_") or "base"
             for grid in [parse_grid(json.loads((out / "sweep.json").read_text())["grid"])]
             for values in itertools.product(*grid.values())]
  rows = []
  for name in names:
    units = out.glob(f"{glob_escape(name)}/seeds-*/results.csv") if name else out.glob("*/seeds-*/results.csv")
    for path in sorted(units, key=lambda p: (p.parent.parent.name, int(p.parent.name.split("-")[1]))):
      rows.extend(read_rows(path))
  if not rows:  # a sweep kept without its unit folders (as in docs/results): the tidy table it wrote
    rows = read_rows(out / "results.csv")
  return rows


def glob_escape(name: str) -> str:
  return re.sub(r"([\[\]*?])", r"[\1]", name)


def mean_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
  """Mean and its two-sided t-interval (a single value has no interval: NaN ends)."""
  from scipy import stats  # jax depends on scipy
  x = np.asarray(values, np.float64)
  mean = float(x.mean())
  if len(x) < 2:
    return mean, math.nan, math.nan
  half = float(stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
  return mean, mean - half, mean + half


def summary(rows: list[dict]) -> list[dict]:
  """Per combination, at its last evaluated step: seeds, and mean with 95% interval of each metric."""
  out = []
  for name in dict.fromkeys(r["combination"] for r in rows):
    mine = [r for r in rows if r["combination"] == name]
    last = max(int(r["step"]) for r in mine)
    at = [r for r in mine if int(r["step"]) == last]
    row = {"combination": name, "step": last, "seeds": len(at)}
    for metric in SUMMARY_METRICS + tuple(k for k in at[0] if k.startswith("score_vs_") and k != "score_vs_random"):
      if metric in at[0]:
        m, lo, hi = mean_interval([float(r[metric]) for r in at])
        if metric.startswith("score_vs_"):  # a score lives in [0, 1]
          lo, hi = max(lo, 0.0), min(hi, 1.0)
        row.update({metric: m, f"{metric}_lo": lo, f"{metric}_hi": hi})
    out.append(row)
  return out


def markdown_table(table: list[dict]) -> str:
  keys = dict.fromkeys(k for r in table for k in r)  # a combination may have columns the first lacks
  metrics = [k for k in keys if k not in ("combination", "step", "seeds") and not k.endswith(("_lo", "_hi"))]
  lines = ["| combination | step | seeds | " + " | ".join(f"{m} (95% CI)" for m in metrics) + " |",
           "|" + "---|" * (3 + len(metrics))]
  for r in table:
    nan = math.nan
    cells = [f"{r.get(m, nan):.3g} ({r.get(m + '_lo', nan):.3g} to {r.get(m + '_hi', nan):.3g})" for m in metrics]
    lines.append(f"| {r['combination']} | {r['step']} | {r['seeds']} | " + " | ".join(cells) + " |")
  return "\n".join(lines) + "\n"


def plot(rows: list[dict], metric: str, path: Path, title: str) -> None:
  """Mean over seeds per combination and evaluation step, with the 95% t-band."""
  import matplotlib  # noqa: PLC0415
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # noqa: PLC0415
  fig, ax = plt.subplots(figsize=(7, 4.5))
  for name in dict.fromkeys(r["combination"] for r in rows):
    mine = [r for r in rows if r["combination"] == name and r.get(metric, "") != ""]
    steps = sorted({int(r["step"]) for r in mine})
    stats = [mean_interval([float(r[metric]) for r in mine if int(r["step"]) == s]) for s in steps]
    line, = ax.plot(steps, [s[0] for s in stats], marker="o", label=name)
    ax.fill_between(steps, [s[1] for s in stats], [s[2] for s in stats], alpha=0.2, color=line.get_color())
  ax.set_xlabel("training step")
  ax.set_ylabel(metric)
  ax.set_title(title)
  ax.legend(fontsize=7)
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)


def summarise(out: Path) -> list[dict]:
  """Writes results.csv, summary.csv, summary.md and the plots from every unit's results so far."""
  out = Path(out)
  rows = read_results(out)
  if not rows:
    return []
  fields = list(dict.fromkeys(k for r in rows for k in r))
  with (out / "results.csv").open("w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows)
  table = summary(rows)
  with (out / "summary.csv").open("w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in table for k in r)))
    writer.writeheader()
    writer.writerows(table)
  (out / "summary.md").write_text(markdown_table(table))
  game = json.loads((out / "sweep.json").read_text())["game"]
  for metric in ("elo", "score_vs_random"):
    plot(rows, metric, out / f"{metric}.png", f"{game}: {metric} (mean over seeds, 95% band)")
  return table
