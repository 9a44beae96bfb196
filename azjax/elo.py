"""Elo ratings of a pool of players by maximum likelihood over all their games.

The model is the logistic one behind Elo (and the AlphaZero papers' BayesElo
plots): player i scores against player j with expectation
1 / (1 + 10^((r_j - r_i) / 400)). A draw counts as half a win and half a loss.
Ratings maximise the likelihood of every game's score, with one named player
held at a fixed rating (the anchor); error bars come from the inverse of the
observed information (the negative Hessian of the log-likelihood).

A player that won or lost every game has no finite maximum. `prior_draws`
adds that many virtual draws to every pair that played (BayesElo's device), which
keeps such ratings finite and pulls them towards their opponents a little.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Iterable

import numpy as np

_NO_MAXIMUM = ("the ratings have no finite maximum (some player won or lost every game against the rest); "
               "pass prior_draws > 0")
ELO_PER_NAT = 400.0 / math.log(10.0)  # rating points per unit of the logistic model's natural scale


@dataclasses.dataclass(frozen=True)
class Game:
  """The results of `first` against `second`: their wins, draws and losses from `first`'s side."""
  first: str
  second: str
  wins: float
  draws: float
  losses: float


@dataclasses.dataclass(frozen=True)
class Ratings:
  players: tuple[str, ...]
  elo: tuple[float, ...]
  stderr: tuple[float, ...]  # 0 for the anchor
  anchor: str
  games: tuple[int, ...]  # games each player took part in

  def __getitem__(self, name: str) -> float:
    return self.elo[self.players.index(name)]

  def interval(self, name: str, z: float = 1.96) -> tuple[float, float]:
    i = self.players.index(name)
    return self.elo[i] - z * self.stderr[i], self.elo[i] + z * self.stderr[i]

  def table(self) -> str:
    """Players from strongest to weakest with their rating and 95% interval."""
    width = max(len(p) for p in self.players)
    lines = [f"{'player':<{width}}  {'elo':>7}  {'95% interval':>17}  games"]
    for i in np.argsort(self.elo)[::-1]:
      lo, hi = self.interval(self.players[i])
      anchor = "  (anchor)" if self.players[i] == self.anchor else ""
      lines.append(f"{self.players[i]:<{width}}  {self.elo[i]:7.1f}  {lo:8.1f}-{hi:8.1f}  {self.games[i]:5d}{anchor}")
    return "\n".join(lines)


def fit(games: Iterable[Game], anchor: str, anchor_elo: float = 0.0, *, prior_draws: float = 0.0,
        max_iterations: int = 200) -> Ratings:
  """Maximum-likelihood Elo ratings of every player in `games`, `anchor` held at `anchor_elo`."""
  games = list(games)
  players = sorted({g.first for g in games} | {g.second for g in games})
  if anchor not in players:
    raise ValueError(f"the anchor {anchor!r} played no game; players: {', '.join(players) or 'none'}")
  index = {p: i for i, p in enumerate(players)}
  n = len(players)
  count = np.zeros((n, n))  # games between i and j (symmetric)
  points = np.zeros((n, n))  # points i scored against j
  for g in games:
    if min(g.wins, g.draws, g.losses) < 0:
      raise ValueError(f"negative result count in {g}")
    i, j = index[g.first], index[g.second]
    total = g.wins + g.draws + g.losses
    count[i, j] += total
    count[j, i] += total
    points[i, j] += g.wins + 0.5 * g.draws
    points[j, i] += g.losses + 0.5 * g.draws
  played = count > 0
  count = count + prior_draws * played
  points = points + 0.5 * prior_draws * played

  free = np.array([p != anchor for p in players])
  _check_connected(players, played, index[anchor])
  theta = np.zeros(n)
  for _ in range(max_iterations):
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j]: expected score of i against j
    grad = (points - count * p).sum(axis=1)
    w = count * p * (1.0 - p)
    hess = np.diag(w.sum(axis=1)) - w  # the observed information
    try:
      step = np.linalg.solve(hess[np.ix_(free, free)], grad[free])
    except np.linalg.LinAlgError:
      step = np.full(free.sum(), np.inf)  # singular: the likelihood is flat in some direction
    if not np.all(np.isfinite(step)) or np.max(np.abs(theta)) > 40:  # ~7000 Elo: still rising, no maximum
      raise ValueError(_NO_MAXIMUM)
    step = np.clip(step, -2.0, 2.0)  # a damped Newton step: at most ~350 Elo per iteration
    theta[free] += step
    if np.max(np.abs(step)) < 1e-10:
      break
  else:
    raise ValueError(_NO_MAXIMUM)
  cov = np.zeros((n, n))
  cov[np.ix_(free, free)] = np.linalg.inv(hess[np.ix_(free, free)])
  elo = anchor_elo + ELO_PER_NAT * theta
  stderr = ELO_PER_NAT * np.sqrt(np.clip(np.diag(cov), 0.0, None))
  real_games = (count - prior_draws * played).sum(axis=1)
  return Ratings(players=tuple(players), elo=tuple(float(x) for x in elo), stderr=tuple(float(x) for x in stderr),
                 anchor=anchor, games=tuple(int(round(x)) for x in real_games))


def _check_connected(players, played, anchor: int):
  seen, frontier = {anchor}, [anchor]
  while frontier:
    i = frontier.pop()
    for j in np.flatnonzero(played[i]):
      if j not in seen:
        seen.add(int(j))
        frontier.append(int(j))
  lost = [players[i] for i in range(len(players)) if i not in seen]
  if lost:
    raise ValueError(f"no chain of games links {', '.join(lost)} to the anchor {players[anchor]!r}")
