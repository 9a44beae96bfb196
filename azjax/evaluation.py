"""Evaluation during training: games against anchors and earlier checkpoints, and the Elo curve.

`loop.train` calls an evaluator at each evaluation step; there are two:

- `RunEvaluation` (a run): the current network (named `step<N>`) plays `run.eval_games` games
  against each of: the uniform random player (the anchor, Elo 0), pure MCTS with random rollouts
  when `run.eval_mcts_simulations > 0`, and the latest `run.eval_pool` earlier evaluated
  checkpoints; with `run.eval_engine_games`, also the game's real engine (GNU Go, Stockfish,
  Fairy-Stockfish at their weakest), which the fit rates on the same scale, a fixed anchor nobody here
  wrote. Every game ever played in the run (evals.csv) goes into one maximum-likelihood fit,
  so earlier ratings sharpen as later games link them; elo.csv and elo.png hold the curve.
- `SeedEvaluation` (a sweep's seed-stacked runs): each seed's network against the anchors alone,
  its Elo fitted with the anchors' own games (played once, anchors.csv); one results.csv row per
  seed, labelled with the sweep's combination.

Networks play at `search.simulations_at_play` (play_simulations, else self-play's num_simulations).
"""

from __future__ import annotations

import csv
import dataclasses
import shutil
from pathlib import Path

import jax
import numpy as np

from azjax import arena, checkpoint as ckpt, elo
from azjax.agent import Agent
from azjax.config import Config, apply_overrides
from azjax.games import make_env
from azjax.records import CsvLog, read_rows, row_step
from azjax.train_step import seed_key

ANCHOR = "random"
PRIOR_DRAWS = 1.0  # virtual draws per pair (BayesElo's prior): a perfect score stays finite


def player_name(step: int) -> str:
  return f"step{step}"


def anchor_players(config: Config) -> list[arena.Player]:
  """The fixed anchors: the uniform random player, and pure MCTS when `run.eval_mcts_simulations` > 0."""
  players = [arena.random_player]
  if config.run.eval_mcts_simulations:
    players.append(arena.mcts_player(config.game, config.run.eval_mcts_simulations))
  return players


def opponents(config: Config, mngr, step: int, abstract_model) -> list[arena.Player]:
  """The anchors and the latest `run.eval_pool` earlier evaluated checkpoints still intact on disk (a
  damaged one is named on stderr and the next older one plays instead: an evaluation never stops a run)."""
  players, pool = anchor_players(config), []
  every = config.run.eval_every
  earlier = [s for s in ckpt.steps(mngr.directory) if s < step and every and s % every == 0]
  for s in sorted(earlier, reverse=True):
    if len(pool) == config.run.eval_pool:
      break
    try:
      params, bn_state = ckpt.load_model(mngr, abstract_model, s)
    except ckpt.CheckpointError as e:
      ckpt.warning(f"{e}; the evaluation plays without it")
      continue
    pool.append(Agent(config=config, params=params, bn_state=bn_state, step=s).player(player_name(s)))
  return players + pool[::-1]


def play_round(config: Config, agent: Agent, opponents: list[arena.Player], key) -> list[dict]:
  """The agent against each opponent; one evals.csv row per opponent."""
  me, rows = agent.player(player_name(agent.step)), []
  for i, other in enumerate(opponents):
    result = arena.match(agent.env, me, other, jax.random.fold_in(key, i), config.run.eval_games,
                         opening_plies=config.run.eval_opening_plies)
    lo, hi = result.interval()
    rows.append({"step": agent.step, "player": me.name, "opponent": other.name, "wins": result.wins,
                 "draws": result.draws, "losses": result.losses, "score": result.score, "score_lo": lo,
                 "score_hi": hi, **result.figures})
  return rows


def engine_round(config: Config, agent: Agent, out: Path) -> tuple[dict | None, str]:
  """The agent against its game's real engine (`run.eval_engine_games`): its evals.csv row, and a line for
  run.log (with the mean margin by the engine's own count, for Go). The records go to `out`, played again
  whole if a kill cut them short. An engine that does not start gives no row, and the run goes on."""
  from azjax.engines import match  # noqa: PLC0415  (the engines' processes: only when asked for)
  from azjax.engines.base import Thinker  # noqa: PLC0415
  shutil.rmtree(out, ignore_errors=True)
  try:
    result, outcomes = match.run_match(Thinker(agent, seed=agent.step), match.anchor_engine(config.game),
                                       config.game, config.run.eval_engine_games, out,
                                       opening_plies=config.run.eval_opening_plies, seed=agent.step,
                                       log=lambda line: None)
  except match.EngineFailure as e:  # it did not start (a handshake past its timeout on a loaded machine)
    return None, f"step {agent.step}: no games against the engine: it did not start ({e})"
  finished = [o for o in outcomes if o.points is not None]
  plies = np.array([len(o.moves) for o in finished] or [0])
  seat = lambda c: float(np.mean([o.points for o in finished if o.agent_colour == c] or [np.nan]))
  lo, hi = result.interval()
  row = {"step": agent.step, "player": player_name(agent.step), "opponent": outcomes[0].opponent,
         "wins": result.wins, "draws": result.draws, "losses": result.losses, "score": result.score, "score_lo": lo,
         "score_hi": hi, "mean_game_length": float(plies.mean()), "game_length_p50": float(np.median(plies)),
         "score_moving_first": seat(0), "score_moving_second": seat(1)}
  margins = match.mean_margin(finished)
  margin = f", mean margin {margins[0]:+.1f} points by its count" if margins else ""
  aborted = len(outcomes) - len(finished)
  line = (f"step {agent.step}: {row['player']} against {row['opponent']}: {result.wins} wins, {result.draws} draws, "
          f"{result.losses} losses{f' ({aborted} aborted)' if aborted else ''}, score {result.score:.3f} (95% CI "
          f"{lo:.3f}-{hi:.3f}){margin}; records in {out}")
  return row, line


def as_game(row: dict) -> elo.Game:
  """A match's row (evals.csv, anchors.csv, or as played) as the Elo fit's games."""
  return elo.Game(row["player"], row["opponent"], float(row["wins"]), float(row["draws"]), float(row["losses"]))


def fit_curve(rows: list[dict]) -> tuple[elo.Ratings, list[dict]]:
  """Ratings of every player in the games of `rows`, and the curve: one row per evaluated step."""
  games = [g for g in map(as_game, rows) if g.wins + g.draws + g.losses]  # an engine round that all aborted: none
  ratings = elo.fit(games, ANCHOR, prior_draws=PRIOR_DRAWS)
  steps = sorted({int(r["step"]) for r in rows})
  curve = []
  for s in steps:
    lo, hi = ratings.interval(player_name(s))
    curve.append({"step": s, "elo": ratings[player_name(s)], "elo_lo": lo, "elo_hi": hi})
  return ratings, curve


def plot_curve(curve: list[dict], ratings: elo.Ratings, path: Path, title: str) -> None:
  """The Elo curve with its 95% band, and the fixed anchors as horizontal lines (like the papers' Fig. 1)."""
  import matplotlib  # noqa: PLC0415  (only evaluation draws plots)
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # noqa: PLC0415

  fig, ax = plt.subplots(figsize=(6, 4))
  steps = [c["step"] for c in curve]
  ax.plot(steps, [c["elo"] for c in curve], marker="o", label="network with search")
  ax.fill_between(steps, [c["elo_lo"] for c in curve], [c["elo_hi"] for c in curve], alpha=0.25,
                  label="95% interval")
  for name in ratings.players:
    if not name.startswith("step"):
      ax.axhline(ratings[name], linestyle="--", color="grey", linewidth=1)
      ax.annotate(name, (steps[0], ratings[name]), textcoords="offset points", xytext=(2, 3), fontsize=8)
  ax.set_xlabel("training step")
  ax.set_ylabel(f"Elo ({ANCHOR} = 0)")
  ax.set_title(title)
  ax.legend(loc="lower right")
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)


def write_curve(run_dir: Path, curve: list[dict]) -> None:
  with (run_dir / "elo.csv").open("w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=["step", "elo", "elo_lo", "elo_hi"])
    writer.writeheader()
    writer.writerows(curve)


def is_evaluation_step(config: Config, step: int) -> bool:
  """Evaluations come every `run.eval_every` steps and at the last step; none with `run.eval_games=0`."""
  periodic = bool(config.run.eval_every and step % config.run.eval_every == 0)
  return step > 0 and config.run.eval_games > 0 and (periodic or step == config.train.num_steps)


def resume_csv(config: Config, path: Path, step: int) -> tuple[CsvLog, bool]:
  """An evaluator's CSV kept up to `step`, and whether `step`'s evaluation is missing (a kill cut it short)."""
  missing = is_evaluation_step(config, step) and not any(row_step(r) == step for r in read_rows(path))
  return CsvLog(path, step - 1 if missing else step), missing


@dataclasses.dataclass
class Report:
  """What an evaluation step tells the loop: TensorBoard scalars, lines for run.log, one for the terminal."""
  scalars: dict
  lines: list
  summary: str


class RunEvaluation:
  """A run's evaluation (see the module docstring): evals.csv, elo.csv, elo.png."""

  def __init__(self, config: Config, mngr, abstract_model):
    self.config, self.mngr, self.abstract_model = config, mngr, abstract_model
    if config.run.eval_engine_games:  # a missing engine stops the run now, naming its package, not at step N
      from azjax.engines import match  # noqa: PLC0415
      match.anchor_engine(config.game)
    self.result, self.ratings = None, None  # the latest against uniform random, and every rating

  def open(self, run_dir: Path, step: int) -> bool:
    """Keeps evals.csv's rows up to `step`; True when `step`'s evaluation is missing (a kill cut it short)."""
    self.run_dir = run_dir
    self.csv, missing = resume_csv(self.config, run_dir / "evals.csv", step)
    return missing

  def __call__(self, step: int, params, bn_state, rows: list[dict]) -> Report:
    config = self.config
    agent = Agent(config=config, params=params, bn_state=bn_state, step=step)
    key = jax.random.fold_in(seed_key(config.seed, "eval"), step)
    pool = opponents(config, ckpt.reader(self.mngr.directory), step, self.abstract_model)  # on process 0 alone
    games = play_round(config, agent, pool, key)
    lines = []
    for row in games:
      lines.append(f"step {step}: {row['player']} against {row['opponent']}: {row['wins']} wins, {row['draws']} "
                   f"draws, {row['losses']} losses, score {row['score']:.3f} (95% CI {row['score_lo']:.3f}-"
                   f"{row['score_hi']:.3f})")
    if config.run.eval_engine_games:
      row, line = engine_round(config, agent, self.run_dir / "engine" / f"step{step}")
      if row:  # None when the engine did not start
        games.append(row)
      lines.append(line)
    self.ratings, curve = fit_curve(read_rows(self.run_dir / "evals.csv") + games)
    write_curve(self.run_dir, curve)
    plot_curve(curve, self.ratings, self.run_dir / "elo.png", f"{config.game}: Elo over training")
    self.csv.extend(games)  # last and at once: a kill before it leaves no row, so a resumed run plays the step again
    now, vs_random = curve[-1], games[0]
    self.result = arena.MatchResult(wins=vs_random["wins"], draws=vs_random["draws"], losses=vs_random["losses"])
    lines.append(f"step {step}: Elo {now['elo']:.0f} (95% CI {now['elo_lo']:.0f} to {now['elo_hi']:.0f}) with "
                 f"random = 0")
    tag = lambda r: r["opponent"].replace(" ", "_")  # an engine's name has spaces: "gnugo level 1"
    figures = {f"{tag(r)}/{k}": v for r in games for k, v in r.items() if k in arena.FIGURES}
    return Report(scalars={**{f"score_vs_{tag(r)}": r["score"] for r in games}, "elo": now["elo"], **figures},
                  lines=lines, summary=f"step {step}: Elo {now['elo']:.0f} ({now['elo_lo']:.0f} to "
                                       f"{now['elo_hi']:.0f}); against uniform random: {self.result}")


class Gating:
  """Gating [AGZ] (`run.gate_games`): at an evaluation step the trained network plays the one self-play
  uses; gating.csv has one row per evaluation. Played before that step's checkpoint is written, so
  the checkpoint holds the decision and a resumed run makes it once."""

  def __init__(self, config: Config):
    self.config = config

  def open(self, run_dir: Path, step: int) -> None:
    self.csv = CsvLog(run_dir / "gating.csv", step)

  def __call__(self, step: int, params, bn_state, best) -> tuple[bool, str]:
    """(whether the trained network replaces self-play's, a line for the log)."""
    config, best_step = self.config, int(best.step)
    me = Agent(config=config, params=params, bn_state=bn_state, step=step)
    them = Agent(config=config, params=best.params, bn_state=best.bn_state, step=best_step)
    result = arena.match(me.env, me.player(player_name(step)), them.player(player_name(best_step)),
                         jax.random.fold_in(seed_key(config.seed, "gate"), step), config.run.gate_games,
                         opening_plies=config.run.eval_opening_plies)
    promoted = result.score > config.run.gate_score
    self.csv.append({"step": step, "best": best_step, "wins": result.wins, "draws": result.draws,
                     "losses": result.losses, "score": result.score, "promoted": int(promoted)})
    return promoted, (f"step {step}: gating against self-play's network (step {best_step}): {result.wins} wins, "
                      f"{result.draws} draws, {result.losses} losses, score {result.score:.3f}; "
                      + ("it replaces it" if promoted else f"not above {config.run.gate_score}, self-play keeps it"))


def anchor_games(config: Config, folder: Path) -> list[elo.Game]:
  """Pure MCTS against random, played once per folder (cached in anchors.csv)."""
  if not config.run.eval_mcts_simulations:
    return []
  path = folder / "anchors.csv"
  if not path.exists():
    mcts = arena.mcts_player(config.game, config.run.eval_mcts_simulations)
    r = arena.match(make_env(config.game), mcts, arena.random_player, seed_key(config.seed, "anchor"),
                    config.run.eval_games, opening_plies=config.run.eval_opening_plies)
    ckpt.atomic_write_text(path, f"player,opponent,wins,draws,losses\n{mcts.name},random,{r.wins},{r.draws},"
                                 f"{r.losses}\n")
  return [as_game(r) for r in read_rows(path)]


def evaluate_seed(config: Config, agent: Agent, anchors: list[elo.Game]) -> dict:
  """One seed's network against the anchors: scores, and its Elo fitted with the anchors' own games."""
  key = jax.random.fold_in(seed_key(config.seed, "eval"), agent.step)
  rows = play_round(config, agent, anchor_players(config), key)
  games = anchors + [as_game(r) for r in rows]
  ratings = elo.fit(games, ANCHOR, prior_draws=PRIOR_DRAWS)
  me = rows[0]["player"]
  lo, hi = ratings.interval(me)
  return {"elo": ratings[me], "elo_lo": lo, "elo_hi": hi, **{f"score_vs_{r['opponent']}": r["score"] for r in rows}}


class SeedEvaluation:
  """A seed-stacked run's evaluation (see the module docstring): results.csv, one row per seed and step."""

  TRAINING = ("loss", "value_loss", "policy_loss", "mean_game_length")  # copied from the step's metrics

  def __init__(self, config: Config, seeds: list[int], labels: dict):
    self.config, self.seeds, self.labels = config, list(seeds), labels
    self.result, self.ratings = None, None

  def open(self, run_dir: Path, step: int) -> bool:
    self.csv, missing = resume_csv(self.config, run_dir / "results.csv", step)
    self.anchors = anchor_games(self.config, run_dir)
    return missing

  def __call__(self, step: int, params, bn_state, rows: list[dict]) -> Report:
    scalars, scores, results = {}, [], []
    for i, (seed, row) in enumerate(zip(self.seeds, rows)):
      config = apply_overrides(self.config, [f"seed={seed}"])
      take = lambda tree: jax.tree.map(lambda x: x[i], tree)
      agent = Agent(config=config, params=take(params), bn_state=take(bn_state), step=step)
      result = evaluate_seed(config, agent, self.anchors)
      results.append({**self.labels, "seed": seed, "step": step, "positions": row["positions"], **result,
                      **{k: row[k] for k in self.TRAINING}})
      scalars.update({f"{k}_seed{seed}": v for k, v in result.items() if not k.endswith(("_lo", "_hi"))})
      scores.append(f"seed {seed}: Elo {result['elo']:.0f}, {result['score_vs_random']:.2f} against random")
    self.csv.extend(results)  # every seed's row or none: a resumed run evaluates the step again
    return Report(scalars=scalars, lines=[f"step {step}: {s}" for s in scores],
                  summary=f"step {step}: " + "; ".join(scores))
