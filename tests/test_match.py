"""Short real matches against engines installed from Debian packages (.ci/run installs them)."""

import csv
import logging
import subprocess
import sys
from pathlib import Path

import chess.pgn
import pytest
import shogi.KIF

from azjax.engines import match as m
from azjax.engines.base import Thinker
from azjax.engines.positions import GoPosition
from azjax.config import ConfigError
from conftest import run_module, untrained_agent, untrained_checkpoint


def _engine(name):
  try:
    return m.find_engine(name)
  except SystemExit:
    pytest.fail(f"{name} is not installed: .ci/run installs it with apt-get (see README)")


def _rows(out):
  with (out / "results.csv").open() as f:
    return list(csv.DictReader(f))


def test_smoke_agent_against_stockfish_at_its_weakest(tmp_path, caplog):
  thinker = Thinker(untrained_agent("chess", simulations=2))
  make = lambda: m.Stockfish(_engine("stockfish"), movetime_ms=1000, skill=0, depth=1)
  sf = make()
  assert sf.name == "stockfish skill 0 depth 1" and sf.limit.depth == 1
  sf.close()
  with caplog.at_level(logging.DEBUG, logger="chess.engine"):  # python-chess logs each command it sends
    result, games = m.run_match(thinker, make, "chess", 2, tmp_path, max_plies=60, log=lambda s: None)
  assert sum(r.getMessage().endswith("<< ucinewgame") for r in caplog.records) == 2  # each game starts afresh
  assert result.games == 2 and [g.agent_colour for g in games] == [0, 1]
  rows = _rows(tmp_path)
  assert [r["points"] for r in rows] == [str(g.points) for g in games]
  with (tmp_path / "games.pgn").open() as f:
    first, second = chess.pgn.read_game(f), chess.pgn.read_game(f)
  assert first.headers["White"].startswith("azjax") and second.headers["Black"].startswith("azjax")
  board = first.end().board()  # python-chess replays every move: all of them were legal
  assert len(board.move_stack) == int(rows[0]["plies"])


def test_smoke_agent_against_gnugo_level_1(tmp_path):
  thinker = Thinker(untrained_agent("go9", simulations=2))
  make = lambda: m.GnuGo(_engine("gnugo"), level=1, size=9, komi=6.5)  # GNU Go's count; the record says which
  result, games = m.run_match(thinker, make, "go9", 2, tmp_path, log=lambda s: None)
  assert result.games == 2 and all(g.points in (0.0, 0.5, 1.0) for g in games)
  records = (tmp_path / "games.sgf").read_text().splitlines()
  assert len(records) == 2 and all(r.startswith("(;GM[1]FF[4]SZ[9]KM[6.5]") and "RE[" in r for r in records)


def test_a_long_random_go_opening_skips_a_superko_repetition():
  """Seed 46's 86th random move (E7) repeats an earlier board: in pgx's mask, refused by the referee. The opening
  draws again where it raised before."""
  opening = m.random_opening("go9", 100, seed=46)
  position = GoPosition("go9")
  for action in opening:
    position.push(action)  # a referee accepts every move
  assert len(opening) == 100 and 81 not in opening


def test_a_go_game_stopped_at_pgxs_cap_is_counted_and_says_so():
  """pgx ends 9x9 Go at 162 plies as if the game were over; GNU Go then counts an unfinished board, and the
  record says where the game stopped (it read as an ordinary count before)."""
  thinker = Thinker(untrained_agent("go9", simulations=2))
  opening = m.random_opening("go9", 162, seed=0)  # stones only: the game reaches the cap in the opening
  gnugo = m.GnuGo(_engine("gnugo"), level=1, size=9, komi=7.5)
  try:
    outcome = m.play_game(0, thinker, gnugo, "go9", 0, opening, max_plies=1000)
  finally:
    gnugo.close()
  assert len(outcome.moves) == 162 and outcome.points in (0.0, 0.5, 1.0)
  assert outcome.reason.startswith("gnugo level 1's count ") and outcome.reason.endswith(" at pgx's 162-ply cap")


@pytest.mark.parametrize("capture_all_dead", [False, True])
def test_gnugo_under_tromp_taylor_captures_a_dead_stone_before_it_passes(capture_all_dead):
  # Black walls off columns A-E; a lone white stone at B5 inside is dead. White passes. By default GNU Go passes
  # too (its count removes the stone); playing Tromp-Taylor it must capture it first, or the stone counts for white.
  position = GoPosition("go9")
  for b, w in zip([f"E{i}" for i in range(1, 10)] + ["B2", "C7"], [f"F{i}" for i in range(1, 10)] + ["B5", "pass"]):
    position.play(b.lower())
    position.play(w.lower())
  gnugo = m.GnuGo(_engine("gnugo"), level=1, size=9, komi=7.5, capture_all_dead=capture_all_dead)
  try:
    gnugo.new_game()
    move = gnugo.move(position)
  finally:
    gnugo.close()
  assert (move == "pass") != capture_all_dead, move
  position.play(move)  # a move the referee accepts


def test_smoke_agent_against_fairy_stockfish_shogi(tmp_path):
  thinker = Thinker(untrained_agent("shogi", simulations=2))
  make = lambda: m.FairyStockfish(_engine("fairy-stockfish"), movetime_ms=10, skill=0)
  result, games = m.run_match(thinker, make, "shogi", 2, tmp_path, max_plies=40, log=lambda s: None)
  assert result.games == 2
  lines = (tmp_path / "games.usi").read_text().splitlines()
  assert lines[1].startswith("position startpos moves ") and len(lines) == 4
  records = sorted((tmp_path / "kif").glob("*.kif"))  # python-shogi, a parser nobody here wrote, reads them back
  assert [shogi.KIF.Parser.parse_file(str(r))[0]["moves"] for r in records] == [g.moves for g in games]


class CrashingGnuGo(m.GnuGo):
  """The real GNU Go, killed by us in the middle of the first game it plays."""
  crashes = 1

  def move(self, position):
    if CrashingGnuGo.crashes and len(position.moves) >= 4:
      CrashingGnuGo.crashes -= 1
      self.client.proc.kill()
    return super().move(position)


def test_a_crashed_engine_is_reported_restarted_and_no_game_is_lost(tmp_path):
  thinker = Thinker(untrained_agent("go9", simulations=2))
  logged = []
  make = lambda: CrashingGnuGo(_engine("gnugo"), level=1, size=9, komi=7.5)
  result, games = m.run_match(thinker, make, "go9", 3, tmp_path, log=logged.append)
  assert games[0].points is None and "died" in games[0].reason
  assert result.games == 2 and all(g.points is not None for g in games[1:])
  assert any("aborted" in line for line in logged)
  rows = _rows(tmp_path)
  assert len(rows) == 3 and rows[0]["points"] == "" and rows[0]["reason"].startswith("aborted")
  # The aborted game's record keeps the moves played before the crash (the kill came at ply 4 or later).
  assert len(games[0].moves) >= 4 and rows[0]["plies"] == str(len(games[0].moves)) and games[0].seconds > 0
  first = (tmp_path / "games.sgf").read_text().splitlines()[0]
  assert "RE[?]" in first and first.count(";B[") + first.count(";W[") == len(games[0].moves)


def test_an_engine_that_does_not_restart_ends_the_match_with_the_games_so_far(tmp_path, monkeypatch):
  monkeypatch.setattr(CrashingGnuGo, "crashes", 1)
  thinker, logged, starts = Thinker(untrained_agent("go9", simulations=2)), [], []

  def make():
    starts.append(len(starts))
    if len(starts) > 1:
      raise m.EngineFailure("gnugo did not answer within 60.0 s")
    return CrashingGnuGo(_engine("gnugo"), level=1, size=9, komi=7.5)

  result, games = m.run_match(thinker, make, "go9", 3, tmp_path, log=logged.append)
  assert len(starts) == 2 and len(games) == 1 and games[0].points is None and result.games == 0
  assert logged[-1] == "the engine did not restart (gnugo did not answer within 60.0 s): the match stops here"
  assert len(_rows(tmp_path)) == 1


class GnuGoDyingAtTheCount(m.GnuGo):
  """The real GNU Go, killed by us when it is asked to count the finished game."""

  def judge(self, position):
    self.client.proc.kill()
    return super().judge(position)


def test_an_engine_that_dies_counting_aborts_the_game_with_its_moves(tmp_path):
  thinker = Thinker(untrained_agent("go9", simulations=2))
  make = lambda: GnuGoDyingAtTheCount(_engine("gnugo"), level=1, size=9, komi=7.5)
  result, games = m.run_match(thinker, make, "go9", 1, tmp_path, log=lambda line: None)
  assert games[0].points is None and "died" in games[0].reason and result.games == 0
  assert len(games[0].moves) >= 2 and _rows(tmp_path)[0]["plies"] == str(len(games[0].moves))


def test_an_evaluation_whose_engine_does_not_start_goes_on_without_it(tmp_path, monkeypatch):
  from azjax import evaluation

  def refuse():
    raise m.EngineFailure("gnugo did not answer within 60.0 s")

  monkeypatch.setattr(m, "anchor_engine", lambda game: refuse)
  agent = untrained_agent("go9", simulations=2)
  row, line = evaluation.engine_round(agent.config, agent, tmp_path / "engine")
  assert row is None
  assert line == (f"step {agent.step}: no games against the engine: it did not start "
                  "(gnugo did not answer within 60.0 s)")


def test_a_hung_engine_times_out():
  client = m.LineClient(["sleep", "30"])
  with pytest.raises(m.EngineFailure, match="did not answer"):
    client.read_until(lambda line: True, timeout=0.3)
  client.close()


def test_an_agent_plays_with_other_search_settings_but_its_own_network():
  agent = untrained_agent("go9")
  keep = agent.with_search(["search.go_fill_eyes=false", "search.num_simulations=8"])
  assert not keep.config.search.go_fill_eyes and keep.config.search.num_simulations == 8
  assert keep.params is agent.params and keep.config.network == agent.config.network and agent.config.search.go_fill_eyes
  for bad, field in (("network.blocks=3", "network.blocks"), ("search.go_fill_eyes=maybe", "search.go_fill_eyes")):
    with pytest.raises(ConfigError) as e:
      agent.with_search([bad])
    assert e.value.field == field


def _refused(capfd, *argv) -> str:
  """The match command's refusal, run in this process (its match runs as a process below): its message."""
  code, _, err = run_module(capfd, "experiments.match", *argv)
  assert code == 2 and "Traceback" not in err, err
  return err


def test_match_cli_plays_with_a_search_setting_and_refuses_one_outside_search(tmp_path, capfd):
  run = untrained_checkpoint("go9", tmp_path / "run")
  err = _refused(capfd, "--game", "go9", "--checkpoint", run, "--opponent", "gnugo", "--set", "network.blocks=3",
                 "--out", str(tmp_path / "out"))
  assert "network.blocks" in err and not (tmp_path / "out").exists()
  r = subprocess.run([sys.executable, "-m", "experiments.match", "--game", "go9", "--checkpoint", run, "--opponent",
                      "gnugo", "--level", "1", "--games", "2", "--simulations", "2", "--set", "search.go_fill_eyes=false",
                      "--capture-all-dead", "--out", str(tmp_path / "out")],
                     cwd=Path(__file__).parent.parent, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr
  summary = (tmp_path / "out" / "summary.txt").read_text()
  assert "(2 simulations, search.go_fill_eyes=false) against gnugo (Tromp-Taylor: --capture-all-dead)" in summary
  assert "mean margin by the engine's count " in summary and "over 2 games" in summary
  assert "--capture-all-dead is GNU Go's" in _refused(capfd, "--game", "chess", "--checkpoint", run, "--opponent",
                                                     "stockfish", "--capture-all-dead")
  # Engine settings outside their ranges, and an engine that is not there, are refused before anything loads.
  for flags, text in ((["--opponent", "gnugo", "--level", "11"], "GNU Go's levels are 0-10"),
                      (["--opponent", "gnugo", "--engine-path", str(tmp_path / "none")], "no executable file there")):
    assert text in _refused(capfd, "--game", "go9", "--checkpoint", run, *flags)
  assert "Skill Level is 0-20" in _refused(capfd, "--game", "chess", "--checkpoint", run, "--opponent", "stockfish",
                                           "--skill", "-1")


def test_a_runs_evaluations_play_the_real_engine_and_rate_it(tmp_path):
  """run.eval_engine_games: each evaluation also plays GNU Go level 1; its games join evals.csv and the Elo fit
  (GNU Go gets a rating on the run's scale), their records and GNU Go's own counts land in engine/step<N>/."""
  run = tmp_path / "run"
  r = subprocess.run([sys.executable, "-m", "experiments.go9", "--preset", "smoke", "--set", "train.num_steps=2",
                      "--set", "run.eval_games=2", "--set", "run.eval_engine_games=2", "--run-dir", str(run),
                      "--no-progress"], cwd=Path(__file__).parent.parent, capture_output=True, text=True, timeout=900)
  assert r.returncode == 0, r.stderr[-3000:]
  with (run / "evals.csv").open() as f:
    rows = {row["opponent"]: row for row in csv.DictReader(f)}
  engine = rows["gnugo level 1"]
  assert engine["step"] == "2" and sum(int(engine[k]) for k in ("wins", "draws", "losses")) == 2
  assert float(engine["mean_game_length"]) > 0 and "random" in rows
  results = _rows(run / "engine" / "step2")
  assert len(results) == 2 and all(row["reason"].startswith("gnugo level 1's count ") for row in results)
  assert len((run / "engine" / "step2" / "games.sgf").read_text().splitlines()) == 2
  log = (run / "run.log").read_text()
  assert "against gnugo level 1: " in log and "mean margin" in log
  assert (run / "elo.csv").exists()


def test_a_presets_engine_games_are_left_out_where_the_engine_is_missing(monkeypatch):
  """The go9 cpu preset plays GNU Go at each evaluation; with no GNU Go installed `experiments.go9` says so and
  plays without it, while an explicit --set run.eval_engine_games keeps asking (the run then stops naming the
  package)."""
  from azjax import cli
  from azjax.presets import preset
  from azjax.config import ENGINE_GAMES
  assert set(m.ANCHOR_ENGINES) == set(ENGINE_GAMES)  # the config's list of games a real engine plays, as here
  config, lines = preset("go9", "cpu"), []
  assert config.run.eval_engine_games == 20 and m.anchor_installed("go9")  # CI installs GNU Go
  assert cli._without_missing_engine(config, [], lines.append) is config and not lines
  monkeypatch.setattr(m, "_locate", lambda name: None)
  assert not m.anchor_installed("go9")
  assert cli._without_missing_engine(config, [], lines.append).run.eval_engine_games == 0
  assert lines == ["evaluation: gnugo is not installed, so the evaluations play without it "
                   "(sudo apt-get install gnugo adds its 20 games)"]
  asked = ["run.eval_engine_games=20"]
  assert cli._without_missing_engine(config, asked, lines.append) is config
  with pytest.raises(SystemExit, match="gnugo is not installed"):
    m.anchor_engine("go9")
