"""The moves the search may consider: pgx's legal moves, optionally narrowed by Go's pass rule.

Every search (self-play, arena, agents, engines) masks with `legal_moves`, at the root and at
every node, so all of them play by the same rule; `masked_logits` is the one masking of logits.

Go's early-pass collapse (issue 16): under pgx's rules pass is always legal, and with komi 7.5 a
double pass on an almost empty board wins for white; a young network learns to pass at once and
self-play collapses into 15-30-ply games. `search.go_pass = "eyes"` keeps pass out of the search
until the opponent has just passed or every other legal move would fill one of the mover's own
one-point eyes: the rule of the random playouts of Monte-Carlo Go (MoGo, Gelly et al. 2006,
"Modification of UCT with patterns in Monte-Carlo Go", INRIA RR-6062, section 3; the minigo and
Pachi playout policies too), where a game ends only once the board is settled, so its
Tromp-Taylor score is the real one. `"pgx"` keeps pass always legal (the papers' rules).

The same MoGo rule has a second half: a playout never fills one of its own one-point eyes.
`search.go_fill_eyes = False` applies it to the search too, so a group with two such eyes cannot
kill itself: against GNU Go (docs/results/learning) the agent, behind, went on filling its own eyes
after GNU Go passed. True (the default) leaves every legal move to the search (the papers).

Which points are eyes, for both halves: `search.go_eyes = "simple"` (the default) counts every empty point
whose neighbours are all the mover's stones, false eyes too, whose filling can be the only way to join and
save a chain. `"true"` also asks the diagonals, as the playout policies of Pachi and minigo (`is_eyeish`) do:
an opponent stone on a diagonal is a fault, the board's edge is one more, and two faults make no eye.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pgx


from azjax.config import GO_EYE_RULES, GO_PASS_RULES
GO_SIZES = {"go9": 9, "go": 19}
GO_KOMI = 7.5  # pgx's Go komi (games.make_env keeps pgx's default): black wins when its area - komi > white's


def masked_logits(logits: chex.Array, legal: chex.Array) -> chex.Array:
  """Logits with the illegal moves at the dtype's lowest value (STYLE: never a magic -1e9)."""
  return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


@functools.cache
def _neighbours(size: int, diagonal: bool = False) -> np.ndarray:
  """[size^2, 4] the orthogonal (or the diagonal) neighbours of each point, -1 off the board."""
  out = np.full((size * size, 4), -1, np.int32)
  steps = ((-1, -1), (-1, 1), (1, -1), (1, 1)) if diagonal else ((-1, 0), (1, 0), (0, -1), (0, 1))
  for p in range(size * size):
    r, c = divmod(p, size)
    for k, (dr, dc) in enumerate(steps):
      if 0 <= r + dr < size and 0 <= c + dc < size:
        out[p, k] = (r + dr) * size + c + dc
  return out


def _around(points: chex.Array, neighbours: np.ndarray, off_board) -> chex.Array:
  """[size^2, 4] `points` [size^2] read at each point's `neighbours` (`_neighbours`), `off_board` past the edge."""
  return jnp.append(points, off_board)[jnp.asarray(neighbours)]


def _fixpoint(step, x: chex.Array) -> chex.Array:
  """`step` applied to `x` until nothing changes."""
  return jax.lax.while_loop(lambda c: (c[0] != c[1]).any(), lambda c: (c[1], step(c[1])), (x, step(x)))[1]


def own_eyes(board: chex.Array, color: chex.Array, size: int, eyes: str = "simple") -> chex.Array:
  """_unbatched_ [size^2] bool: empty points whose every on-board neighbour is a stone of `color`; with
  `eyes="true"`, only those with fewer than two faults on their diagonals (an opponent stone each, and one
  for the edge).

  `board` is pgx's (black > 0, white < 0, empty 0); `color` 0 is black, 1 white."""
  sign = jnp.where(color == 0, 1, -1)
  simple = (board == 0) & _around(board * sign > 0, _neighbours(size), True).all(axis=-1)
  if eyes == "simple":
    return simple
  diagonal = _neighbours(size, diagonal=True)
  faults = _around(board * sign < 0, diagonal, False).sum(-1) + (diagonal < 0).any(-1)
  return simple & (faults < 2)


def liberty_planes(mine: chex.Array, theirs: chex.Array, size: int) -> chex.Array:
  """_unbatched_ [size^2, 3] float32: 1 where a stone's chain has exactly 1, 2 or 3 liberties (KataGo's input
  features; either colour: the network sees whose stone it is in its own planes). `mine`, `theirs` [size^2] bool.

  Chains by label propagation: each stone takes the smallest label among itself and its same-colour neighbours,
  and then its label's label (pointer jumping), until nothing changes; a label is always a point of the chain.
  Each empty point then adds one liberty to each distinct chain beside it."""
  nbr = _neighbours(size)
  points = size * size
  colour = mine.astype(jnp.int32) + 2 * theirs.astype(jnp.int32)  # 0 empty, 1 mine, 2 theirs
  stone = colour > 0
  same = (_around(colour, nbr, -1) == colour[:, None]) & stone[:, None]  # [N, 4] a same-colour neighbour

  def step(label):
    around = jnp.where(same, _around(label, nbr, points), points).min(-1)  # the smallest same-colour neighbour
    label = jnp.where(stone, jnp.minimum(label, around), points)
    return jnp.where(stone, label[jnp.minimum(label, points - 1)], points)

  label = _fixpoint(step, jnp.where(stone, jnp.arange(points), points))  # empty points: label `points`
  beside = _around(label, nbr, points)  # [N, 4] the chains next to each point
  distinct = jnp.stack([~(beside[:, k, None] == beside[:, :k]).any(-1) for k in range(4)], -1)
  liberties = jnp.zeros(points + 1, jnp.int32).at[beside].add(~stone[:, None] & distinct & (beside < points))[label]
  return (stone[:, None] & (liberties[:, None] == jnp.arange(1, 4))).astype(jnp.float32)


def go_liberty_planes(obs: chex.Array) -> chex.Array:
  """[B, H, W, 3] `liberty_planes` of pgx Go observations [B, H, W, C], whose planes 0 and 1 hold the mover's
  and the opponent's stones now."""
  batch, size = obs.shape[0], obs.shape[1]
  flat = obs.reshape(batch, size * size, -1)
  planes = jax.vmap(functools.partial(liberty_planes, size=size))(flat[..., 0] > 0.5, flat[..., 1] > 0.5)
  return planes.reshape(batch, size, size, 3)


def area_ownership(board: chex.Array, size: int) -> chex.Array:
  """_unbatched_ [size^2] float32: who owns each point under Tromp-Taylor area counting, pgx's scoring:
  +1 black (its stone, or an empty point from which only black stones can be reached through empty
  points), -1 white, 0 neither. Black's area minus white's is `sum()`. `board` is pgx's (black > 0)."""
  nbr = _neighbours(size)
  empty = board == 0

  def spread(reach):  # one more step through empty points
    return reach | (empty & _around(reach, nbr, False).any(-1))

  black, white = _fixpoint(spread, board > 0), _fixpoint(spread, board < 0)
  return (black & ~white).astype(jnp.float32) - (white & ~black).astype(jnp.float32)


def final_ownership(state: pgx.State, size: int) -> chex.Array:
  """[B, size^2] `area_ownership` of each Go game's board from player 0's view (+1: player 0's point)."""
  x = state._x  # pgx Go's game state: board, and the colour of `current_player`
  black_is_0 = jnp.where(x.color == 0, state.current_player, 1 - state.current_player) == 0
  area = jax.vmap(functools.partial(area_ownership, size=size))(x.board)
  return jnp.where(black_is_0[:, None], area, -area)


def occupancy(game: str, state: pgx.State) -> chex.Array:
  """[B, points] int8 who holds each point of the board as the mover's observation shows it: +1 the mover, -1 the
  opponent, 0 empty (network.future_position's target). Chess and Go only."""
  board = state._x.board  # noqa: SLF001
  if game == "chess":  # pgx keeps the board in the mover's view and observes it turned a quarter (its observe)
    return jnp.sign(jnp.rot90(board.reshape(-1, 8, 8), k=1, axes=(1, 2))).reshape(board.shape[0], -1).astype(jnp.int8)
  if game in GO_SIZES:  # black's chains are positive; the points in the observation's order
    mine = jnp.where(state._x.color == 0, 1, -1)  # noqa: SLF001
    return (jnp.sign(board) * mine[:, None]).astype(jnp.int8)
  raise ValueError(f"occupancy: chess and Go only, not {game}")


def black_margin(state: pgx.State, size: int, lead: chex.Array | None = None) -> chex.Array:
  """[B] black's Tromp-Taylor margin, area minus komi minus white's area: of the board as it stands, or, with
  `lead` [B] (the player to move's expected area lead), as `lead` predicts it. Its sign is pgx's result."""
  if lead is None:
    lead = jax.vmap(functools.partial(area_ownership, size=size))(state._x.board).sum(-1)
  else:  # the mover's view -> black's
    lead = jnp.where(state._x.color == 0, lead, -lead)
  return lead - GO_KOMI


def searched_moves(state: pgx.State, size: int, go_pass: str, fill_eyes: bool, eyes: str = "simple") -> chex.Array:
  """_unbatched_ [A]: pgx's legal moves narrowed by the two halves of MoGo's rule, from one look at the
  mover's eyes. `fill_eyes=False`: no move into one of the mover's own one-point eyes. `go_pass="eyes"`: pass
  only once the opponent has just passed or every legal board move fills one of those eyes (so a move
  always remains). `eyes`: which points count as eyes (`own_eyes`)."""
  x = state._x  # pgx Go's game state (board, consecutive passes, colour)
  legal = state.legal_action_mask
  board_moves = legal[:-1] & ~own_eyes(x.board, x.color, size, eyes)
  pass_ok = legal[-1] & ((x.consecutive_pass_count > 0) | ~board_moves.any()) if go_pass == "eyes" else legal[-1]
  return jnp.append(legal[:-1] if fill_eyes else board_moves, pass_ok)


def make_legal_moves(game: str, go_pass: str = "pgx", fill_eyes: bool = True, eyes: str = "simple"):
  """`legal_moves(states [B]) -> [B, A] bool`: the moves search considers under `go_pass`, `fill_eyes` and
  `eyes`."""
  if go_pass not in GO_PASS_RULES:
    raise ValueError(f"go_pass={go_pass!r}: one of {', '.join(GO_PASS_RULES)}")
  if eyes not in GO_EYE_RULES:
    raise ValueError(f"eyes={eyes!r}: one of {', '.join(GO_EYE_RULES)}")
  if game not in GO_SIZES or (go_pass == "pgx" and fill_eyes):
    return lambda state: state.legal_action_mask
  return jax.vmap(functools.partial(searched_moves, size=GO_SIZES[game], go_pass=go_pass, fill_eyes=fill_eyes,
                                    eyes=eyes))


# Chess material by pgx's board codes (1 pawn, 2 knight, 3 bishop, 4 rook, 5 queen, 6 king): the usual 1, 3, 3, 5, 9.
CHESS_PIECE_VALUES = (0, 1, 3, 3, 5, 9, 0)


def chess_material_lead(state: pgx.State) -> chex.Array:
  """[B] the material of the player to move less its opponent's (pgx keeps the board in the mover's view)."""
  board = state._x.board  # noqa: SLF001
  return (jnp.sign(board) * jnp.asarray(CHESS_PIECE_VALUES)[jnp.abs(board)]).sum(-1)


def _chess_earlier_occurrences(state: pgx.State) -> chex.Array:
  """[B, H-1] bool: whether the position 1, 2, ... plies back was the current chess position (pgx keeps the
  position hashes a ply apart, newest first, the current one at 0)."""
  history = state._x.hash_history  # noqa: SLF001
  return (history[:, 1:] == history[:, :1]).all(-1)


def chess_repetitions(state: pgx.State) -> chex.Array:
  """[B] how often the current chess position occurred earlier in the game (pgx ends the game at two: threefold
  repetition)."""
  return _chess_earlier_occurrences(state).sum(-1)


def chess_cycle(state: pgx.State) -> chex.Array:
  """[B] int32 the plies since the current chess position last occurred (its repetition's cycle), or a number
  above any game's length where it had not."""
  again = _chess_earlier_occurrences(state)
  return jnp.where(again.any(-1), jnp.argmax(again, -1) + 1, again.shape[1] + 1).astype(jnp.int32)


# Fischer and Kannan (2007; chessprogramming.org, "Pawn Advantage, Win Percentage, and Elo"): over 405,460 computer
# games, the side ahead by P pawns of material scored 1 / (1 + 10^(-P/4)) (selfplay.adjudicate_score="logistic").
PAWNS_PER_DECADE = 4.0


def adjudicated_rewards(state: pgx.State, margin: int, score: str = "margin") -> chex.Array:
  """[B, 2] a chess game stopped by a length cap, scored by material (selfplay.adjudicate_material): "margin", a win
  for a side ahead by at least `margin` points and a draw otherwise; "logistic", the lead's expected score as an
  outcome in [-1, 1] (selfplay.adjudicate_score)."""
  lead = chess_material_lead(state)
  if score == "logistic":  # 2 / (1 + 10^(-lead/4)) - 1
    mover_wins = jnp.tanh(lead * jnp.log(10.0) / (2.0 * PAWNS_PER_DECADE))
  else:
    mover_wins = jnp.where(lead >= margin, 1.0, jnp.where(lead <= -margin, -1.0, 0.0))
  return mover_wins[:, None] * (2.0 * jax.nn.one_hot(state.current_player, 2) - 1.0)


# How a finished game ended, one code per game (self-play's diagnostics count them).
ENDINGS = ("win", "draw", "cap", "double_pass", "repetition", "resignation")  # resignation: selfplay.py
# The plies at which pgx ends a game as over the length cap: 2 x points on Go boards, 512 in chess and shogi.
PGX_CAPS = {"go9": 162, "go": 722, "chess": 512, "shogi": 512}


def ending(game: str, state: pgx.State, ply: chex.Array, max_plies: int = 0) -> chex.Array:
  """[B] int32 index into ENDINGS of how each game ended at `state` (valid where it ended), after `ply` plies.

  "win": checkmate, a Go score or any other decisive end; "draw": any other drawn end (stalemate,
  50-move rule, insufficient material, ...); "cap": the game's or the config's length cap, or pgx's
  truncation; "double_pass": Go's two passes in a row; "repetition": chess's threefold repetition.
  A game the rules ended on the cap's own ply (a mate, a repetition, two passes) keeps the rules' code."""
  pgx_cap = PGX_CAPS.get(game, 1 << 30)
  cap = jnp.minimum(pgx_cap, max_plies if max_plies > 0 else 1 << 30)
  code = jnp.where((state.rewards != 0).any(-1), 0, 1)
  if game == "chess":
    code = jnp.where(chess_repetitions(state) >= 2, 4, code)
  if game in GO_SIZES:
    code = jnp.where(state._x.consecutive_pass_count >= 2, 3, code)
  # pgx's own cap ends a game with no flag: a decisive result there is a mate (Go scores the board at its cap),
  # a drawn one is the cap itself.
  seen = (code >= 3) | ((code == 0) & (game not in GO_SIZES))
  by_rule = state.terminated & ~state.truncated & ((ply < pgx_cap) | seen)
  return jnp.where(~by_rule & (state.truncated | (ply >= cap)), 2, code).astype(jnp.int32)
