"""Can the chess `cpu` preset's 2x32 network learn material, and which piece hangs, when told? A supervised check.

`python chess_capacity.py [--updates 2000] [--optimizer sgd|adam] [--target material|capture] [--attacks]
[--blocks B --channels C]`

Self-play gives the value head a game's outcome, a weak and late signal. Here the same network (the preset's
`network`, trained as the preset trains: SGD with momentum 0.9 at 0.002 and L2 1e-4, or Adam at 1e-3) regresses its
value head on a label computed from the position itself: what it learns slowly here, from games it learns slower:
- `material`: the mover's material lead (pawn 1, knight and bishop 3, rook 5, queen 9; `rules.chess_material_lead`),
  as lead / 10, clipped to [-1, 1];
- `capture`: the most the mover wins at once, what a one-ply material player sees: over its legal captures, the
  piece taken, less the capturer when the square is attacked after the capture (python-chess), and 0 without a
  winning capture; as gain / 9.
Positions: uniformly random games (pgx), every 8th ply from 8 to 160 while in play; a fixed 20% held out. Prints the
held-out correlation and mean squared error of the value against the label as the updates go.
"""

import argparse
import dataclasses
import time

import chess
import jax
import jax.numpy as jnp
import numpy as np
import optax

import chess_material_probe
from azjax import presets, rules
from azjax.games import make_env
from azjax.learner import l2_penalty
from azjax.network import make_network

def random_positions(games: int, plies=range(8, 161, 8)):
  """(observations [N, 8, 8, 119] uint8, material leads [N]) of the live positions of `games` random games."""
  obs, lead = [], []
  for state in chess_material_probe.random_positions(games, seed=0, plies=tuple(plies)):
    live = ~np.asarray(state.terminated)
    obs.append(np.asarray(state.observation)[live].astype(np.uint8))
    lead.append(np.asarray(rules.chess_material_lead(state))[live])
  return np.concatenate(obs), np.concatenate(lead)


def board(obs: np.ndarray) -> chess.Board:
  """The observation's current pieces as a python-chess board, the mover as white (pgx flips the board for black,
  so the mover's pawns advance up the board either way); no castling or en passant."""
  b = chess.Board(None)
  for plane in range(12):
    piece = chess.Piece(plane % 6 + 1, chess.WHITE if plane < 6 else chess.BLACK)
    for r, c in zip(*np.nonzero(obs[:, :, plane])):
      b.set_piece_at(chess.square(c, 7 - r), piece)
  b.turn = chess.WHITE
  return b


def capture_gain(b: chess.Board) -> int:
  best = 0
  for move in b.legal_moves:
    taken = b.piece_at(move.to_square)
    if taken is None:
      continue
    # python-chess's piece types are pgx's codes, 1 pawn .. 6 king; a king is never recaptured (legal moves)
    gain = rules.CHESS_PIECE_VALUES[taken.piece_type]
    mover = rules.CHESS_PIECE_VALUES[b.piece_at(move.from_square).piece_type]
    b.push(move)
    if b.is_attacked_by(chess.BLACK, move.to_square):
      gain -= mover
    b.pop()
    best = max(best, gain)
  return best


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--games", type=int, default=2048)
  p.add_argument("--updates", type=int, default=2000)
  p.add_argument("--batch", type=int, default=256)
  p.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
  p.add_argument("--lr", type=float, help="learning rate (default: SGD 0.002, the preset's; Adam 1e-3)")
  p.add_argument("--target", choices=("material", "capture"), default="material")
  p.add_argument("--attacks", action="store_true", help="the network with the attack planes (network.attacks)")
  p.add_argument("--blocks", type=int, help="residual blocks (default: the preset's 2)")
  p.add_argument("--channels", type=int, help="filters (default: the preset's 32; the value head's hidden layer twice it)")
  p.add_argument("--seed", type=int, default=0)
  a = p.parse_args()

  t0 = time.time()
  obs, lead = random_positions(a.games)
  if a.target == "material":
    label = lead / 10.0
  else:
    label = np.array([capture_gain(board(o)) for o in obs], np.float32) / 9.0
  label = np.clip(label, -1, 1).astype(np.float32)
  rng = np.random.default_rng(a.seed)
  order = rng.permutation(len(obs))
  held = order[: len(obs) // 5]
  train = order[len(obs) // 5:]
  print(f"{len(obs)} positions ({len(train)} to train, {len(held)} held out) in {time.time() - t0:.0f} s; "
        f"label mean {label.mean():+.3f}, sd {label.std():.3f}, nonzero {np.mean(label != 0):.2f}", flush=True)

  config = dataclasses.replace(presets.preset("chess", "cpu").network, attacks=a.attacks)
  if a.blocks:
    config = dataclasses.replace(config, blocks=a.blocks)
  if a.channels:
    config = dataclasses.replace(config, channels=a.channels, value_hidden=2 * a.channels)
  net = make_network(config, make_env("chess").num_actions)
  params, bn = net.init(jax.random.PRNGKey(a.seed), jnp.asarray(obs[:2]))
  if a.optimizer == "sgd":  # the preset's: chess `cpu` train.learning_rate 0.002, momentum 0.9, l2 1e-4
    opt, l2 = optax.sgd(a.lr or 0.002, momentum=0.9), 1e-4
  else:
    opt, l2 = optax.adam(a.lr or 1e-3), 0.0
  opt_state = opt.init(params)

  def loss(params, bn, x, y):
    (_, value), bn = net.apply(params, bn, x, True)
    return jnp.mean((value - y) ** 2) + l2_penalty(params, l2), bn

  @jax.jit
  def update(params, bn, opt_state, x, y):
    (_, bn), grads = jax.value_and_grad(loss, has_aux=True)(params, bn, x, y)
    updates, opt_state = opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), bn, opt_state

  @jax.jit
  def predict(params, bn, x):
    return net.apply(params, bn, x, False)[0][1]

  def report(n):
    value = np.concatenate([np.asarray(predict(params, bn, jnp.asarray(obs[held[i:i + 1024]])))
                            for i in range(0, len(held), 1024)])
    y = label[held]
    print(f"| {n} | {np.corrcoef(value, y)[0, 1]:.3f} | {np.mean((value - y) ** 2):.4f} | {np.var(y):.4f} |",
          flush=True)

  print(f"network {config}; optimizer {a.optimizer}, learning rate {a.lr or 'default'}; target {a.target}")
  print("| updates | held-out correlation | held-out MSE | label variance |\n|---|---|---|---|")
  checkpoints = {a.updates * k // 10 for k in (1, 3, 10)} | {100}
  for n in range(1, a.updates + 1):
    batch = rng.choice(train, a.batch)
    params, bn, opt_state = update(params, bn, opt_state, jnp.asarray(obs[batch]), jnp.asarray(label[batch]))
    if n in checkpoints:
      report(n)
  print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
  main()
