"""Ablation recipes: the questions the AlphaZero papers and their successors raise, as sweeps.

  python -m experiments.ablations                    # list the recipes
  python -m experiments.ablations simulations [--seeds 4] [--game G] [--preset P] [--set ...] [--out DIR]

Each recipe is a grid for `experiments.sweep`; README.md in this folder says what each asks,
where the paper's setting sits in it, and what a run costs. Extra --set values apply to every run
(for instance, smaller networks for a CPU).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Recipe:
  question: str
  grid: tuple[str, ...]  # --grid items
  fixed: tuple[str, ...] = ()  # --set items every run of the recipe shares
  game: str = "connect_four"
  preset: str = "small"


RECIPES = {
    "search": Recipe(
        "PUCT (AlphaZero) or Gumbel (Danihelka et al. 2022) search, at a budget where Gumbel should help",
        ("search.algorithm=puct,gumbel", "search.num_simulations=8,32")),
    "simulations": Recipe(
        "How strength grows with simulations per move (the paper: 800)",
        ("search.num_simulations=8,32,128",)),
    "network": Recipe(
        "Depth and width of the residual tower (the paper: 19 or 20 blocks x 256)",
        ("network.blocks=2,6", "network.channels=32,128")),
    "dirichlet": Recipe(
        "Root exploration noise: alpha and the fraction mixed into the prior (the paper: 0.25, alpha ~10/moves)",
        ("search.dirichlet_alpha=0.1,0.5,1.0", "search.dirichlet_fraction=0,0.25,0.5")),
    "opening_plies": Recipe(
        "Plies whose moves are sampled by visit counts before greedy play (the paper: 30)",
        ("selfplay.temperature_plies=0,8,30",)),
    # The learning rate is held constant: its drops (train.lr_boundaries) count updates, so under the preset's
    # schedule 32 updates a step would drop it 16 times sooner than 2 (the small preset's drops at updates 8,000
    # and 12,000 fall at steps 250 and 375 at 32, and past the run's end at 2), and the grid would measure that.
    "replay": Recipe(
        "Replay window and the ratio of positions trained to positions generated",
        ("replay.window=16384,131072", "train.updates_per_step=2,8,32"), ("train.lr_boundaries=",)),
}


def sweep_args(name: str, extra: list[str]) -> list[str]:
  """The `experiments.sweep` command line of recipe `name`; `extra` arguments come last and win: a field that
  `extra` sets or grids replaces the recipe's own grid or setting of it."""
  recipe = RECIPES[name]
  field = lambda item: item.partition("=")[0].strip()  # noqa: E731
  given = {field(extra[i + 1]) for i in range(len(extra) - 1) if extra[i] in ("--set", "--grid")}
  given |= {field(a.split("=", 1)[1]) for a in extra if a.startswith(("--set=", "--grid="))}
  args = ["--game", recipe.game, "--preset", recipe.preset]
  for item in recipe.grid:
    args += ["--grid", item] if field(item) not in given else []
  for item in recipe.fixed:
    args += ["--set", item] if field(item) not in given else []
  return args + list(extra)
