"""Elo fitting against results worked out by hand."""

import math

import pytest

from azjax import arena, elo


def test_two_players_known_score_gives_known_difference_and_error():
  # 75% over 100 games: the logistic model says 400 log10(3) = 190.85 Elo. The standard error is
  # 1 / sqrt(n p (1 - p)) on the natural scale: 400 / ln(10) / sqrt(100 * 0.75 * 0.25) = 40.12 Elo.
  r = elo.fit([elo.Game("a", "b", 75, 0, 25)], anchor="b")
  assert r["a"] == pytest.approx(400 * math.log10(3), abs=1e-6)
  assert r["b"] == 0.0 and r.stderr[r.players.index("b")] == 0.0
  assert r.stderr[r.players.index("a")] == pytest.approx(400 / math.log(10) / math.sqrt(18.75), rel=1e-6)
  assert r.interval("a")[0] == pytest.approx(r["a"] - 1.96 * r.stderr[0])


def test_draws_count_as_half_points_and_the_anchor_sets_the_scale():
  halves = elo.fit([elo.Game("a", "b", 50, 50, 0)], anchor="b", anchor_elo=1000)  # 75% again, via draws
  assert halves["a"] == pytest.approx(1000 + 400 * math.log10(3), abs=1e-6)
  even = elo.fit([elo.Game("a", "b", 0, 30, 0)], anchor="a")
  assert even["b"] == pytest.approx(0.0, abs=1e-9)


def test_ratings_chain_through_a_common_opponent():
  r = elo.fit([elo.Game("a", "b", 75, 0, 25), elo.Game("b", "c", 75, 0, 25)], anchor="c")
  assert r["a"] == pytest.approx(2 * 400 * math.log10(3), abs=1e-6)  # never met, linked through b
  assert r.games == (100, 200, 100)


def test_a_perfect_score_needs_a_prior_and_unlinked_players_are_named():
  with pytest.raises(ValueError, match="no finite maximum"):
    elo.fit([elo.Game("a", "b", 10, 0, 0)], anchor="b")
  r = elo.fit([elo.Game("a", "b", 10, 0, 0)], anchor="b", prior_draws=1.0)
  # One virtual draw: 10.5 points of 11 -> 400 log10(10.5 / 0.5).
  assert r["a"] == pytest.approx(400 * math.log10(21), abs=1e-6)
  with pytest.raises(ValueError, match="links c, d"):
    elo.fit([elo.Game("a", "b", 5, 0, 5), elo.Game("c", "d", 5, 0, 5)], anchor="a")
  with pytest.raises(ValueError, match="anchor 'z'"):
    elo.fit([elo.Game("a", "b", 5, 0, 5)], anchor="z")


def test_match_result_reports_the_elo_of_its_score():
  result = arena.MatchResult(wins=60, draws=30, losses=10)  # 75%
  d, lo, hi = result.elo()
  assert d == pytest.approx(400 * math.log10(3)) and lo < d < hi
  assert arena.MatchResult(wins=3, draws=0, losses=0).elo()[0] == math.inf


def test_match_interval_is_wilson_and_honest_at_the_extremes():
  # Wilson by hand for 0 of 20: upper end z^2/n / (1 + z^2/n) = 3.8416/20 / 1.19208 = 0.16113.
  lo, hi = arena.MatchResult(wins=0, draws=0, losses=20).interval()
  assert lo == 0.0 and hi == pytest.approx(0.16113, abs=1e-4)
  d, dlo, dhi = arena.MatchResult(wins=0, draws=0, losses=20).elo()
  assert d == -math.inf and dhi == pytest.approx(-286, abs=1)  # 400 log10(0.16113 / 0.83887)
  lo, hi = arena.MatchResult(wins=20, draws=0, losses=0).interval()
  assert hi == 1.0 and lo == pytest.approx(1 - 0.16113, abs=1e-4)
  # 7 of 10, no draws: Wilson's textbook interval 0.3968-0.8922.
  lo, hi = arena.MatchResult(wins=7, draws=0, losses=3).interval()
  assert (lo, hi) == (pytest.approx(0.3968, abs=1e-4), pytest.approx(0.8922, abs=1e-4))


def test_an_engine_round_whose_games_all_aborted_leaves_the_curve_as_it_was():
  # run_match returns 0-0-0 after two engine failures in a row: the fit must not stop the training run.
  from azjax import evaluation
  rows = [{"step": 100, "player": "step100", "opponent": "random", "wins": 28, "draws": 0, "losses": 4},
          {"step": 100, "player": "step100", "opponent": "gnugo level 1", "wins": 0, "draws": 0, "losses": 0}]
  ratings, curve = evaluation.fit_curve(rows)
  alone, _ = evaluation.fit_curve(rows[:1])
  assert [c["step"] for c in curve] == [100] and curve[0]["elo"] == pytest.approx(alone["step100"])
  assert "gnugo level 1" not in ratings.players
