"""Self-play: B games in lockstep, one ply per scan step, with auto-reset.

The latest network plays both sides. Moves are sampled in proportion to the
search policy for the first `temperature_plies` plies of a game and chosen
greedily after (AlphaGo Zero Methods "Self-play": tau = 1 for 30 moves, then
tau -> 0), or drawn at `endgame_temperature` after where that is set (Lc0's).
Every position goes to its slot's replay lane; a finished game's positions are
labelled there and the slot starts a new game.

Randomness is drawn per game from `fold_in(key, slot)`, so the games do not
depend on how many devices share them.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import pgx

from azjax import replay as replay_lib, rules
from azjax.config import SelfPlayConfig
from azjax.games import batched_init, batched_step
from azjax.search import choose_move, gather


@chex.dataclass(frozen=True)
class Actors:
  env: pgx.State  # [B] the games in play
  ply: chex.Array  # [B] int32 plies played in each game
  slot: chex.Array  # [B] int32 global index of each game slot (names its randomness and lane)
  first: chex.Array  # [B] int32 player id that moved first (pgx randomises it)
  # [B, 2, 3] per player id, over its moves so far: sum, sum of squares and count of root values, the sum and
  # count discounted (search.discount, per ply to now; squared for the count) as its value targets will be
  values: chex.Array
  # Resignation (config.resign): the games that may not resign measure how often resigning would be wrong.
  resign_check: chex.Array  # [B] bool this game may not resign (AlphaGo Zero: 10% of games)
  # [B, 2] per player id, the lowest so far of what resignation reads: the highest `resign_value` of its last
  # resign_turns moves (with 1, its lowest value)
  low_value: chex.Array
  recent_value: chex.Array  # [B, 2, resign_turns] per player id, its `resign_value` on its last moves (+1 before)
  calibration: chex.Array  # [B, RESIGN_BINS] this slot's recent check games: their non-losers' low_value, binned


@chex.dataclass(frozen=True)
class Outcome:
  done: chex.Array  # [B] bool the game ended on this ply (and its slot restarted)
  plies: chex.Array  # [B] int32 its length
  rewards: chex.Array  # [B, 2] its outcome per player id (zeros for a draw, or the length cap unless adjudicated)
  first: chex.Array  # [B] int32 the player id that moved first
  ending: chex.Array  # [B] int32 how it ended: an index into rules.ENDINGS
  value_sse: chex.Array  # [B] sum over its moves of (root value - the outcome, discounted as replay's target)^2


@chex.dataclass(frozen=True)
class Move:
  """What one ply's search saw, per game: the figures that show a collapse as it starts (issue 16)."""
  ply: chex.Array  # [B] int32 the ply of the move (0 = the game's first)
  is_pass: chex.Array  # [B] bool the move passed (Go; False elsewhere)
  fills_eye: chex.Array  # [B] bool the move filled one of the mover's own one-point eyes (Go; False elsewhere)
  entropy: chex.Array  # [B] entropy of the search policy (nats)
  kl: chex.Array  # [B] KL(search policy || network prior over the searched moves): what search changed
  prior_value: chex.Array  # [B] the network's value of the position, for its mover
  full: chex.Array  # [B] bool the move had the full search and trains the policy (playout-cap randomisation)


# Stages of a game for Go's pass rate: plies [0, 30), [30, 60), [60, end).
STAGES = (0, 30, 60)
# Resignation's calibration: a histogram of values over [-1, 1], each slot's decayed by this much per check
# game it adds (a memory of about 10 check games a slot), and no resignation before this many records.
RESIGN_BINS, RESIGN_DECAY, RESIGN_MIN_RECORDS = 40, 0.9, 20.0


def chunk_metrics(moves: Move, outcomes: Outcome, axis_name: str | None = None) -> dict:
  """The metrics of a chunk of plies ([T, B] leaves), over every device of `axis_name` if given.

  Game figures are over the games that ended in the chunk, move figures over every move played. A
  value head stuck at +-1 shows as `value_saturated` near 1 and `value_std` near 0 (issue 16)."""
  psum = (lambda x: jax.lax.psum(x, axis_name)) if axis_name else (lambda x: x)
  done = outcomes.done
  games = psum(done.sum())
  per_game = lambda x: psum(jnp.where(done, x, 0.0).sum()) / jnp.maximum(games, 1)
  moves_n = psum(jnp.float32(moves.ply.size))
  per_move = lambda x: psum(x.sum()) / moves_n
  per_full = lambda x: psum(jnp.where(moves.full, x, 0.0).sum()) / jnp.maximum(psum(moves.full.sum()), 1)
  first = jnp.take_along_axis(outcomes.rewards, outcomes.first[..., None], axis=-1)[..., 0]
  lengths = jnp.where(done, outcomes.plies, -1)
  if axis_name:
    lengths = jax.lax.all_gather(lengths, axis_name, axis=1, tiled=True)
  lengths = jnp.where(lengths >= 0, lengths, jnp.nan).astype(jnp.float32)
  # Resignation shortens games without any collapse; the games played to their end show a collapse alone.
  resigned = outcomes.ending == rules.ENDINGS.index("resignation")
  if axis_name:
    resigned = jax.lax.all_gather(resigned, axis_name, axis=1, tiled=True)
  played_out = jnp.where(resigned, jnp.nan, lengths)
  any_played_out = jnp.any(~jnp.isnan(played_out))
  value = moves.prior_value
  saturated = jnp.abs(value) > 0.99
  m = {
      "games": games,
      # Value accuracy: the search's root values against the outcomes of the games they were in.
      "value_mse": psum(jnp.where(done, outcomes.value_sse, 0.0).sum()) / jnp.maximum(
          psum(jnp.where(done, outcomes.plies, 0).sum()), 1),
      "mean_game_length": per_game(outcomes.plies),
      **{f"game_length_p{q}": jnp.where(games > 0, jnp.nanpercentile(lengths, q), 0.0) for q in (10, 50, 90)},
      "played_out_length_p50": jnp.where(any_played_out, jnp.nanpercentile(played_out, 50), 0.0),
      "first_player_score": per_game(first),
      "first_player_win": per_game(first > 0), "second_player_win": per_game(first < 0),
      "draw_rate": per_game(first == 0),
      **{f"end_{name}": per_game(outcomes.ending == i) for i, name in enumerate(rules.ENDINGS)},
      "early_pass_end": per_game((outcomes.ending == rules.ENDINGS.index("double_pass")) & (outcomes.plies < 30)),
      # Over the fully searched moves: a fast search's policy is no policy target (playout-cap randomisation).
      "policy_entropy": per_full(moves.entropy), "search_kl": per_full(moves.kl),
      "full_search_rate": per_move(moves.full),
      "value_std": jnp.sqrt(jnp.maximum(per_move(value ** 2) - per_move(value) ** 2, 0.0)),
      "value_saturated": per_move(saturated),
  }
  for name, seat in (("first", moves.ply % 2 == 0), ("second", moves.ply % 2 == 1)):
    n = jnp.maximum(psum(seat.sum()), 1)
    m[f"value_mean_{name}"] = psum(jnp.where(seat, value, 0.0).sum()) / n
    m[f"value_saturated_{name}"] = psum((seat & saturated).sum()) / n
  for lo, hi in zip(STAGES, (*STAGES[1:], None)):
    stage = (moves.ply >= lo) & ((moves.ply < hi) if hi else True)
    m[f"pass_rate_{lo}_{hi or 'end'}"] = psum((stage & moves.is_pass).sum()) / jnp.maximum(psum(stage.sum()), 1)
  # Go: a side that kills its own groups (search.go_fill_eyes). Simple eyes under every search.go_eyes, so the
  # figure compares across runs (with go_eyes=true it counts the false eyes the rule leaves fillable).
  m["eye_fill_rate"] = per_move(moves.fills_eye)
  return m


def per_game_keys(key: chex.PRNGKey, slot: chex.Array) -> chex.Array:
  """One key per game slot, independent of how the slots are sharded."""
  return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, slot)


def per_row_keys(key: chex.PRNGKey, slot: chex.Array, per_slot: int) -> chex.Array:
  """`per_slot` keys for each game slot, slot-major (a minibatch's rows, replay.sample), independent of how the
  slots are sharded."""
  keys = jax.vmap(lambda k: jax.random.split(k, per_slot))(per_game_keys(key, slot))
  return keys.reshape(-1, *keys.shape[2:])


def init_actors(env: pgx.Env, key: chex.PRNGKey, slot: chex.Array, config: SelfPlayConfig | None = None) -> Actors:
  """Fresh games for the given slots (with `config`'s resignation checks, if any); the key is consumed."""
  keys = per_game_keys(key, slot)
  state = batched_init(env)(keys)
  return Actors(env=state, ply=jnp.zeros_like(slot), slot=slot, first=state.current_player.astype(jnp.int32),
                values=jnp.zeros(slot.shape + (2, 3), jnp.float32), resign_check=_check_games(keys, config),
                low_value=jnp.ones(slot.shape + (2,), jnp.float32),
                recent_value=jnp.ones(slot.shape + (2, _resign_turns(config)), jnp.float32),
                calibration=jnp.zeros(slot.shape + (RESIGN_BINS,), jnp.float32))


def _check_games(keys, config: SelfPlayConfig | None) -> chex.Array:
  """[B] bool: which new games (one key each, also the game's own) may not resign: `resign_check_fraction`
  of them when `config.resign`, else none."""
  fraction = config.resign_check_fraction if config is not None and config.resign else 0.0
  return jax.vmap(lambda k: jax.random.uniform(jax.random.fold_in(k, 1)) < fraction)(keys)


def _resign_turns(config: SelfPlayConfig | None) -> int:
  return config.resign_turns if config is not None else 1


def resign_value(out) -> chex.Array:
  """[B] what the mover's resignation looks at: the higher of the root value and the best child's value
  (AlphaGo Zero, Methods "Self-play": it resigns when both are below v_resign). Bounded to [-1, 1], the
  calibration's range: with search.score_utility the values reach past -1, under the threshold's -1 that
  means nobody resigns, and under the lowest calibration bin that counts false positives."""
  return jnp.clip(jnp.maximum(out.value, out.best_value), -1.0, 1.0)


def _bin_edge(k):
  """The lower edge of calibration bin `k` (k = RESIGN_BINS: the upper edge of the last)."""
  return -1.0 + 2.0 * k / RESIGN_BINS


def _histogram(calibration: chex.Array, axis_name: str | None) -> chex.Array:
  """[RESIGN_BINS] every slot's calibration (and every device's, with `axis_name`) summed."""
  hist = calibration.reshape(-1, RESIGN_BINS).sum(0)
  return jax.lax.psum(hist, axis_name) if axis_name else hist


def resign_threshold(calibration: chex.Array, false_positives: float, axis_name: str | None = None) -> chex.Array:
  """[] v_resign from the check games of every slot (and every device of `axis_name`): the highest bin edge
  below which at most `false_positives` of their non-losers' lowest values lie, so that at most that
  fraction of players who went on to win or draw would have resigned. -1 (nobody resigns) until the
  histogram holds RESIGN_MIN_RECORDS."""
  hist = _histogram(calibration, axis_name)
  total = hist.sum()
  below = jnp.concatenate([jnp.zeros(1), jnp.cumsum(hist)]) / jnp.maximum(total, 1e-9)  # at each bin's lower edge
  edge = jnp.sum(below <= false_positives) - 1
  return jnp.where(total >= RESIGN_MIN_RECORDS, _bin_edge(edge), -1.0)


def resign_false_positives(calibration: chex.Array, threshold: chex.Array, axis_name: str | None = None):
  """[] the fraction of the check games' non-losers whose lowest value lies below `threshold`, by the histogram."""
  hist = _histogram(calibration, axis_name)
  lower = _bin_edge(jnp.arange(RESIGN_BINS))
  return jnp.sum(jnp.where(lower < threshold - 1e-6, hist, 0.0)) / jnp.maximum(hist.sum(), 1e-9)


def select_action(key: chex.PRNGKey, weights: chex.Array, ply: chex.Array, temperature_plies: int,
                  endgame_temperature: float = 0.0, rank: chex.Array | None = None) -> chex.Array:
  """_unbatched_: samples from `weights` [A] before `temperature_plies`; from then on from weights^(1 / T) at
  T = `endgame_temperature`, or the greedy move where T = 0 (the highest `rank`, search.choose_move)."""
  return choose_move(key, weights, jnp.where(ply < temperature_plies, 1.0, endgame_temperature), rank)


def root_moves(keys: chex.Array, out, ply: chex.Array, config: SelfPlayConfig) -> chex.Array:
  """[B] each game's move from its search `out` (select_action by `ply`), drawn over the root's children and
  mapped to their moves: in a compact tree K draws, not A (chess: 218 of 4,672; the draw over A cost 3.8 ms of a
  64-game ply on the 2-core CPU). The same law; in a full tree (children: all A moves in order) the same draw."""
  child = jax.vmap(select_action, in_axes=(0, 0, 0, None, None, 0))(
      keys, gather(out.move_weights, out.actions), ply, config.temperature_plies, config.endgame_temperature,
      gather(out.move_rank, out.actions))
  return gather(out.actions, child[:, None])[:, 0]


PLAYOUT_COINS = 0x9C0  # the key of playout-cap randomisation's coins: the same for every seed (below)


def playout_coins(config: SelfPlayConfig, step: chex.Array) -> chex.Array:
  """[chunk_plies] bool: which plies of train step `step`'s chunk get the full search (playout-cap
  randomisation, `config.full_search_fraction`); all True without it.

  One coin per ply, shared by the games in lockstep (a per-game coin would need both searches for every
  game each ply: no saving). Drawn from the step alone, not from the seed: the seeds of a sweep, vmapped
  in one program, flip the same coins, so the program still runs one search per ply; a coin per seed
  is batched, and vmap turns the `cond` between the searches into a select that runs both."""
  if config.full_search_fraction >= 1.0:
    return jnp.ones((config.chunk_plies,), bool)
  key = jax.random.fold_in(jax.random.PRNGKey(PLAYOUT_COINS), step)
  return jax.random.uniform(key, (config.chunk_plies,)) < config.full_search_fraction


def capped_search(search, fast_search, variables, keys, state: pgx.State, full: chex.Array, fast_noise: bool = False):
  """The search of one ply without its tree: the full `search` where the coin `full` ([] bool, see
  `playout_coins`) says so, else `fast_search`, with root noise only if `fast_noise` (config.fast_noise).
  Without `fast_search`, always full."""
  full_out = lambda: search(variables, keys, state).replace(tree=None)
  if fast_search is None:
    return full_out()
  fast_out = lambda: fast_search(variables, keys, state, noise=fast_noise).replace(tree=None)
  return jax.lax.cond(full, full_out, fast_out)


def play_ply(env: pgx.Env, search, config: SelfPlayConfig, variables, actors: Actors, replay: replay_lib.Replay,
             key: chex.PRNGKey, game: str = "", fast_search=None, resign_below=None, full=True,
             target: replay_lib.ValueTarget = replay_lib.ValueTarget()):
  """Plays one move in every game; returns (actors, replay, Outcome, Move). The key is consumed.

  `game` (config.game) names the game for the diagnostics (Go's passes, chess's repetitions).
  `fast_search` is playout-cap randomisation's small search, played where the coin `full` is False
  (`capped_search`); a position it searched goes to replay with an all-zero policy, which the loss
  reads as "no policy target", or with `config.record_fast` False not at all (KataGo).
  `resign_below` ([] v_resign, or None: no resignation): a mover whose `resign_value` is below it resigns,
  unless its game is a check game, and loses. `target` says how a finished game's outcome becomes its
  positions' value targets (`replay.ValueTarget`)."""
  keys = jax.vmap(lambda k: jax.random.split(k, 3))(per_game_keys(key, actors.slot))
  search_keys, action_keys, reset_keys = keys[:, 0], keys[:, 1], keys[:, 2]
  state = actors.env
  full = jnp.asarray(full) if fast_search is not None else jnp.bool_(True)
  out = capped_search(search, fast_search, variables, search_keys, state, full, config.fast_noise)
  action = root_moves(action_keys, out, actors.ply, config)
  replay = replay_lib.add(replay, state.observation, jnp.where(full, out.weights, 0.0), out.legal,
                          state.current_player, out.best_value, record=config.record_fast or full,
                          board=None if replay.board is None else rules.occupancy(game, state),
                          material=None if replay.material is None else rules.chess_material_lead(state))

  mover_id = actors.env.current_player
  state = batched_step(env)(state, action)
  ply = actors.ply + 1
  capped = (ply >= config.max_plies) if config.max_plies > 0 else jnp.zeros_like(state.terminated)
  over = state.terminated | state.truncated  # by the game's own rules
  # The mover resigns when its value lay below v_resign on each of its last resign_turns moves: the highest of
  # them is below (config.resign_turns; 1 = this move's alone, AlphaGo Zero).
  is_mover = jax.nn.one_hot(mover_id, 2) > 0
  earlier = jnp.take_along_axis(actors.recent_value, mover_id[:, None, None].astype(jnp.int32), axis=1)[:, 0, 1:]
  window = jnp.concatenate([earlier, resign_value(out)[:, None]], -1)
  resignation = window.max(-1)
  recent = jnp.where(is_mover[..., None], window[:, None], actors.recent_value)
  low = jnp.where(is_mover, jnp.minimum(actors.low_value, resignation[:, None]), actors.low_value)
  resigned = jnp.zeros_like(over) if resign_below is None else (
      (resignation < resign_below) & ~actors.resign_check & ~over)
  done = over | capped | resigned
  # Only a real end of game scores; truncation and the length cap are draws (unless adjudicated). Resigning loses.
  rewards = jnp.where(state.terminated[:, None], state.rewards, 0.0)
  rewards = jnp.where(resigned[:, None], 1.0 - 2.0 * jax.nn.one_hot(mover_id, 2), rewards)
  ending = jnp.where(resigned, rules.ENDINGS.index("resignation"), rules.ending(game, state, ply, config.max_plies))
  if config.adjudicate_material:  # chess only (config.validate): the cap scored by material instead
    # pgx ends chess at its own 512-ply cap as a terminal draw (terminated, no rewards): that cap too.
    at_cap = done & (ending == rules.ENDINGS.index("cap"))
    adjudicated = rules.adjudicated_rewards(state, config.adjudicate_material, config.adjudicate_score)
    rewards = jnp.where(at_cap[:, None], adjudicated, rewards)
  ownership = owned = None
  if replay.ownership is not None:  # KataGo's ownership target: the final board of a game that really ended
    ownership, owned = rules.final_ownership(state, rules.GO_SIZES[game]), state.terminated & ~resigned
  replay = replay_lib.finish(replay, done, rewards, ownership, owned, target)

  mover = jax.nn.one_hot(mover_id, 2)[..., None]  # [B, 2, 1]
  d = target.discount
  decay = jnp.array([[[d, 1.0, d ** 2]]])  # one more ply between every earlier move and the end
  values = actors.values * decay + mover * jnp.stack([out.value, out.value ** 2, jnp.ones_like(out.value)], -1)[:, None]
  # sum over the moves of (v - z d^k)^2 = sum v^2 - 2 z sum v d^k + z^2 sum d^2k, per player with its outcome z,
  # k each move's plies to the last (replay.finish's target, less train.q_ratio's share of the search value)
  sse = (values[..., 1] - 2 * rewards * values[..., 0] + values[..., 2] * rewards ** 2).sum(-1)
  outcome = Outcome(done=done, plies=ply, rewards=rewards, first=actors.first, ending=ending, value_sse=sse)
  move = _move_stats(out, action, actors.ply, game, full, actors.env)
  # A finished check game adds the lowest values of its players who did not lose to its slot's calibration.
  bins = jnp.clip(((low + 1.0) / 2.0 * RESIGN_BINS).astype(jnp.int32), 0, RESIGN_BINS - 1)
  record = (jax.nn.one_hot(bins, RESIGN_BINS) * (rewards >= 0)[..., None]).sum(1)
  calibration = jnp.where((done & actors.resign_check)[:, None], RESIGN_DECAY * actors.calibration + record,
                          actors.calibration)
  fresh = batched_init(env)(reset_keys)
  state = where_games(done, fresh, state)
  actors = Actors(env=state, ply=jnp.where(done, 0, ply), slot=actors.slot,
                  first=jnp.where(done, fresh.current_player, actors.first),
                  values=jnp.where(done[:, None, None], 0.0, values),
                  resign_check=jnp.where(done, _check_games(reset_keys, config), actors.resign_check),
                  low_value=jnp.where(done[:, None], 1.0, low), recent_value=jnp.where(done[:, None, None], 1.0, recent),
                  calibration=calibration)
  return actors, replay, outcome, move


def _move_stats(out, action, ply, game: str, full, state: pgx.State) -> Move:
  log_prior = jax.nn.log_softmax(rules.masked_logits(out.prior_logits, out.legal))
  log_weights = jnp.log(jnp.where(out.weights > 0, out.weights, 1.0))
  entropy = -jnp.sum(out.weights * log_weights, axis=-1)
  kl = jnp.sum(jnp.where(out.weights > 0, out.weights * (log_weights - log_prior), 0.0), axis=-1)
  is_pass = fills_eye = jnp.zeros(action.shape, bool)
  if game in rules.GO_SIZES:
    is_pass = action == out.weights.shape[-1] - 1
    eyes = jax.vmap(functools.partial(rules.own_eyes, size=rules.GO_SIZES[game]))(state._x.board, state._x.color)
    fills_eye = jnp.take_along_axis(jnp.pad(eyes, ((0, 0), (0, 1))), action[:, None], axis=-1)[:, 0]
  return Move(ply=ply, is_pass=is_pass, fills_eye=fills_eye, entropy=entropy, kl=kl, prior_value=out.prior_value,
              full=jnp.broadcast_to(full, ply.shape))


def where_games(mask, new, old):
  """Per game (leading axis), `new` where `mask` is set and `old` elsewhere, for every leaf of a pytree."""
  return jax.tree.map(lambda n, o: jnp.where(mask.reshape(mask.shape + (1,) * (o.ndim - 1)), n, o), new, old)


def play_chunk(env: pgx.Env, search, config: SelfPlayConfig, variables, actors: Actors, replay, key,
               game: str = "", fast_search=None, resign_below=None, coins=None,
               target: replay_lib.ValueTarget = replay_lib.ValueTarget()):
  """Plays `config.chunk_plies` plies in every game; returns (actors, replay, (Move, Outcome)), their leaves
  [T, B] (`chunk_metrics` sums them up). The key is consumed. `coins` ([T] bool, `playout_coins`):
  which plies `fast_search` does not play; all full if None."""

  def body(carry, xs):
    (actors, replay), (ply_key, full) = carry, xs
    actors, replay, outcome, move = play_ply(env, search, config, variables, actors, replay, ply_key, game,
                                             fast_search, resign_below, full, target)
    return (actors, replay), (move, outcome)

  coins = jnp.ones((config.chunk_plies,), bool) if coins is None else coins
  (actors, replay), record = jax.lax.scan(body, (actors, replay), (jax.random.split(key, config.chunk_plies), coins))
  return actors, replay, record
