"""Independent check of azjax.chess_features (attack planes, policy_index) against python-chess.
Run from the repository root: python docs/results/learning/feature_check/check_features.py (about 80 s on a CPU);
its output is check_features.txt beside it. Written by a read-only review helper (section 78)."""
import sys, collections
import numpy as np
import jax, jax.numpy as jnp
import chess
import pgx
from pgx._src.games import chess as pgx_chess
from pgx.experimental.chess import to_fen, from_fen
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
from azjax import chess_features, chess_moves

FROM_PLANE = np.asarray(pgx_chess.FROM_PLANE)
VAL = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 1000}
PT = [None, chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING]
rng = np.random.default_rng(0)
env = pgx.make("chess")
init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
step1 = jax.jit(env.step)
import time; T0 = time.time()
log = lambda *a: print(f"[{time.time()-T0:.0f}s]", *a, flush=True)
azobs = jax.jit(jax.vmap(chess_moves.observe))
planes_fn = jax.jit(chess_features.attack_planes)
PI0, PI1 = chess_features.policy_index(False), chess_features.policy_index(True)

def real(s, color):  # pgx square (mover frame) -> python-chess square
  f, r = s // 8, s % 8
  return chess.square(f, r if color == 0 else 7 - r)

def obs_rc(sq, mover_white):  # python-chess square -> (row, col) of the mover's observation
  return (7 - chess.square_rank(sq) if mover_white else chess.square_rank(sq)), chess.square_file(sq)

def board_of(x):  # independent python-chess board from pgx's state (pieces + turn only) and pgx's to_fen
  color = int(x.color)
  b = chess.Board(None); b.turn = color == 0
  for s, v in enumerate(np.asarray(x.board)):
    if v:
      mine = bool(v > 0)
      b.set_piece_at(real(s, color), chess.Piece(PT[abs(int(v))], (color == 0) == mine))
  return b

def uci_of(a, x):
  color = int(x.color); src, plane = divmod(int(a), 73); dst = int(FROM_PLANE[src, plane])
  promo = ""
  if int(x.board[src]) == 1 and dst % 8 == 7:
    promo = "rbn"[plane // 3] if plane < 9 else "q"
  return chess.Move(real(src, color), real(dst, color), chess.Piece.from_symbol(promo).piece_type if promo else None)

def expected_planes(b):
  me, op = b.turn, not b.turn
  out = np.zeros((8, 8, 4), np.float32)
  for sq in chess.SQUARES:
    r, c = obs_rc(sq, b.turn)
    am, ao = b.attackers(me, sq), b.attackers(op, sq)
    out[r, c, 0], out[r, c, 1] = bool(am), bool(ao)
    p = b.piece_at(sq)
    if p is not None:
      own, oth = (am, ao) if p.color == me else (ao, am)
      cheapest = min((VAL[b.piece_type_at(s)] for s in oth), default=np.inf)
      hang = bool(oth) and (not own or cheapest < VAL[p.piece_type])
      out[r, c, 2 if p.color == me else 3] = hang
  return out

def divergence(b, planes, fen):
  """Where the pseudo-legal planes differ from what can legally be captured: pinned attackers, en passant."""
  legal_caps = collections.defaultdict(list)
  for m in b.legal_moves:
    if b.is_en_passant(m):
      stats["en passant capture legal (pawn not marked attacked)"] += 1
      ex.setdefault("ep", (fen, m.uci()))
    elif b.piece_at(m.to_square) is not None: legal_caps[m.to_square].append(m)
  for sq, p in b.piece_map().items():
    if p.color == b.turn: continue
    r, c = obs_rc(sq, b.turn)
    if planes[r, c, 1 - 0] >= 0 and planes[r, c, 0] and not legal_caps.get(sq) and p.piece_type != chess.KING:
      stats["opponent piece marked attacked, no legal capture (pin/check)"] += 1
      ex.setdefault("pin", (fen, chess.square_name(sq)))
ex = {}

NAMES = ["mover attacks", "opponent attacks", "mover en prise", "opponent en prise"]
stats = collections.Counter(); mism = []

def check_position(x, obs, planes, legal):
  color = int(x.color); fen = to_fen(pgx.chess.State(_x=x))
  b = chess.Board(fen); bi = board_of(x)
  stats["positions"] += 1; stats["white" if color == 0 else "black"] += 1
  if b.board_fen() != bi.board_fen() or b.turn != bi.turn: mism.append(("fen", fen, bi.fen())); return b, fen
  if b.is_check(): stats["in check"] += 1
  if any(m.promotion for m in b.legal_moves): stats["promotion available"] += 1
  divergence(b, planes, fen)
  # mutation sanity: a ranks-mirrored observation must NOT pass
  if not np.array_equal(np.asarray(planes_fn(jnp.asarray(obs[None, ::-1])))[0][::-1], expected_planes(b)): stats["mirrored obs caught"] += 1
  if b.ep_square is not None and b.has_legal_en_passant(): stats["en passant legal"] += 1
  # observation layout: planes 0-11 vs python-chess pieces
  exp = np.zeros((8, 8, 12))
  for sq, p in b.piece_map().items():
    r, c = obs_rc(sq, b.turn); exp[r, c, PT.index(p.piece_type) - 1 + (0 if p.color == b.turn else 6)] = 1
  if not np.array_equal(exp, obs[..., :12]): mism.append(("obs pieces", fen))
  # attack planes
  e = expected_planes(b)
  for r, c, k in zip(*np.nonzero(e != planes)):
    sq = chess.square(c, 7 - r if b.turn else r)
    mism.append(("plane", fen, NAMES[k], chess.square_name(sq), float(e[r, c, k]), float(planes[r, c, k])))
  # legal moves and policy_index (mover)
  acts = np.nonzero(legal)[0]
  moves = {uci_of(a, x): a for a in acts}
  if set(moves) != set(b.legal_moves): mism.append(("legal", fen, set(moves) ^ set(b.legal_moves)))
  for m, a in moves.items():
    stats["mover actions"] += 1
    cell, plane = divmod(int(PI0[a]), 73)
    if (divmod(cell, 8) != obs_rc(m.from_square, b.turn)) or plane != a % 73:
      mism.append(("policy_index(False)", fen, m.uci(), divmod(cell, 8), obs_rc(m.from_square, b.turn)))
    if divmod(int(PI1[a]) // 73, 8) != obs_rc(m.from_square, b.turn): stats["swapped index caught"] += 1
  return b, fen

def check_reply(x, obs, b, fen, x2, legal2):
  """Actions of the NEXT state (the reply), read with policy_index(True) in THIS observation's frame."""
  b2 = chess.Board(to_fen(pgx.chess.State(_x=x2)))
  for a in np.nonzero(legal2)[0]:
    m = uci_of(a, x2)
    assert m in b2.legal_moves
    cell, plane = divmod(int(PI1[a]), 73); rc = divmod(cell, 8)
    stats["reply actions"] += 1
    want = obs_rc(m.from_square, b.turn)  # from-square in the frame of the CURRENT (pre-reply) observation
    p = b.piece_at(m.from_square)
    if rc != want or plane != a % 73 or p is None or p.color == b.turn or obs[rc[0], rc[1], 6 + PT.index(p.piece_type) - 1] != 1:
      mism.append(("policy_index(True)", fen, b2.fen(), m.uci(), rc, want))

def pick(x, legal):
  acts = np.nonzero(legal)[0]
  if len(acts) == 0: return 0
  w = np.ones(len(acts))
  for i, a in enumerate(acts):
    src, plane = divmod(int(a), 73); dst = int(FROM_PLANE[src, plane])
    pawn = int(x.board[src]) == 1
    if pawn: w[i] *= 4
    if int(x.board[dst]) < 0: w[i] *= 3
    if pawn and dst == int(x.en_passant): w[i] *= 50
    if pawn and dst % 8 == 7: w[i] *= 20
    if pawn and abs(dst - src) == 2: w[i] *= 3  # double steps: en passant chances
  return int(rng.choice(acts, p=w / w.sum()))

B, PLIES = 4, 100
state = init(jax.random.split(jax.random.PRNGKey(1), B))
take = lambda tree, i: jax.tree_util.tree_map(lambda v: np.asarray(v[i]), tree)
prev = [None] * B
for t in range(PLIES):
  obs = np.asarray(state.observation); leg = np.asarray(state.legal_action_mask)
  planes = np.asarray(planes_fn(state.observation))
  az = np.asarray(azobs(state._x, state._x.color))
  term = np.asarray(state.terminated)
  acts = np.zeros(B, np.int32)
  for i in range(B):
    if term[i]: prev[i] = None; continue
    x = take(state._x, i)
    if not np.array_equal(az[i], obs[i]): mism.append(("azjax observe != pgx observation", to_fen(pgx.chess.State(_x=x))))
    if prev[i] is not None: check_reply(*prev[i], x, leg[i])
    b, fen = check_position(x, obs[i], planes[i], leg[i])
    prev[i] = (x, obs[i], b, fen)
    acts[i] = pick(x, leg[i])
  state = step(state, jnp.asarray(acts))
  if t % 10 == 0: log("ply", t, dict(stats))

# Hand-made positions, both colours: pins, x-rays, en passant, castling, promotions, checks.
FENS = [
  "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",           # en passant available to white
  "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 2",           # en passant available to black
  "4k3/4r3/8/8/8/8/4N3/4K2n w - - 0 1",          # white knight pinned, still "attacks"
  "4K3/4R3/8/8/8/8/4n3/4k2N b - - 0 1",          # mirror, black to move
  "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",        # castling
  "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
  "4k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1",           # promotions near
  "4k3/1P6/8/8/8/8/6p1/4K3 b - - 0 1",
  "3qk3/8/8/3r4/8/8/3R4/3QK3 w - - 0 1",         # x-ray battery on the d-file
  "3qk3/8/8/3R4/8/8/3r4/3QK3 b - - 0 1",
  "4k3/8/8/1b6/8/8/4P3/4K3 w - - 0 1",           # check
  "4k3/8/5B2/8/8/8/8/4K3 b - - 0 1",
]
for fen0 in FENS:
  log(fen0)
  s = from_fen(fen0); x = s._x
  obs = np.asarray(s.observation)[None]
  pl = np.asarray(planes_fn(jnp.asarray(obs)))[0]
  b, fen = check_position(x, obs[0], pl, np.asarray(s.legal_action_mask))
  # replies: step every legal move once and check the reply mapping
  for a in np.nonzero(np.asarray(s.legal_action_mask))[0]:
    s2 = step1(s, jnp.int32(a))
    if not bool(s2.terminated): check_reply(x, obs[0], b, fen, s2._x, np.asarray(s2.legal_action_mask))

print(dict(stats))
print("mismatches:", len(mism)); print("examples:", ex)
for m in mism[:40]: print(m)
