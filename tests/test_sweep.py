import csv
import json

import jax
import numpy as np
import pytest

import azjax
from azjax import checkpoint as ckpt, sweep, train_step as train_lib
from conftest import run_module


def test_seeds_in_one_program_match_single_runs():
  config = azjax.preset("tictactoe", "smoke")
  program, mesh = train_lib.build(config), train_lib.make_mesh()
  together = train_lib.init_state(program, mesh, seeds=[3, 5])
  step = train_lib.make_train_step(program, mesh, seeds=2)
  for _ in range(2):
    together, metrics = step(together)
  assert np.asarray(metrics["loss"]).shape == (2,)
  single_step = train_lib.make_train_step(program, mesh)
  for i, seed in enumerate([3, 5]):
    alone = train_lib.init_state(train_lib.build(azjax.apply_overrides(config, [f"seed={seed}"])), mesh)
    for _ in range(2):
      alone, _ = single_step(alone)
    np.testing.assert_array_equal(np.asarray(together.replay.obs[i]), np.asarray(alone.replay.obs))
    for a, b in zip(jax.tree.leaves(together.params), jax.tree.leaves(alone.params)):
      np.testing.assert_allclose(np.asarray(a[i]), np.asarray(b), rtol=1e-4, atol=1e-6)
  # Different seeds are different runs.
  assert not np.array_equal(np.asarray(together.replay.obs[0]), np.asarray(together.replay.obs[1]))


def test_grid_parsing_and_bad_values_name_the_field(tmp_path):
  assert sweep.parse_grid(["search.num_simulations=8, 32", "train.lr_boundaries=[10,20],[30,40]"]) == {
      "search.num_simulations": ["8", "32"], "train.lr_boundaries": ["10,20", "30,40"]}
  base = azjax.preset("tictactoe", "smoke")
  combos = sweep.combinations(base, sweep.parse_grid(["search.num_simulations=2,4", "network.blocks=1,2"]))
  assert [c[1] for c in combos] == [{"search.num_simulations": "2", "network.blocks": "1"},
                                    {"search.num_simulations": "2", "network.blocks": "2"},
                                    {"search.num_simulations": "4", "network.blocks": "1"},
                                    {"search.num_simulations": "4", "network.blocks": "2"}]
  assert combos[3][2].network.blocks == 2 and combos[3][2].search.num_simulations == 4
  with pytest.raises(azjax.ConfigError, match="search.num_simulations"):
    sweep.combinations(base, sweep.parse_grid(["search.num_simulations=4,x"]))
  with pytest.raises(azjax.ConfigError, match="expected --grid"):
    sweep.parse_grid(["search.num_simulations"])
  with pytest.raises(azjax.ConfigError, match="run.eval_engine_games.*0 in a sweep"):  # anchors alone in a sweep
    sweep.run_sweep(tmp_path / "s", "go9", "smoke", ["run.eval_engine_games=2"], [], [0])
  assert not (tmp_path / "s").exists()
  # Resumed with another --seeds-per-program, a sweep would train seeds 0-1 again in one more unit and count
  # them twice: refused before anything runs.
  (tmp_path / "p" / "base" / "seeds-0-1").mkdir(parents=True)
  with pytest.raises(azjax.CheckpointError, match=r"holds seeds-0-1, which --seeds-per-program 0 does not make"):
    sweep.run_sweep(tmp_path / "p", "tictactoe", "smoke", [], [], [0, 1, 2, 3], seeds_per_program=0)
  assert sorted(p.name for p in (tmp_path / "p" / "base").iterdir()) == ["seeds-0-1"]
  # A seed field would be recorded in each unit's config.json and not used (a run's seed is its place in --seeds);
  # a field in both --set and --grid would silently take the grid's values. Both refused before anything runs.
  for fixed, grid, field in [(["seed=5"], [], "seed"), ([], ["seed=0,5"], "seed"), ([], ["game=connect_four"], "game"),
                             (["network.blocks=2"], ["network.blocks=1,3"], "network.blocks")]:
    with pytest.raises(azjax.ConfigError, match=field) as e:
      sweep.run_sweep(tmp_path / "q", "tictactoe", "smoke", fixed, grid, [0])
    assert e.value.field == field
  assert not (tmp_path / "q").exists()


def test_the_summary_table_shows_every_combinations_columns():
  row = lambda name, **m: {"combination": name, "step": 4, "seeds": 2,
                           **{k: v for key, x in m.items() for k, v in ((key, x), (key + "_lo", x), (key + "_hi", x))}}
  table = sweep.markdown_table([row("a", elo=10.0), row("b", elo=20.0, score_vs_mcts16=0.5)])
  assert "score_vs_mcts16 (95% CI)" in table.splitlines()[0]
  assert "| b | 4 | 2 | 20 (20 to 20) | 0.5 (0.5 to 0.5) |" in table


def test_cli_rejects_an_unknown_field_before_running(tmp_path, capfd):
  code, _, err = run_module(capfd, "experiments.sweep", "--game", "tictactoe", "--preset", "smoke", "--grid",
                            "search.nope=1,2", "--out", str(tmp_path / "s"))
  assert code == 2 and "search.nope" in err and "Traceback" not in err
  assert not (tmp_path / "s" / "sweep.json").exists()


def test_mean_interval_is_the_t_interval():
  m, lo, hi = sweep.mean_interval([1.0, 2.0, 3.0, 4.0])
  # mean 2.5, sd 1.2910, t(0.975, 3) = 3.1824: half-width 2.0543
  assert m == 2.5 and lo == pytest.approx(2.5 - 2.0543, abs=1e-3) and hi == pytest.approx(2.5 + 2.0543, abs=1e-3)


ARGS = dict(game="tictactoe", preset_name="smoke", grid_items=["search.num_simulations=4,2"], seeds=[0, 1],
            fixed=["train.num_steps=4", "run.eval_every=2", "run.checkpoint_every=2", "run.log_every=1"])


def _rows(path):
  with open(path) as f:
    return list(csv.DictReader(f))


def test_sweep_writes_tidy_results_and_resumes_after_a_crash(tmp_path, monkeypatch):
  whole = sweep.run_sweep(tmp_path / "whole", **ARGS, progress=False)
  rows = _rows(whole / "results.csv")
  assert [(r["combination"], r["seed"], r["step"]) for r in rows] == [
      (c, s, st) for c in ("search.num_simulations=4", "search.num_simulations=2") for st in ("2", "4")
      for s in ("0", "1")]
  table = _rows(whole / "summary.csv")
  assert [(t["combination"], t["step"], t["seeds"]) for t in table] == [  # the grid's order
      ("search.num_simulations=4", "4", "2"), ("search.num_simulations=2", "4", "2")]
  for t in table:
    assert float(t["score_vs_random_lo"]) <= float(t["score_vs_random"]) <= float(t["score_vs_random_hi"])
  for png in ("elo.png", "score_vs_random.png"):
    assert (whole / png).stat().st_size > 1000
  assert "| search.num_simulations=4 | 4 | 2 |" in (whole / "summary.md").read_text()
  # A unit's checkpoint holds one network per seed: load_agent picks one by name, and asks for it otherwise.
  unit = whole / "search.num_simulations=4" / "seeds-0-1"
  first, second = azjax.load_agent(unit, seed=0), azjax.load_agent(unit, seed=1)
  assert (first.step, second.step, first.config.seed, second.config.seed) == (4, 4, 0, 1)
  assert not np.array_equal(jax.tree.leaves(first.params)[0], jax.tree.leaves(second.params)[0])
  with pytest.raises(azjax.CheckpointError, match=r"seeds \[0, 1\]: name one"):
    azjax.load_agent(unit)

  # A crash just after the second unit's step-2 checkpoint: the rerun skips the finished unit
  # and continues the other from step 2, ending exactly where the uninterrupted sweep did.
  real_save, saves = ckpt.save, []

  def crashing_save(mngr, state, config, **extra):
    step = real_save(mngr, state, config, **extra)
    saves.append((config.search.num_simulations, step))
    if saves[-1] == (2, 2):
      raise KeyboardInterrupt
    return step

  monkeypatch.setattr(ckpt, "save", crashing_save)
  with pytest.raises(KeyboardInterrupt):
    sweep.run_sweep(tmp_path / "crashed", **ARGS, progress=False)
  saves.clear()
  sweep.run_sweep(tmp_path / "crashed", **ARGS, progress=False)
  assert saves == [(2, 4)]  # nothing re-ran but steps 3 and 4 of the interrupted unit
  assert _rows(tmp_path / "crashed" / "results.csv") == rows
  with pytest.raises(azjax.CheckpointError, match="another sweep"):
    sweep.run_sweep(tmp_path / "crashed", **dict(ARGS, seeds=[0, 1, 2]), progress=False)
  assert json.loads((tmp_path / "crashed" / "sweep.json").read_text())["seeds"] == [0, 1]


def test_an_ablations_extra_arguments_replace_the_recipes_own_setting_of_a_field():
  from experiments import ablations, sweep as sweep_cli
  args = sweep_cli.parser().parse_args(ablations.sweep_args("network", ["--set", "network.blocks=1", "--grid",
                                                                        "network.channels=8,16"]))
  assert args.grid == ["network.channels=8,16"] and args.overrides == ["network.blocks=1"]
  args = sweep_cli.parser().parse_args(ablations.sweep_args("search", ["--set=search.num_simulations=4"]))
  assert args.grid == ["search.algorithm=puct,gumbel"] and args.overrides == ["search.num_simulations=4"]


def test_every_ablation_recipe_is_a_valid_sweep():
  from experiments import ablations, sweep as sweep_cli
  for name, recipe in ablations.RECIPES.items():
    args = sweep_cli.parser().parse_args(ablations.sweep_args(name, ["--seeds", "2"]))
    base = azjax.apply_overrides(azjax.preset(args.game, args.preset), args.overrides)
    combos = sweep.combinations(base, sweep.parse_grid(args.grid))
    assert len(combos) == np.prod([len(v) for v in sweep.parse_grid(recipe.grid).values()]) >= 2, name
    assert len({c[2] for c in combos}) == len(combos), f"{name}: combinations must differ"
    for _, _, config in combos:
      azjax.validate(config, 1)


def test_the_replay_recipe_holds_the_learning_rate_constant_across_its_update_counts():
  """Drops count updates: under the preset's schedule, 32 updates a step would drop the rate 16 times sooner than
  2, and the recipe would compare schedules, not replay ratios."""
  from experiments import ablations, sweep as sweep_cli
  args = sweep_cli.parser().parse_args(ablations.sweep_args("replay", []))
  assert azjax.preset(args.game, args.preset).train.lr_boundaries  # the preset itself drops its rate
  base = azjax.apply_overrides(azjax.preset(args.game, args.preset), args.overrides)
  configs = [c for _, _, c in sweep.combinations(base, sweep.parse_grid(args.grid))]
  assert {c.train.updates_per_step for c in configs} == {2, 8, 32}
  assert all(c.train.lr_boundaries == () for c in configs)
