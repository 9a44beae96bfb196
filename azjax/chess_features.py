"""Chess in the observation's frame: attack planes (`network.attacks`) and AlphaZero's policy planes
(`network.policy_head="planes"`).

Attack planes: which squares each side attacks, and which pieces hang.

Why: the 2x32 chess network of the CPU preset loses material to a uniform random mover (docs/results/learning,
sections 14-19: most of its draws are by insufficient material, the agent a minor piece up or level). Whether a
piece hangs depends on sliders along whole lines, which a few 3x3 convolutions reach only slowly. Giraffe (Lai
2015, arXiv:1509.01549) gave its network attack and defend maps, the lowest-valued attacker and defender of each
square; KataGo gives its network Go's liberties the same way (`network.liberties`). Both are
computed from the rules alone, as here, inside the network from the observation: replay, search and engines
are unchanged.

Four planes, in the observation's frame (pgx: the mover's pieces in planes 0-5, P N B R Q K, the opponent's in
6-11; row 0 is the far rank, so the mover's pawns advance to lower rows):
  0  squares the mover attacks          1  squares the opponent attacks
  2  the mover's pieces en prise         3  the opponent's pieces en prise
A piece is en prise when the other side attacks it and either its own side does not defend it or a cheaper
piece attacks it (pawn 1, knight and bishop 3, rook 5, queen 9; a king en prise is a king in check). Attacks are
pseudo-legal, as python-chess's `attackers`: a pinned piece still attacks, sliders stop at the first piece, and
an en passant capture is no attack (the pawn that may be taken so is not marked). Checked against python-chess on
412 positions of both colours, square by square (section 78 of docs/results/learning/README.md).

Policy planes: AlphaZero represents a chess move by the square its piece is picked up from and one of 73
planes (56 queen moves, 8 knight moves, 9 underpromotions; arXiv:1712.01815, Methods and Table S2). pgx's
action is the same pair, `square * 73 + plane`, with pgx's square a1 = 0, a2 = 1, ..., b1 = 8 in the mover's
frame; `policy_index` says where each action's logit lies in a convolution's [8, 8, 73] output over the
observation, whose row 0 is the far rank and column 0 the a-file.
"""

from __future__ import annotations

import functools

import chex
import jax.numpy as jnp
import numpy as np

NUM_PLANES = 4
POLICY_PLANES = 73  # per square: 56 queen moves, 8 knight moves, 9 underpromotions (arXiv:1712.01815, Table S2)
_VALUES = np.array([1, 3, 3, 5, 9, 1000], np.float32)  # P N B R Q K; the king never hangs cheaply
_KNIGHT = ((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1))
_KING = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))
_DIAGONAL = ((1, 1), (1, -1), (-1, 1), (-1, -1))
_STRAIGHT = ((1, 0), (-1, 0), (0, 1), (0, -1))


@functools.cache
def _tables() -> tuple[np.ndarray, np.ndarray]:
  """(reach [64, 13, 64] bool, between [64, 64, 6]): whether a piece of each kind on one square (the piece planes'
  order, the mover's P N B R Q K then the opponent's; 12: no piece) attacks another on an empty board, and the
  squares between two squares on a line (64 pads: a square past the board that is always empty)."""
  reach = np.zeros((13, 64, 64), bool)
  between = np.full((64, 64, 6), 64, np.int32)
  on = lambda r, c: 0 <= r < 8 and 0 <= c < 8  # noqa: E731
  for r in range(8):
    for c in range(8):
      f = r * 8 + c
      for side, forward in ((0, -1), (6, 1)):  # only pawns differ: the mover's advance to lower rows
        for dc in (-1, 1):
          if on(r + forward, c + dc):
            reach[side, f, (r + forward) * 8 + c + dc] = True
      for piece, steps in ((1, _KNIGHT), (5, _KING)):
        for dr, dc in steps:
          if on(r + dr, c + dc):
            reach[[piece, piece + 6], f, (r + dr) * 8 + c + dc] = True
      for piece, rays in ((2, _DIAGONAL), (3, _STRAIGHT), (4, _DIAGONAL + _STRAIGHT)):
        for dr, dc in rays:
          for k in range(1, 8):
            if not on(r + k * dr, c + k * dc):
              break
            t = (r + k * dr) * 8 + c + k * dc
            reach[[piece, piece + 6], f, t] = True
            between[f, t, :k - 1] = [(r + i * dr) * 8 + c + i * dc for i in range(1, k)]
  return reach.transpose(1, 0, 2), between


def attack_planes(obs: chex.Array) -> chex.Array:
  """[B, 8, 8, 4] the attack planes (module docstring) of pgx chess observations [B, 8, 8, 119]."""
  reach_table, between = (jnp.asarray(t) for t in _tables())
  batch = obs.shape[0]
  pieces = obs[..., :12].reshape(batch, 64, 12) > 0.5  # the piece planes: the mover's P N B R Q K, then the other's
  occupied = pieces.any(-1)  # [B, 64]
  kind = jnp.where(occupied, pieces.argmax(-1), 12)  # a square holds one piece at most; 12: none
  reach = reach_table[jnp.arange(64), kind]  # [B, from, to] where the piece on each square would reach alone
  clear = ~jnp.pad(occupied, ((0, 0), (0, 1)))[:, between].any(-1)  # nothing stands between
  attacks = (reach & clear).astype(jnp.float32)
  # How many pieces of each kind attack each square: one [12, 64] x [64, 64] product a position.
  counts = jnp.einsum("bfk,bft->bkt", pieces.astype(jnp.float32), attacks)  # [B, 12, 64]
  values = jnp.asarray(_VALUES)[None, :, None]
  mine, theirs = pieces[..., :6].any(-1), pieces[..., 6:].any(-1)
  worth = (pieces.astype(jnp.float32) * jnp.asarray(np.tile(_VALUES, 2))).sum(-1)  # [B, 64]
  by_mine, by_theirs = counts[:, :6] > 0.5, counts[:, 6:] > 0.5  # [B, 6, 64]
  cheapest_mine = jnp.where(by_mine, values, jnp.inf).min(1)
  cheapest_theirs = jnp.where(by_theirs, values, jnp.inf).min(1)
  by_mine, by_theirs = by_mine.any(1), by_theirs.any(1)

  def en_prise(own, defended, attacked, cheapest_attacker):
    return own & attacked & (~defended | (cheapest_attacker < worth))

  planes = jnp.stack([by_mine, by_theirs, en_prise(mine, by_mine, by_theirs, cheapest_theirs),
                      en_prise(theirs, by_theirs, by_mine, cheapest_mine)], -1)
  return planes.reshape(batch, 8, 8, NUM_PLANES).astype(jnp.float32)


@functools.cache
def policy_index(opponent: bool = False) -> np.ndarray:
  """[4672] int32: for each pgx chess action, its index in the flattened [8, 8, POLICY_PLANES] planes of the
  observation's frame (pgx's square s = file * 8 + rank sits at row 7 - rank, column file).

  `opponent`: for an action of the opponent's, the reply (`network.opponent_policy`). pgx numbers its squares from
  the side of the player to move, mirroring the ranks, so the opponent's rank r is the mover's 7 - r and sits at
  row r. (Its planes keep their meaning in the opponent's frame: they are the head's second set of outputs.)"""
  action = np.arange(64 * POLICY_PLANES)
  square, plane = action // POLICY_PLANES, action % POLICY_PLANES
  row, column = (square % 8 if opponent else 7 - square % 8), square // 8
  return ((row * 8 + column) * POLICY_PLANES + plane).astype(np.int32)
