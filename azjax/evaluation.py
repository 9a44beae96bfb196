"""Evaluation during training: games against anchors and earlier checkpoints, and the Elo curve.

At each evaluation the current network (named `step<N>`) plays
`run.eval_games` games against each of: the uniform random player (the anchor,
Elo 0), pure MCTS with random rollouts when `run.eval_mcts_simulations > 0`,
and the latest `run.eval_pool` earlier evaluated checkpoints. Every game ever
played in the run (evals.csv) goes into one maximum-likelihood fit, so earlier
ratings sharpen as later games link them; elo.csv and elo.png hold the curve.
"""

from __future__ import annotations

import csv
from pathlib import Path

import jax

from azjax import arena, checkpoint as ckpt, elo
from azjax.agent import Agent
from azjax.config import Config

ANCHOR = "random"
PRIOR_DRAWS = 1.0  # virtual draws per pair (BayesElo's prior): a perfect score stays finite


def player_name(step: int) -> str:
  return f"step{step}"


def opponents(config: Config, mngr, step: int, abstract_model) -> list[arena.Player]:
  """The anchors and the latest earlier evaluated checkpoints still on disk."""
  players = [arena.random_player]
  if config.run.eval_mcts_simulations:
    players.append(arena.mcts_player(config.game, config.run.eval_mcts_simulations))
  every = config.run.eval_every
  earlier = [s for s in mngr.all_steps() if s < step and every and s % every == 0]
  for s in sorted(earlier)[-config.run.eval_pool:] if config.run.eval_pool else []:
    params, bn_state = ckpt.restore_model(mngr, abstract_model, s)
    players.append(Agent(config=config, params=params, bn_state=bn_state, step=s).player(player_name(s)))
  return players


def play_round(config: Config, agent: Agent, opponents: list[arena.Player], key) -> list[dict]:
  """The agent against each opponent; one evals.csv row per opponent."""
  me, rows = agent.player(player_name(agent.step)), []
  for i, other in enumerate(opponents):
    result = arena.match(agent.env, me, other, jax.random.fold_in(key, i), config.run.eval_games,
                         opening_plies=config.run.eval_opening_plies)
    lo, hi = result.interval()
    rows.append({"step": agent.step, "player": me.name, "opponent": other.name, "wins": result.wins,
                 "draws": result.draws, "losses": result.losses, "score": result.score, "score_lo": lo,
                 "score_hi": hi})
  return rows


def read_rows(path: Path) -> list[dict]:
  if not path.exists():
    return []
  with path.open() as f:
    return list(csv.DictReader(f))


def fit_curve(rows: list[dict]) -> tuple[elo.Ratings, list[dict]]:
  """Ratings of every player in the games of `rows`, and the curve: one row per evaluated step."""
  games = [elo.Game(r["player"], r["opponent"], float(r["wins"]), float(r["draws"]), float(r["losses"]))
           for r in rows]
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
