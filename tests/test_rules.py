import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import rules
from azjax.games import make_env
from conftest import batched_init, batched_step

PASS = 81


def _play(moves):
  env = make_env("go9")
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 1))
  for a in moves:
    state = batched_step(env)(state, jnp.array([a]))
  return state


def test_eyes_rule_keeps_pass_out_until_the_opponent_passes():
  legal = rules.make_legal_moves("go9", "eyes")
  state = _play([])
  assert bool(state.legal_action_mask[0, PASS])  # pgx: pass always legal
  assert not bool(legal(state)[0, PASS])
  np.testing.assert_array_equal(legal(state)[0, :PASS], state.legal_action_mask[0, :PASS])  # board moves untouched
  assert bool(legal(_play([40, PASS]))[0, PASS])  # black may answer white's pass with a pass
  assert bool(rules.make_legal_moves("go9", "pgx")(state)[0, PASS])
  chess = make_env("chess").init(jax.random.PRNGKey(0))
  assert rules.make_legal_moves("chess", "eyes")(chess) is chess.legal_action_mask  # other games: pgx's rules


def test_own_eyes_are_empty_points_surrounded_by_the_movers_stones():
  board = jnp.zeros(81, jnp.int32).at[jnp.array([1, 9])].set(1)  # black stones around the corner point 0
  board = board.at[jnp.array([79, 71])].set(-1)  # white stones around the corner point 80
  black, white = rules.own_eyes(board, jnp.int32(0), 9), rules.own_eyes(board, jnp.int32(1), 9)
  assert list(np.flatnonzero(black)) == [0] and list(np.flatnonzero(white)) == [80]


def test_true_eyes_ask_the_diagonals_and_false_eyes_stay_fillable():
  """search.go_eyes="true" (Pachi's and minigo's playout eye): an opponent stone on a diagonal is a fault, the
  edge one more, and two faults make a false eye, which the eye rule leaves to the search."""
  center, edge, corner = 40, 4, 0  # (4,4), (0,4), (0,0) on 9x9
  board = jnp.zeros(81, jnp.int32).at[jnp.array([31, 39, 41, 49, 3, 5, 13, 1, 9])].set(1)  # black around all three
  black = lambda b, eyes: np.flatnonzero(rules.own_eyes(b, jnp.int32(0), 9, eyes)).tolist()
  assert black(board, "simple") == black(board, "true") == [corner, edge, center]
  one_fault = board.at[30].set(-1)  # one white diagonal of the centre point: still an eye
  assert black(one_fault, "true") == [corner, edge, center]
  false = board.at[jnp.array([30, 50, 12, 10])].set(-1)  # two at the centre; one each at the edge and the corner
  assert black(false, "simple") == [corner, edge, center] and black(false, "true") == []
  # The eye rule with true eyes: black may fill the false eye at the centre and not a true one.
  state = _play([31, 30, 39, 50, 41, 80, 49, 79, 1, 78, 9, 77])  # black to move: around 40 (white at 30, 50) and 0
  simple = rules.make_legal_moves("go9", "pgx", fill_eyes=False)(state)[0]
  true = rules.make_legal_moves("go9", "pgx", fill_eyes=False, eyes="true")(state)[0]
  assert not bool(simple[center]) and bool(true[center]) and not bool(true[corner]) and not bool(simple[corner])
  with pytest.raises(ValueError, match="eyes='real': one of simple, true"):
    rules.make_legal_moves("go9", "eyes", eyes="real")


def test_pass_allowed_once_only_eye_filling_moves_remain():
  state = _play([])
  x = state._x
  # Black everywhere but two one-point eyes (0 and 80): the only legal board moves fill them.
  board = jnp.ones((1, 81), jnp.int32).at[0, jnp.array([0, 80])].set(0)
  mask = jnp.zeros((1, 82), bool).at[0, jnp.array([0, 80, PASS])].set(True)
  full = state.replace(legal_action_mask=mask, _x=x._replace(board=board))
  assert bool(rules.make_legal_moves("go9", "eyes")(full)[0, PASS])


def test_keeping_eyes_drops_only_the_movers_eye_fills_and_leaves_pass():
  """MoGo's rule (search.go_fill_eyes=False): black may not fill its own one-point eye; white may play there
  if it is legal for white; pass stays available, so a mover always has a move."""
  # Black: 1, 9 around the corner eye 0; 10 closes a second shape so the eye at 0 is not suicide to fill.
  state = _play([1, 80, 9, 79, 10, 78])
  assert bool(rules.own_eyes(state._x.board[0], state._x.color[0], 9)[0])  # black to move, 0 is its eye
  keep = rules.make_legal_moves("go9", "pgx", fill_eyes=False)(state)[0]
  fill = rules.make_legal_moves("go9", "pgx")(state)[0]
  assert bool(fill[0]) and not bool(keep[0])
  np.testing.assert_array_equal(np.delete(np.asarray(keep), 0), np.delete(np.asarray(fill), 0))
  assert bool(keep[PASS])
  # With the eyes pass rule too: pass stays out while other board moves remain.
  both = rules.make_legal_moves("go9", "eyes", fill_eyes=False)(state)[0]
  assert not bool(both[0]) and not bool(both[PASS]) and int(both.sum()) == int(keep.sum()) - 1
  # The opponent's view: for white the point 0 is no eye of its own (and filling it would be suicide).
  white = _play([1, 80, 9, 79, 10, 78, 20])
  assert not bool(rules.own_eyes(white._x.board[0], white._x.color[0], 9)[0])
  # A board of black's eyes only: every board move is an eye fill, so black may pass (and only pass).
  x = state._x
  board = jnp.ones((1, 81), jnp.int32).at[0, jnp.array([0, 80])].set(0)
  mask = jnp.zeros((1, 82), bool).at[0, jnp.array([0, 80, PASS])].set(True)
  full = state.replace(legal_action_mask=mask, _x=x._replace(board=board))
  only = rules.make_legal_moves("go9", "eyes", fill_eyes=False)(full)[0]
  assert list(np.flatnonzero(only)) == [PASS]


def test_area_ownership_is_pgx_score_on_random_finished_games():
  """KataGo's ownership target: the owners of the final board's points add up to pgx's own result."""
  env, n = make_env("go9"), 16
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(1), n))
  step, outcome, key = batched_step(env), np.zeros(n), jax.random.PRNGKey(2)
  while not bool(state.terminated.all()):
    key, k = jax.random.split(key)
    a = jax.random.categorical(k, jnp.where(state.legal_action_mask, 0.0, -jnp.inf).at[:, PASS].add(-3.0))
    state = step(state, a)
    outcome += np.asarray(state.rewards[:, 0])
  own = np.asarray(rules.final_ownership(state, 9))
  assert set(np.unique(own)) <= {-1.0, 0.0, 1.0} and (own == 0).any() and (np.abs(own) == 1).mean() > 0.8
  x = state._x
  black_is_0 = np.asarray(jnp.where(x.color == 0, state.current_player, 1 - state.current_player)) == 0
  margin = own.sum(-1) + np.where(black_is_0, -7.5, 7.5)  # player 0's area minus player 1's, after komi
  np.testing.assert_array_equal(np.sign(margin), outcome)
  assert (outcome == 1).any() and (outcome == -1).any()


def test_area_ownership_of_a_hand_made_board():
  board = np.zeros((9, 9), np.int32)
  board[:, 2] = 1  # a black wall on column 2: columns 0-1 are black's
  board[:, 6] = -1  # a white wall on column 6: columns 7-8 are white's; 3-5 touch both
  board[4, 4] = -1
  own = np.asarray(rules.area_ownership(jnp.asarray(board.reshape(-1)), 9)).reshape(9, 9)
  assert (own[:, :3] == 1).all() and (own[:, 6:] == -1).all() and own[4, 4] == -1
  assert (own[:, 3:6][board[:, 3:6] == 0] == 0).all()


def _liberties_by_flood_fill(board, size):
  """The reference: each stone's chain's liberty count by a plain flood fill (0 on empty points)."""
  out = np.zeros(size * size, np.int64)
  for p in np.flatnonzero(board):
    chain, todo, libs = {p}, [p], set()
    while todo:
      r, c = divmod(todo.pop(), size)
      for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        q = rr * size + cc
        if 0 <= rr < size and 0 <= cc < size:
          if board[q] == 0:
            libs.add(q)
          elif board[q] == board[p] and q not in chain:
            chain.add(q)
            todo.append(q)
    out[p] = len(libs)
  return out


@pytest.mark.parametrize("game,size,plies", [("go9", 9, 70), ("go", 19, 250)])
def test_liberty_planes_match_a_flood_fill_on_random_games(game, size, plies):
  """network.liberties (KataGo's input planes): 1, 2 or 3 liberties per stone, either colour, from the observation
  the network sees, equal to a flood fill of pgx's board, snakes and captures included."""
  env, n = make_env(game), 6
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(3), n))
  step, key = batched_step(env), jax.random.PRNGKey(4)
  for _ in range(plies):
    key, k = jax.random.split(key)
    state = step(state, jax.random.categorical(k, jnp.where(state.legal_action_mask, 0.0, -jnp.inf).at[:, -1].add(-9.)))
  planes = np.asarray(rules.go_liberty_planes(state.observation.astype(jnp.float32))).reshape(n, size * size, 3)
  boards = np.sign(np.asarray(state._x.board))
  counts = 0
  for b in range(n):
    want = _liberties_by_flood_fill(boards[b], size)
    np.testing.assert_array_equal(planes[b], np.stack([want == k for k in (1, 2, 3)], -1).astype(np.float32))
    counts += np.bincount(want[boards[b] != 0], minlength=5)[1:4]
  assert (counts > 0).all()  # every plane was exercised


def test_liberty_planes_of_a_hand_made_board():
  """A ring of black stones around one empty point, its outside filled by white: the whole ring is one chain with
  one liberty, its eye, counted once though four of its stones touch it."""
  board = np.zeros((9, 9), np.int32)
  board[0, 0:3] = 1; board[1, 0] = 1; board[1, 2] = 1; board[2, 0:3] = 1  # black ring around (1, 1)
  board[3, 0:3] = -1; board[0:3, 3] = -1  # white below and beside it: only (1, 1) stays free
  mine, theirs = jnp.asarray(board.reshape(-1) == 1), jnp.asarray(board.reshape(-1) == -1)
  planes = np.asarray(rules.liberty_planes(mine, theirs, 9)).reshape(9, 9, 3)
  assert (planes[..., 0][board == 1] == 1).all()  # black: one liberty, the eye
  assert planes[3, 0].tolist() == [0, 0, 0] and planes[1, 1].tolist() == [0, 0, 0]  # white: more than 3; empty


def test_chess_material_lead_is_the_movers_material_less_the_opponents_as_python_chess_counts_it():
  import chess
  from azjax.engines import pgx_private
  values = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
  rng, board, leads = np.random.default_rng(0), chess.Board(), set()
  for ply in range(400):  # random games, restarted when over; every 8th position checked
    board = chess.Board() if board.is_game_over() else board
    board.push(rng.choice(list(board.legal_moves)))
    if ply % 8 == 0:
      state = jax.tree.map(lambda x: x[None], pgx_private.from_fen(board.fen()))
      lead = sum(values[p.piece_type] * (1 if p.color == board.turn else -1) for p in board.piece_map().values())
      assert int(rules.chess_material_lead(state)[0]) == lead
      leads.add(lead)
  assert len(leads) >= 5  # captures on both sides, not only the starting balance


def test_adjudicated_rewards_give_the_game_to_the_side_ahead_by_the_margin():
  from azjax.engines import pgx_private
  fens = ["4k3/8/8/8/8/8/8/QR2K3 b - - 0 1",  # white 14 ahead, black to move
          "4k3/8/8/8/8/8/8/QR2K3 w - - 0 1",  # the same, white to move
          "r3k3/8/8/8/8/8/8/4K2N w - - 0 1"]  # black 2 ahead, white to move
  state = jax.tree.map(lambda *x: jnp.stack(x), *[pgx_private.from_fen(f) for f in fens])
  np.testing.assert_array_equal(rules.chess_material_lead(state), [-14, 14, -2])
  white = np.asarray(state.current_player) ^ np.array([1, 0, 0])  # pgx's player id of white in each game
  for margin, white_wins in ((1, [1, 1, -1]), (3, [1, 1, 0]), (15, [0, 0, 0])):
    rewards = np.asarray(rules.adjudicated_rewards(state, margin))
    np.testing.assert_array_equal(rewards[np.arange(3), white], white_wins)
    np.testing.assert_array_equal(rewards.sum(-1), 0)
  # Fischer and Kannan's expected score: 1 / (1 + 10^(-lead/4)) for the side ahead, as an outcome 2 score - 1,
  # whatever the margin.
  rewards = np.asarray(rules.adjudicated_rewards(state, 15, "logistic"))
  score = 1.0 / (1.0 + 10.0 ** (-np.array([14.0, 14.0, -2.0]) / 4.0))
  np.testing.assert_allclose(rewards[np.arange(3), white], 2.0 * score - 1.0, rtol=1e-5)
  np.testing.assert_allclose(rewards[2, white[2]], -0.52, atol=0.01)  # two pawns down: a 24% score
  np.testing.assert_allclose(rewards.sum(-1), 0, atol=1e-6)


def test_a_game_the_rules_end_on_the_caps_own_ply_keeps_the_rules_ending():
  # A mate, a threefold repetition or two passes on the cap's ply is what ended the game; only a game
  # still going at the cap (or pgx's own cap, a terminal draw with no other sign) is "cap".
  from azjax.engines.positions import position_for
  code = lambda game, state, ply, cap=0: rules.ENDINGS[int(rules.ending(game, jax.tree.map(lambda x: x[None], state),
                                                                        jnp.array([ply]), cap)[0])]
  mate = position_for("chess")
  for move in ("f2f3", "e7e5", "g2g4", "d8h4"):
    mate.play(move)
  assert mate.over and code("chess", mate.state, 4, 4) == "win" and code("chess", mate.state, 512) == "win"
  assert code("chess", mate.states[3], 3, 3) == "cap"  # still going when the config's cap stopped it
  knights = position_for("chess")
  for move in ("g1f3", "g8f6", "f3g1", "f6g8") * 2:
    knights.play(move)
  assert knights.over and code("chess", knights.state, 8, 8) == "repetition" == code("chess", knights.state, 512)
  drawn = knights.states[1].replace(terminated=jnp.bool_(True))  # ended with no mate, repetition or pass
  assert code("chess", drawn, 512) == "cap" and code("chess", drawn, 100) == "draw"
  assert code("go9", jax.tree.map(lambda x: x[0], _play([PASS, PASS])), 2, 2) == "double_pass"


@pytest.mark.parametrize("game,planes", [("chess", 6), ("go9", 1)])
def test_occupancy_is_the_board_the_movers_observation_shows(game, planes):
  """network.future_position's boards: +1 where the mover's observation shows one of its pieces (or stones), -1 an
  opponent's, 0 empty, point for point in the observation's frame (chess's is turned and flipped for black), after
  random plies with either side to move."""
  env, n = make_env(game), 6
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(5), n))
  step, key, movers = batched_step(env), jax.random.PRNGKey(6), set()
  for ply in range(41):
    key, k = jax.random.split(key)
    state = step(state, jax.random.categorical(k, jnp.where(state.legal_action_mask, 0.0, -jnp.inf).at[:, -1].add(-9.)))
    if ply >= 39:  # two consecutive plies: each game seen with either side to move
      obs = np.asarray(state.observation, np.int32).reshape(n, -1, state.observation.shape[-1])
      want = obs[..., :planes].sum(-1) - obs[..., planes:2 * planes].sum(-1)  # pgx: the mover's planes, then theirs
      got = np.asarray(rules.occupancy(game, state))
      np.testing.assert_array_equal(got, want)
      assert got.dtype == np.int8 and (got == 1).any() and (got == -1).any() and (got == 0).any()
      movers |= set(np.asarray(state.current_player).tolist())
  assert movers == {0, 1}
  with pytest.raises(ValueError, match="chess and Go only"):
    rules.occupancy("shogi", state)
