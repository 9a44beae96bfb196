import collections
import dataclasses
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import replay as replay_lib, rules, selfplay
from azjax.config import NetworkConfig, SearchConfig, SelfPlayConfig
from azjax.games import make_env
from azjax.network import make_network
from azjax.search import make_search
from conftest import batched_init, batched_step


def test_temperature_schedule():
  weights = jnp.array([0.1, 0.6, 0.3])
  keys = jax.random.split(jax.random.PRNGKey(0), 3000)
  early = jax.vmap(selfplay.select_action, in_axes=(0, None, None, None))(keys, weights, 29, 30)
  np.testing.assert_allclose(np.bincount(early, minlength=3) / 3000, weights, atol=0.03)
  late = jax.vmap(selfplay.select_action, in_axes=(0, None, None, None))(keys, weights, 30, 30)
  assert np.all(late == 1)
  never = jax.vmap(selfplay.select_action, in_axes=(0, None, None, None))(keys, jnp.array([0.5, 0.0, 0.5]), 0, 30)
  assert not np.any(never == 1)
  # Lc0's endgame temperature: from ply 30 on, moves drawn by weights^(1 / 0.5), normalised; an illegal one never.
  cooled = jax.vmap(selfplay.select_action, in_axes=(0, None, None, None, None))(keys, weights, 30, 30, 0.5)
  np.testing.assert_allclose(np.bincount(cooled, minlength=3) / 3000, weights ** 2 / np.sum(weights ** 2), atol=0.03)
  cooled = jax.vmap(selfplay.select_action, in_axes=(0, None, None, None, None))(
      keys, jnp.array([0.5, 0.0, 0.5]), 40, 30, 0.45)
  assert not np.any(cooled == 1) and 0.4 < np.mean(cooled == 0) < 0.6


def test_root_moves_draw_over_the_children_with_the_searchs_law():
  """A compact tree's move is drawn over its K children and mapped to its move: the law of the draw over all A
  (weights; at temperature 0 the greedy move, the highest of the rank, which under PUCT breaks equal visits by Q
  and need not be the highest weight); a full tree's children are all A moves, drawn as before."""
  from azjax.search import SearchOutput, children
  games, actions = 3000, 4672
  weights = jnp.zeros(actions).at[jnp.array([10, 500, 4000])].set(jnp.array([0.2, 0.3, 0.5]))
  legal = jnp.zeros(actions, bool).at[jnp.array([3, 10, 500, 4000])].set(True)  # a legal move with no visits
  rank = jnp.zeros(actions).at[jnp.array([10, 500, 4000])].set(jnp.array([1.0, 2.5, 2.0]))
  out = lambda acts: SearchOutput(weights=None, move_weights=jnp.broadcast_to(weights, (games, actions)),
                                  move_rank=jnp.broadcast_to(rank, (games, actions)), value=None,
                                  prior_value=None, best_value=None, prior_logits=None, legal=None, tree=None,
                                  actions=acts)
  compact = out(jnp.broadcast_to(children(legal[None], 218), (games, 218)))
  keys = jax.random.split(jax.random.PRNGKey(0), games)
  config = SelfPlayConfig(temperature_plies=30)
  early = np.asarray(selfplay.root_moves(keys, compact, jnp.full(games, 29), config))
  np.testing.assert_allclose(np.bincount(early, minlength=actions)[[10, 500, 4000]] / games, [0.2, 0.3, 0.5], atol=0.03)
  assert np.isin(early, [10, 500, 4000]).all()
  assert (np.asarray(selfplay.root_moves(keys, compact, jnp.full(games, 30), config)) == 500).all()  # the rank's
  full = out(jnp.broadcast_to(jnp.arange(actions), (games, actions)))
  assert (np.asarray(selfplay.root_moves(keys, full, jnp.full(games, 30), config)) == 500).all()
  np.testing.assert_array_equal(np.asarray(selfplay.root_moves(keys, full, jnp.full(games, 29), config)),
                                np.asarray(jax.vmap(selfplay.select_action, in_axes=(0, None, None, None))(
                                    keys, weights, 29, 30)))


def _setup(max_plies=0, games=6, lane=64):
  env = make_env("tictactoe")
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  search = make_search(env, net, SearchConfig(num_simulations=4), "tictactoe")
  actors = selfplay.init_actors(env, jax.random.PRNGKey(0), jnp.arange(games, dtype=jnp.int32))
  variables = net.init(jax.random.PRNGKey(1), actors.env.observation)
  replay = replay_lib.init(games, lane, jax.ShapeDtypeStruct((3, 3, 2), bool), env.num_actions)
  return env, search, variables, actors, replay


def test_self_play_plays_its_endgame_temperature():
  """With temperature_plies=0 every ply is past the cutoff: at T = 1 some games take other moves than at T = 0,
  from the same positions, searches and keys (a dropped setting would leave both greedy)."""
  env, search, variables, actors, replay = _setup()
  boards = []
  for t in (0.0, 1.0):
    config = SelfPlayConfig(chunk_plies=3, temperature_plies=0, endgame_temperature=t)
    played, _, _ = selfplay.play_chunk(env, search, config, variables, actors, replay, jax.random.PRNGKey(3))
    boards.append(np.asarray(played.env.observation))
  assert not np.array_equal(*boards)


def test_value_targets_match_each_games_outcome_across_chunks(strict_rank_promotion):
  """Chunks of 3 plies (games last 5-9): every labelled position holds its own game's outcome for its mover."""
  env, search, variables, actors, replay = _setup()
  config = SelfPlayConfig(chunk_plies=3, temperature_plies=30)
  chunk = jax.jit(lambda a, r, k: selfplay.play_chunk(env, search, config, variables, a, r, k))
  ply = jax.jit(lambda a, r, k: selfplay.play_ply(env, search, config, variables, a, r, k))
  ref_actors, ref_replay = actors, replay
  expected = collections.defaultdict(list)  # lane -> expected z of each position written, in order
  current = collections.defaultdict(list)  # lane -> movers of the game in play
  games = 0
  for c in range(8):
    key = jax.random.PRNGKey(100 + c)
    actors, replay, record = chunk(actors, replay, key)
    for ply_key in jax.random.split(key, config.chunk_plies):  # the same plies, one at a time, observed on the host
      movers = np.asarray(ref_actors.env.current_player)
      ref_actors, ref_replay, outcome, _ = ply(ref_actors, ref_replay, ply_key)
      done, rewards = np.asarray(outcome.done), np.asarray(outcome.rewards)  # pgx's own scores
      for lane in range(6):
        current[lane].append(movers[lane])
        if done[lane]:
          expected[lane] += [rewards[lane, m] for m in current[lane]]
          current[lane] = []
    games += int(selfplay.chunk_metrics(*record)["games"])
  assert games > 6  # several games per lane, many spanning chunk edges
  jax.tree.map(np.testing.assert_array_equal, replay, ref_replay)
  values, sizes = np.asarray(replay.value), np.asarray(replay_lib.size(replay))
  outcomes = set()
  for lane in range(6):
    assert sizes[lane] == len(expected[lane])
    np.testing.assert_array_equal(values[lane, :sizes[lane]], expected[lane])
    assert int(replay.written[lane]) == sizes[lane] + len(current[lane])  # the unfinished game waits, unlabelled
    outcomes |= set(expected[lane])
  assert {-1.0, 1.0} <= outcomes  # wins seen from both sides (and any draws score 0)


def test_truncation_at_the_length_cap_is_a_draw():
  env, search, variables, actors, replay = _setup()
  config = SelfPlayConfig(chunk_plies=12, temperature_plies=30, max_plies=4)  # no tic-tac-toe game ends in 4 plies
  actors, replay, record = selfplay.play_chunk(env, search, config, variables, actors, replay, jax.random.PRNGKey(5))
  metrics = selfplay.chunk_metrics(*record)
  assert int(metrics["games"]) == 3 * 6 and float(metrics["mean_game_length"]) == 4
  assert float(metrics["end_cap"]) == 1.0 and float(metrics["draw_rate"]) == 1.0
  assert np.all(np.asarray(replay_lib.size(replay)) == 12)
  np.testing.assert_array_equal(replay.value[:, :12], 0.0)


def test_chunk_metrics_count_games_endings_and_a_saturated_value_head():
  """Two plies of two games: game 0 ends by double pass at ply 12, game 1 by a win for its first mover at 40."""
  T, B = 2, 2
  moves = selfplay.Move(ply=jnp.array([[11, 39], [0, 40]]), is_pass=jnp.array([[True, False], [False, False]]),
                        fills_eye=jnp.array([[False, True], [False, False]]), entropy=jnp.ones((T, B)), kl=jnp.full((T, B), 0.5),
                        prior_value=jnp.array([[-1.0, -1.0], [0.2, -0.5]]), full=jnp.ones((T, B), bool))
  outcomes = selfplay.Outcome(done=jnp.array([[True, False], [False, True]]), plies=jnp.array([[12, 40], [1, 41]]),
                              rewards=jnp.array([[[-1.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [1.0, -1.0]]]),
                              first=jnp.zeros((T, B), jnp.int32), ending=jnp.array([[3, 0], [0, 0]]),
                              value_sse=jnp.array([[6.0, 99.0], [99.0, 20.5]]))
  m = {k: float(v) for k, v in selfplay.chunk_metrics(moves, outcomes).items()}
  assert m["games"] == 2 and m["mean_game_length"] == (12 + 41) / 2 and m["game_length_p50"] == (12 + 41) / 2
  assert m["end_double_pass"] == 0.5 and m["end_win"] == 0.5 and m["early_pass_end"] == 0.5
  assert m["first_player_win"] == 0.5 and m["second_player_win"] == 0.5 and m["draw_rate"] == 0
  assert m["value_saturated"] == 0.5 and m["value_saturated_second"] == 1.0 and m["value_saturated_first"] == 0.0
  assert m["pass_rate_0_30"] == 0.5 and m["pass_rate_30_60"] == 0.0 and m["search_kl"] == 0.5
  assert m["value_mse"] == (6.0 + 20.5) / (12 + 41)  # over the moves of the finished games only
  assert m["eye_fill_rate"] == 0.25


def test_a_move_into_the_movers_own_eye_is_counted_as_an_eye_fill():
  env = make_env("go9")
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 2))
  for a in (1, 80, 9, 79, 10, 78):  # black around the corner point 0, its eye; black to move
    state = batched_step(env)(state, jnp.array([a, a]))
  out = types.SimpleNamespace(prior_logits=jnp.zeros((2, 82)), legal=state.legal_action_mask,
                              weights=jnp.full((2, 82), 1 / 82), prior_value=jnp.zeros(2))
  stats = lambda out, action, ply, game, state: jax.jit(  # jitted: eager, Go's eye rule compiles op by op
      lambda s: selfplay._move_stats(out, action, ply, game, True, s))(state)
  move = stats(out, jnp.array([0, 40]), jnp.array([6, 6]), "go9", state)
  assert move.fills_eye.tolist() == [True, False] and move.is_pass.tolist() == [False, False]
  chess = batched_init(make_env("chess"))(jax.random.split(jax.random.PRNGKey(0), 2))
  out = types.SimpleNamespace(prior_logits=jnp.zeros((2, 4672)), legal=chess.legal_action_mask,
                              weights=jnp.full((2, 4672), 1 / 4672), prior_value=jnp.zeros(2))
  assert not stats(out, jnp.array([0, 1]), jnp.array([0, 0]), "chess", chess).fills_eye.any()


def test_played_out_length_leaves_out_resigned_games():
  """Three games end in one ply: at 20 by resignation, at 70 and 90 by the rules. All three make the median
  length 70; the played-out median, which a collapse moves and resignation does not, is 80."""
  B = 3
  moves = selfplay.Move(ply=jnp.array([[19, 69, 89]]), is_pass=jnp.zeros((1, B), bool),
                        fills_eye=jnp.zeros((1, B), bool), entropy=jnp.ones((1, B)),
                        kl=jnp.ones((1, B)), prior_value=jnp.zeros((1, B)), full=jnp.ones((1, B), bool))
  resignation = rules.ENDINGS.index("resignation")
  outcomes = selfplay.Outcome(done=jnp.ones((1, B), bool), plies=jnp.array([[20, 70, 90]]),
                              rewards=jnp.zeros((1, B, 2)), first=jnp.zeros((1, B), jnp.int32),
                              ending=jnp.array([[resignation, 0, 3]]), value_sse=jnp.zeros((1, B)))
  m = {k: float(v) for k, v in selfplay.chunk_metrics(moves, outcomes).items()}
  assert m["game_length_p50"] == 70 and m["played_out_length_p50"] == 80
  assert m["end_resignation"] == pytest.approx(1 / 3)
  only_resigned = dataclasses.replace(outcomes, ending=jnp.full((1, B), resignation))
  assert float(selfplay.chunk_metrics(moves, only_resigned)["played_out_length_p50"]) == 0.0


@pytest.mark.parametrize("discount", [1.0, 0.9])
def test_value_mse_is_the_root_values_error_against_each_movers_outcome(discount):
  # Tic-tac-toe self-play: the logged figure equals the one recomputed from every ply's root value, against
  # the target replay labels it with (the outcome, discounted by search.discount per ply before the last move).
  import azjax
  from azjax import train_step as train_lib
  config = azjax.apply_overrides(azjax.preset("tictactoe", "smoke"), ["selfplay.chunk_plies=12",
                                                                       f"search.discount={discount}"])
  program = train_lib.build(config)
  actors = selfplay.init_actors(program.env, jax.random.PRNGKey(0), jnp.arange(8, dtype=jnp.int32))
  params, bn_state = program.network.init(jax.random.PRNGKey(1), actors.env.observation[:1])
  replay = train_lib._init(program, jax.random.PRNGKey(2)).replay
  values, finished = [[] for _ in range(8)], 0
  search = jax.jit(program.search)
  ply = jax.jit(lambda a, r, k: selfplay.play_ply(program.env, program.search, config.selfplay, (params, bn_state),
                                                  a, r, k, target=replay_lib.ValueTarget(discount=discount)))
  for key in jax.random.split(jax.random.PRNGKey(3), 12):
    mover = np.asarray(actors.env.current_player)
    search_keys = jax.vmap(lambda k: jax.random.split(k, 3))(selfplay.per_game_keys(key, actors.slot))[:, 0]
    out = search((params, bn_state), search_keys, actors.env)  # the search play_ply makes
    actors, replay, outcome, _ = ply(actors, replay, key)
    for g in range(8):
      values[g].append((mover[g], float(out.value[g])))
      if outcome.done[g]:
        z = np.asarray(outcome.rewards[g])
        finished += 1
        n = len(values[g])
        assert float(outcome.value_sse[g]) == pytest.approx(
            sum((v - z[p] * discount ** (n - 1 - i)) ** 2 for i, (p, v) in enumerate(values[g])), rel=1e-5)
        values[g] = []
  assert finished > 0


def _capped_tictactoe(games: int, search_config: SearchConfig = SearchConfig(num_simulations=8)):
  """Tic-tac-toe with playout caps' two searches (`search_config` full, its 2-simulation twin fast), `games` games
  and a replay."""
  env = make_env("tictactoe")
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  search = make_search(env, net, search_config, "tictactoe")
  fast = make_search(env, net, dataclasses.replace(search_config, num_simulations=2), "tictactoe")
  actors = selfplay.init_actors(env, jax.random.PRNGKey(0), jnp.arange(games, dtype=jnp.int32))
  variables = net.init(jax.random.PRNGKey(1), actors.env.observation)
  replay = replay_lib.init(games, 64, jax.ShapeDtypeStruct((3, 3, 2), bool), env.num_actions)
  return env, search, fast, actors, variables, replay


def test_playout_cap_randomisation_searches_some_plies_small_and_keeps_their_policy_out():
  """KataGo's playout caps: a ply is searched in full with probability p, else by the fast search without
  noise; a fast ply's positions enter replay with no policy target (all zeros), a full ply's with its policy."""
  config = SelfPlayConfig(chunk_plies=1, temperature_plies=30, full_search_fraction=0.25, fast_simulations=2)
  env, search, fast, actors, variables, replay = _capped_tictactoe(games=4)
  keys = jax.random.split(jax.random.PRNGKey(2), 4)
  capped = jax.jit(lambda full: selfplay.capped_search(search, fast, variables, keys, actors.env, full))
  expected = {True: jax.jit(search)(variables, keys, actors.env).weights,
              False: jax.jit(lambda: fast(variables, keys, actors.env, noise=False))().weights}
  for full in (True, False):  # the full search (8 simulations, noise) or the fast one (2, none), as the coin says
    np.testing.assert_allclose(capped(full).weights, expected[full], atol=1e-6)
  coins = np.concatenate([selfplay.playout_coins(dataclasses.replace(config, chunk_plies=8), step) for step in range(25)])
  assert 0.25 - 0.1 < np.mean(coins) < 0.25 + 0.1 and len(set(coins)) == 2  # 200 draws at p = 0.25

  ply = jax.jit(lambda a, r, k, full: selfplay.play_ply(env, search, config, variables, a, r, k, fast_search=fast,
                                                        full=full))
  for i, full in enumerate([True, False, False, True, False, True]):
    actors, replay, _, move = ply(actors, replay, jax.random.PRNGKey(1000 + i), full)
    assert np.all(np.asarray(move.full) == full)
    written = np.asarray(replay.policy[:, i].sum(-1))
    np.testing.assert_allclose(written, 1.0 if full else 0.0, atol=1e-6)


@pytest.mark.parametrize("fast_noise", [False, True])
def test_under_halving_a_fast_ply_samples_its_move_only_with_fast_noise(fast_noise):
  """Under search.gumbel_act=halving the Gumbel noise is the move's only sample: a fast search without noise (KataGo's
  cheap searches, the presets') plays the same move in every game at the same position; with selfplay.fast_noise
  the games part as Gumbel MuZero's do."""
  halving = SearchConfig(algorithm="gumbel", num_simulations=8, max_considered_actions=4, gumbel_act="halving")
  env, search, fast, actors, variables, replay = _capped_tictactoe(games=32, search_config=halving)
  config = SelfPlayConfig(chunk_plies=1, temperature_plies=30, full_search_fraction=0.25, fast_simulations=2,
                          fast_noise=fast_noise)
  after, _, _, move = jax.jit(lambda: selfplay.play_ply(env, search, config, variables, actors, replay,
                                                        jax.random.PRNGKey(2), fast_search=fast, full=False))()
  assert not np.asarray(move.full).any()
  boards = {np.asarray(obs).tobytes() for obs in after.env.observation}  # the first move of each game
  assert (len(boards) > 1) == fast_noise, len(boards)


def test_kataGo_records_only_the_full_search_plies_and_labels_them_with_the_outcome():
  """selfplay.record_fast=False (KataGo, Wu 2019 section 3.1: "Only turns with a full search are recorded"): a
  fast ply is played, its position never enters replay, and the game's full plies are labelled with its outcome
  from their movers' view when it ends, as if the fast plies had not been there."""
  config = SelfPlayConfig(chunk_plies=1, temperature_plies=30, full_search_fraction=0.5, fast_simulations=2,
                          record_fast=False)
  env, search, fast, actors, variables, replay = _capped_tictactoe(games=1)
  ply = jax.jit(lambda a, r, k, full: selfplay.play_ply(env, search, config, variables, a, r, k, fast_search=fast,
                                                        full=full))
  coins, movers, observations = [True, False, False, True, False, True, True, False, True], [], []
  for i, full in enumerate(coins):
    obs, mover = np.asarray(actors.env.observation[0]), int(actors.env.current_player[0])
    actors, replay, outcome, _ = ply(actors, replay, jax.random.PRNGKey(1000 + i), full)
    if full:
      movers.append(mover)
      observations.append(obs)
    assert int(replay.written[0]) == len(movers)
    if bool(outcome.done[0]):
      break
  assert bool(outcome.done[0]), "tic-tac-toe ends within 9 plies"
  n = len(movers)
  np.testing.assert_array_equal(np.asarray(replay.obs[0, :n]), np.stack(observations))
  np.testing.assert_allclose(np.asarray(replay.policy[0, :n]).sum(-1), 1.0, atol=1e-6)  # full plies: a policy
  z = np.asarray(outcome.rewards[0])
  np.testing.assert_array_equal(np.asarray(replay.value[0, :n]), [z[m] for m in movers])
  assert int(replay_lib.size(replay)[0]) == n


def test_a_sweeps_seeds_share_the_playout_coins_and_run_one_search_per_ply():
  """The coins come from the step, not the seed: every seed of a vmapped sweep plays the same plies in full
  (as a single run with either seed would), so the seeds' program keeps the `cond` between the two searches
  rather than a select that runs both (one more conditional in the program than without playout caps)."""
  import azjax
  from azjax import train_step as train_lib
  overrides = ["selfplay.full_search_fraction=0.5", "selfplay.fast_simulations=2", "selfplay.chunk_plies=8"]
  config = azjax.apply_overrides(azjax.preset("tictactoe", "smoke"), overrides)
  mesh = azjax.make_mesh()
  step = train_lib.make_train_step(azjax.build(config), mesh, seeds=2)
  state, metrics = step(train_lib.init_state(azjax.build(config), mesh, seeds=[3, 4]))
  rate = np.asarray(metrics["full_search_rate"])
  assert rate[0] == rate[1] and 0 < rate[0] < 1, rate

  def conditionals(config):
    program = azjax.build(config)
    text = train_lib.make_train_step(program, mesh, seeds=2).lower(train_lib.abstract_state(program, 2)).as_text()
    return text.count("stablehlo.case")

  assert conditionals(config) > conditionals(azjax.apply_overrides(config, ["selfplay.full_search_fraction=1.0"]))


def test_resign_threshold_keeps_false_positives_under_the_target():
  """v_resign is the highest bin edge with at most the target fraction of the check games' non-losers below it."""
  bins = selfplay.RESIGN_BINS
  hist = jnp.zeros((2, bins)).at[0, 2].set(3.0).at[1, 30].set(97.0)  # 3 records near -0.9, 97 near +0.5; two slots
  assert float(selfplay.resign_threshold(hist, 0.05)) == pytest.approx(-1 + 2 * 30 / bins)  # 3% lie below +0.5
  assert float(selfplay.resign_threshold(hist, 0.01)) == pytest.approx(-1 + 2 * 2 / bins)  # none below -0.9
  assert float(selfplay.resign_false_positives(hist, jnp.float32(0.5))) == pytest.approx(0.03)
  assert float(selfplay.resign_threshold(hist / 10, 0.05)) == -1.0  # 10 records: too few, nobody resigns


def test_values_past_minus_one_do_not_resign_while_the_threshold_says_nobody_resigns():
  # search.score_utility adds the score's utility to the values: a lost player's can fall below -1, and the
  # calibration's lowest bin, whose lower edge is -1, counts it among the false positives only if it stays there.
  import types
  out = types.SimpleNamespace(value=jnp.array([-1.2, -1.4, 0.3]), best_value=jnp.array([-1.3, -1.1, 1.2]))
  value = selfplay.resign_value(out)
  np.testing.assert_allclose(value, [-1.0, -1.0, 1.0])
  assert not bool(jnp.any(value < selfplay.resign_threshold(jnp.zeros((1, selfplay.RESIGN_BINS)), 0.05)))


def test_a_player_below_the_threshold_resigns_and_loses_except_in_check_games():
  import azjax
  from azjax import rules, train_step as train_lib
  config = azjax.apply_overrides(azjax.preset("tictactoe", "smoke"),
                                 ["selfplay.resign=true", "selfplay.resign_check_fraction=0.5"])
  program = train_lib.build(config)
  state = train_lib._init(program, jax.random.PRNGKey(0))
  actors, replay, variables = state.actors, state.replay, (state.params, state.bn_state)
  check = np.array(actors.resign_check)
  assert 0 < check.sum() < 8  # half of the 8 games, by their own coins
  ply = jax.jit(lambda a, r, k, t: selfplay.play_ply(program.env, program.search, config.selfplay, variables, a, r, k,
                                                     "tictactoe", resign_below=t))
  mover = np.asarray(actors.env.current_player)
  actors, replay, outcome, _ = ply(actors, replay, jax.random.PRNGKey(1), jnp.float32(2.0))  # every value is below 2
  np.testing.assert_array_equal(outcome.done, ~check)
  for g in np.flatnonzero(~check):  # resigned on the first move: the mover lost, and its position says so
    assert outcome.rewards[g, mover[g]] == -1 and outcome.rewards[g, 1 - mover[g]] == 1
    assert int(outcome.ending[g]) == rules.ENDINGS.index("resignation") and float(replay.value[g, 0]) == -1
  # Play on with nobody resigning (-1: no value lies below it) until the check games end: each adds the lowest
  # values of its players who did not lose to its slot's histogram.
  actors = actors.replace(resign_check=jnp.asarray(check))
  search = jax.jit(program.search)
  low = np.ones((8, 2))
  for i in range(9):
    mover = np.asarray(actors.env.current_player)
    keys = jax.vmap(lambda k: jax.random.split(k, 3))(selfplay.per_game_keys(jax.random.PRNGKey(10 + i),
                                                                             actors.slot))[:, 0]
    value = np.asarray(selfplay.resign_value(search(variables, keys, actors.env)))
    before = np.asarray(actors.calibration)
    actors, replay, outcome, _ = ply(actors, replay, jax.random.PRNGKey(10 + i), jnp.float32(-1.0))
    assert int((np.asarray(outcome.ending) == rules.ENDINGS.index("resignation"))[np.asarray(outcome.done)].sum()) == 0
    low[np.arange(8), mover] = np.minimum(low[np.arange(8), mover], value)
    for g in np.flatnonzero(np.asarray(outcome.done) & check):
      added = np.asarray(actors.calibration[g]) - 0.9 * before[g]
      bins = [min(int((low[g, p] + 1) / 2 * selfplay.RESIGN_BINS), selfplay.RESIGN_BINS - 1)
              for p in range(2) if outcome.rewards[g, p] >= 0]
      assert added.sum() == pytest.approx(len(bins), abs=1e-5)  # one record per player who did not lose
      for b in np.flatnonzero(added > 0.5):  # at its lowest value's bin (a fresh network's values lie on an edge, 0)
        assert min(abs(b - e) for e in bins) <= 1
      check[g] = False  # its next game's records are not followed here
    low[np.asarray(outcome.done)] = 1.0
  assert not check.any()  # every check game ended within 9 plies (tic-tac-toe)


def test_with_resign_turns_a_player_resigns_only_after_that_many_of_its_own_moves_below_the_threshold():
  """resign_turns=2 (KataGo's resignConsecTurns): every value lies below v_resign = 1, yet nobody resigns on
  its first move; the first player resigns on its second (ply 3) and loses, except in check games. A player's
  recorded low value is the higher of its last two moves' values."""
  import azjax
  from azjax import rules, train_step as train_lib
  config = azjax.apply_overrides(azjax.preset("tictactoe", "smoke"),
                                 ["selfplay.resign=true", "selfplay.resign_check_fraction=0.5", "selfplay.resign_turns=2"])
  program = train_lib.build(config)
  state = train_lib._init(program, jax.random.PRNGKey(0))
  actors, replay, variables = state.actors, state.replay, (state.params, state.bn_state)
  assert actors.recent_value.shape == (8, 2, 2)
  check = np.array(actors.resign_check)
  assert 0 < check.sum() < 8
  ply = jax.jit(lambda a, r, k: selfplay.play_ply(program.env, program.search, config.selfplay, variables, a, r, k,
                                                  "tictactoe", resign_below=jnp.float32(1.0)))
  search = jax.jit(program.search)
  values = np.ones((8, 2, 2))  # per game and player, the values of its first two moves
  for i in range(3):
    mover = np.asarray(actors.env.current_player)
    keys = jax.vmap(lambda k: jax.random.split(k, 3))(selfplay.per_game_keys(jax.random.PRNGKey(20 + i),
                                                                             actors.slot))[:, 0]
    value = np.asarray(selfplay.resign_value(search(variables, keys, actors.env)))
    assert (value < 1.0).all()
    values[np.arange(8), mover, i // 2] = value
    actors, replay, outcome, _ = ply(actors, replay, jax.random.PRNGKey(20 + i))
    if i < 2:  # each player's first move: not yet two below the threshold
      assert not np.asarray(outcome.done).any()
      np.testing.assert_allclose(actors.low_value, 1.0)  # the window still holds the +1 before the first move
    else:
      np.testing.assert_array_equal(outcome.done, ~check)
      for g in np.flatnonzero(~check):
        assert outcome.rewards[g, mover[g]] == -1 and int(outcome.ending[g]) == rules.ENDINGS.index("resignation")
      for g in np.flatnonzero(check):  # played on: the first player's low value is the higher of its two
        assert float(actors.low_value[g, mover[g]]) == pytest.approx(values[g, mover[g]].max(), abs=1e-5)


@pytest.mark.parametrize("margin, score, black_value", [(9, "margin", -1.0), (15, "margin", 0.0),
                                                        (15, "logistic", 2 / (1 + 10 ** (14 / 4)) - 1)])
@pytest.mark.parametrize("max_plies", [60, 0])
def test_a_chess_game_at_the_length_cap_is_scored_by_material_when_adjudicated(margin, score, black_value,
                                                                               max_plies):
  """Black, a queen and a rook down, makes the cap's last move: with adjudication at a margin of 9 the game is
  white's, and black's position trains towards -1; at 15 it stays a draw; scored by the lead's expected score
  (logistic), black's outcome is -0.9994, an expected score of 0.0003. The cap is the config's (max_plies 60)
  or, with none, pgx's own at ply 512, which pgx ends as a terminal draw."""
  from azjax.engines import pgx_private
  env = make_env("chess")
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  search = make_search(env, net, SearchConfig(num_simulations=2), "chess")
  actors = selfplay.init_actors(env, jax.random.PRNGKey(0), jnp.arange(2, dtype=jnp.int32))
  root = pgx_private.from_fen("4k3/8/8/8/8/8/8/QR2K3 b - - 0 1")
  last = (max_plies or rules.PGX_CAPS["chess"]) - 1
  root = root.replace(_x=root._x._replace(step_count=jnp.int32(last)))
  actors = actors.replace(env=jax.tree.map(lambda x: jnp.stack([x, x]), root), ply=jnp.full(2, last, jnp.int32))
  variables = net.init(jax.random.PRNGKey(1), actors.env.observation)
  obs = actors.env.observation
  replay = replay_lib.init(2, 8, jax.ShapeDtypeStruct(obs.shape[1:], obs.dtype), env.num_actions)
  config = SelfPlayConfig(max_plies=max_plies, adjudicate_material=margin, adjudicate_score=score)
  ply = jax.jit(lambda a, r, k: selfplay.play_ply(env, search, config, variables, a, r, k, "chess"))
  _, replay, outcome, _ = ply(actors, replay, jax.random.PRNGKey(2))
  black = int(root.current_player)
  assert np.all(outcome.done) and np.all(outcome.ending == rules.ENDINGS.index("cap"))
  rtol = 1e-5 if score == "logistic" else 0  # the margin's outcomes are exact; the logistic's float32
  np.testing.assert_allclose(outcome.rewards[:, black], black_value, rtol=rtol)
  np.testing.assert_allclose(outcome.rewards[:, 1 - black], -black_value, rtol=rtol)
  np.testing.assert_allclose(replay.value[:, 0], black_value, rtol=rtol)  # black's position, the only one written
