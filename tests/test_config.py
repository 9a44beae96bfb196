import pytest

import azjax
from azjax.config import ConfigError, apply_overrides, validate
from conftest import run_module


def test_presets_resolve_for_every_game():
  for game in azjax.GAMES:
    for name in azjax.PRESETS:
      config = azjax.preset(game, name)
      assert config.game == game


def test_paper_preset_holds_the_paper_numbers():
  c = azjax.preset("chess", "paper")
  assert (c.network.blocks, c.network.channels, c.network.policy_head) == (19, 256, "planes")  # Table S2
  assert azjax.preset("go", "paper").network.policy_head == "flat"
  assert azjax.preset("chess", "small").network.policy_head == "planes"  # small keeps the paper's representation
  assert c.search.algorithm == "puct" and c.search.num_simulations == 800
  assert (c.search.c_init, c.search.c_base, c.search.dirichlet_fraction) == (1.25, 19652.0, 0.25)
  assert c.selfplay.temperature_plies == 30
  assert c.replay.sampling == "window" and azjax.preset("chess", "cpu").replay.sampling == "lanes"  # uniform [AGZ]
  assert (c.train.batch_size, c.train.learning_rate, c.train.momentum, c.train.l2) == (4096, 0.2, 0.9, 1e-4)
  assert c.train.lr_boundaries == (100_000, 300_000, 500_000)
  assert c.train.num_steps * c.train.updates_per_step == 700_000
  for game in ("go", "go9"):  # [AZp]: "Go starts at 2e-2 immediately", then chess's later drops
    go = azjax.preset(game, "paper").train
    assert (go.learning_rate, go.lr_boundaries, go.lr_decay) == (0.02, (300_000, 500_000), 0.1)
  assert azjax.preset("shogi", "paper").train.learning_rate == 0.2


def test_overrides_parse_types():
  c = apply_overrides(azjax.preset("tictactoe", "smoke"),
                      ["search.num_simulations=7", "train.learning_rate=0.5", "train.lr_boundaries=10,20",
                       "search.algorithm=gumbel", "seed=3"])
  assert c.search.num_simulations == 7 and c.train.learning_rate == 0.5
  assert c.train.lr_boundaries == (10, 20) and c.search.algorithm == "gumbel" and c.seed == 3
  for t in (0.0, 1.0):  # the ends of the endgame temperature's range are allowed
    assert apply_overrides(c, [f"selfplay.endgame_temperature={t}"]).selfplay.endgame_temperature == t


@pytest.mark.parametrize("override, field", [
    ("search.nope=1", "search.nope"),
    ("nosection.x=1", "nosection.x"),
    ("search.num_simulations=abc", "search.num_simulations"),
    ("search.algorithm=alphabeta", "search.algorithm"),
    ("train.optimizer=rmsprop", "train.optimizer"),
    ("replay.window=8", "replay.window"),  # smaller than a batch
    ("train.batch_size=20", "train.batch_size"),  # not a multiple of the self-play batch
    ("game=checkers", "game"),
    ("search.dirichlet_fraction=2", "search.dirichlet_fraction"),
    ("train.lr_boundaries=5,3", "train.lr_boundaries"),
    ("train.lr_boundaries=-1,5", "train.lr_boundaries"),
    ("search.c_base=0", "search.c_base"),
    ("train.momentum=1", "train.momentum"),
    ("search.go_pass=eyes", "search.go_pass"),  # Go only
    ("selfplay.full_search_fraction=0", "selfplay.full_search_fraction"),
    ("selfplay.resign_turns=0", "selfplay.resign_turns"),
    ("selfplay.full_search_fraction=0.5", "selfplay.fast_simulations"),  # no fast search given
    ("network.ownership=1.5", "network.ownership"),  # Go only
    ("network.opponent_policy=-0.15", "network.opponent_policy"),
    ("network.future_position=0.25", "network.future_position"),  # chess and Go only
    ("network.material_change=0.5", "network.material_change"),  # chess only
    ("search.go_fill_eyes=false", "search.go_fill_eyes"),  # Go only
    ("search.go_eyes=true", "search.go_eyes"),  # Go only
    ("network.liberties=true", "network.liberties"),  # Go only
    ("network.attacks=true", "network.attacks"),  # chess only
    ("network.policy_head=planes", "network.policy_head"),  # chess only
    ("selfplay.adjudicate_material=3", "selfplay.adjudicate_material"),  # chess only
    ("selfplay.adjudicate_material=-3", "selfplay.adjudicate_material"),
    ("selfplay.adjudicate_score=soft", "selfplay.adjudicate_score"),
    ("selfplay.adjudicate_score=logistic", "selfplay.adjudicate_score"),  # adjudication is off
    ("search.twofold_draw=true", "search.twofold_draw"),  # chess only
    ("network.history=1", "network.history"),  # chess and Go only: tic-tac-toe's observation has no history
    ("network.history=0", "network.history"),
    ("network.policy_head=conv", "network.policy_head"),
    ("run.eval_engine_games=2", "run.eval_engine_games"),  # no engine plays tic-tac-toe
    ("run.eval_engine_games=-1", "run.eval_engine_games"),
    ("train.augment=true", "train.augment"),  # Go only
    ("search.discount=0", "search.discount"),
    ("selfplay.endgame_temperature=-0.5", "selfplay.endgame_temperature"),
    ("selfplay.endgame_temperature=1.5", "selfplay.endgame_temperature"),
    ("search.moves_left_slope=0.0027", "search.moves_left_slope"),  # no moves-left head to read
    ("search.moves_left_threshold=1", "search.moves_left_threshold"),
    ("search.discount=1.5", "search.discount"),
    ("search.draw_value=-1", "search.draw_value"),
    ("search.gumbel_value_scale=0", "search.gumbel_value_scale"),
    ("search.gumbel_maxvisit_init=-1", "search.gumbel_maxvisit_init"),
    ("train.q_lambda=0.8", "train.q_lambda"),  # tic-tac-toe's smoke preset has no q_ratio to average for
    ("train.q_lambda=1", "train.q_lambda"),
    ("search.score_utility=0.3", "search.score_utility"),  # no ownership head to read a margin from
    ("search.score_utility_static=-0.1", "search.score_utility_static"),
    ("train.updates_per_step=0", "train.updates_per_step"),
    ("seed=-1", "seed"),
    ("seed=4294967296", "seed"),  # a PRNG key holds 32 bits: the run would repeat seed 0's
    ("train.learning_rate=inf", "train.learning_rate"),
    ("search.draw_value=nan", "search.draw_value"),
    ("search.gumbel_act=best", "search.gumbel_act"),
    ("search.gumbel_act=halving", "search.gumbel_act"),  # tic-tac-toe's smoke preset searches with PUCT
])
def test_bad_overrides_name_the_field(override, field):
  with pytest.raises(ConfigError) as e:
    apply_overrides(azjax.preset("tictactoe", "smoke"), [override])
  assert e.value.field == field
  assert field in str(e.value)


@pytest.mark.parametrize("history", [0, 9])
def test_a_history_outside_the_observations_eight_positions_names_the_field(history):
  with pytest.raises(ConfigError, match=r"network.history.*\[1, 8\]"):
    apply_overrides(azjax.preset("chess", "smoke"), [f"network.history={history}"])


def test_batch_must_divide_over_devices():
  config = azjax.preset("tictactoe", "smoke")  # 8 games
  validate(config, 4)
  with pytest.raises(ConfigError, match="selfplay.batch_size.*device count 3"):
    validate(config, 3)


@pytest.mark.parametrize("utility", ["search.draw_value=-0.2", "network.ownership=1.5,search.score_utility=0.3"])
def test_a_run_that_learns_the_searchs_q_refuses_the_searchs_utilities_but_play_keeps_them(utility):
  """q_ratio's target is the search's Q, which a draw value or a score utility shifts: refused in training (a
  config with a device count), allowed in a config that only plays (an engine's, from a q_ratio checkpoint)."""
  game = "chess" if "draw" in utility else "go9"
  config = apply_overrides(azjax.preset(game, "smoke"), ["train.q_ratio=0.75", *utility.split(",")])
  field = utility.split(",")[-1].split("=")[0]
  with pytest.raises(ConfigError, match=rf"{field}.*train.q_ratio > 0") as e:
    validate(config, 1)
  assert e.value.field == field
  validate(apply_overrides(config, ["train.q_ratio=0"]), 1)


def test_halving_without_gumbel_noise_is_refused_in_training_and_allowed_at_play():
  """search.gumbel_act=halving plays the only move with weight, so its Gumbel noise is self-play's only sampling:
  a run without it would play one game in every slot. At play (no noise anyway) the setting is free."""
  config = apply_overrides(azjax.preset("go9", "cpu"), ["search.gumbel_act=halving", "search.gumbel_scale=0"])
  with pytest.raises(ConfigError, match=r"search.gumbel_scale.*gumbel_act=halving") as e:
    validate(config, 1)
  assert e.value.field == "search.gumbel_scale"
  validate(apply_overrides(config, ["search.gumbel_scale=1"]), 1)
  validate(apply_overrides(config, ["search.gumbel_act=policy"]), 1)


def test_fast_noise_without_playout_caps_is_refused_by_name():
  """selfplay.fast_noise acts on playout caps' fast search only: with every ply searched in full it would do nothing."""
  config = apply_overrides(azjax.preset("go9", "cpu"), ["selfplay.fast_noise=true"])
  validate(config, 1)
  with pytest.raises(ConfigError, match=r"selfplay.fast_noise.*full_search_fraction < 1") as e:
    validate(apply_overrides(config, ["selfplay.full_search_fraction=1"]), 1)
  assert e.value.field == "selfplay.fast_noise"


def _cli(capfd, *args):
  return run_module(capfd, "experiments.tictactoe", *args)


def test_cli_bad_input_exits_2_with_one_message(capfd):
  for args, text in [(["--set", "search.nope=1"], "search.nope"), (["--preset", "huge"], "preset"),
                     (["--set", "train.batch_size=x"], "train.batch_size")]:
    code, _, err = _cli(capfd, *args)
    assert code == 2, err
    assert text in err and "Traceback" not in err


def test_cli_resume_refuses_another_run_dir_and_says_a_preset_does_not_apply(capfd, tmp_path):
  """A resumed run keeps its own config and directory: --preset and --run-dir beside --resume were ignored."""
  code, _, err = _cli(capfd, "--preset", "smoke", "--run-dir", str(tmp_path / "run"), "--no-progress",
                      "--set", "train.num_steps=2")
  assert code == 0, err
  code, _, err = _cli(capfd, "--resume", str(tmp_path / "run"), "--run-dir", str(tmp_path / "elsewhere"))
  assert code == 2 and "--run-dir" in err and "Traceback" not in err, err
  assert not (tmp_path / "elsewhere").exists()
  code, _, err = _cli(capfd, "--resume", str(tmp_path / "run"), "--run-dir", str(tmp_path / "run"), "--preset",
                      "paper", "--no-progress", "--set", "train.num_steps=3")
  assert code == 0 and "--preset paper does not apply to a resumed run" in err, err


def test_cli_help_lists_every_field_with_defaults(capfd):
  code, out, _ = _cli(capfd, "--help")
  assert code == 0
  for field in ["network.blocks", "search.num_simulations", "search.dirichlet_alpha", "selfplay.temperature_plies",
                "replay.window", "train.lr_boundaries", "run.checkpoint_every", "seed"]:
    assert field in out
  assert "paper" in out and "smoke" in out and "800" in out


def test_a_resumed_run_must_keep_what_shapes_its_saved_state():
  from azjax.checkpoint import CheckpointError
  from azjax.loop import check_compatible
  saved = azjax.preset("tictactoe", "smoke")
  check_compatible(saved, apply_overrides(saved, ["train.learning_rate=0.5", "search.num_simulations=3"]))
  with pytest.raises(CheckpointError, match=r"replay.window \(checkpoint 1024, config 2048\)"):
    check_compatible(saved, apply_overrides(saved, ["replay.window=2048"]))
  # Switches that add a part to the state (the replay's search values, gating's network): on or off must match.
  with pytest.raises(CheckpointError, match="train.q_ratio on or off.*run.gate_games on or off"):
    check_compatible(saved, apply_overrides(saved, ["train.q_ratio=0.5", "run.gate_games=4", "run.eval_every=2"]))
  on = apply_overrides(saved, ["train.q_ratio=0.5"])
  check_compatible(on, apply_overrides(on, ["train.q_ratio=0.25"]))
  # The resignation window's length shapes the actors' state; the seed keys every evaluation and gating match.
  with pytest.raises(CheckpointError, match=r"seed \(checkpoint 0, config 3\); selfplay.resign_turns \(checkpoint 1"):
    check_compatible(saved, apply_overrides(saved, ["selfplay.resign_turns=3", "seed=3"]))
  # A section is compared field by field; the inference precision is how the network runs, not what it holds.
  with pytest.raises(CheckpointError, match=r"^the checkpoint does not fit this config: network.channels "
                                            r"\(checkpoint 8, config 16\)$"):
    check_compatible(saved, apply_overrides(saved, ["network.channels=16", "network.inference_dtype=bfloat16"]))
  check_compatible(saved, apply_overrides(saved, ["network.inference_dtype=bfloat16"]))


def test_a_run_too_short_for_its_learning_rate_drop_is_told_so():
  """The go9 cpu preset drops its rate at update 12,800 of 5300 steps x 4 updates; a run shortened to 2650 steps
  never gets there, and the run's start says which field to set, while the full run says nothing."""
  from azjax.loop import unreached_drops
  config = azjax.preset("go9", "cpu")
  assert config.train.lr_boundaries == (12800,) and not unreached_drops(config)
  notes = unreached_drops(apply_overrides(config, ["train.num_steps=2650"]))
  assert len(notes) == 1 and "update 12800" in notes[0] and "at most 10600 updates" in notes[0], notes
  assert not unreached_drops(apply_overrides(config, ["train.num_steps=2650", "train.lr_boundaries=6400"]))


def test_kataGo_recording_is_refused_with_targets_that_count_plies():
  """selfplay.record_fast=false leaves the fast plies out of replay, so a target that counts the plies between
  positions (shogi's preset discounts its value per ply) is refused by name; chess's preset takes it."""
  with pytest.raises(ConfigError) as e:
    apply_overrides(azjax.preset("shogi", "cpu"), ["selfplay.record_fast=false"])
  assert e.value.field == "selfplay.record_fast" and "search.discount" in str(e.value)
  chess = apply_overrides(azjax.preset("chess", "cpu"), ["selfplay.record_fast=false"])
  assert not chess.selfplay.record_fast and azjax.preset("chess", "cpu").selfplay.record_fast
  with pytest.raises(ConfigError, match="network.future_position"):  # its boards lie plies, not records, apart
    apply_overrides(azjax.preset("chess", "cpu"), ["selfplay.record_fast=false", "network.future_position=0.25"])
  with pytest.raises(ConfigError, match="network.material_change"):  # its leads lie plies apart, too
    apply_overrides(azjax.preset("chess", "cpu"), ["selfplay.record_fast=false", "network.material_change=0.5"])
  assert apply_overrides(azjax.preset("chess", "cpu"), ["network.material_change=0.5"]).network.material_change == 0.5
  with pytest.raises(ConfigError, match="network.material_change"):  # a weight, >= 0, in chess too
    apply_overrides(azjax.preset("chess", "cpu"), ["network.material_change=-0.5"])


def test_a_saved_config_that_predates_a_changed_default_keeps_the_value_it_ran_with():
  """search.play_unvisited became False (Gumbel MuZero's rule) after runs were saved without the field, which drew
  from every move: such a run resumes, and its checkpoints play, as they did; a saved value is kept as it is."""
  from azjax.checkpoint_files import config_from_meta
  saved = azjax.preset("chess", "cpu").to_dict()
  del saved["search"]["play_unvisited"]
  assert config_from_meta({"config": saved}).search.play_unvisited is True
  saved["search"]["play_unvisited"] = False
  assert config_from_meta({"config": saved}).search.play_unvisited is False
  assert "play_unvisited" in saved["search"]  # the caller's dict untouched
  del saved["search"]["play_unvisited"]
  config_from_meta({"config": saved})
  assert "play_unvisited" not in saved["search"]
