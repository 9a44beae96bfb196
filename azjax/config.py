"""Configuration: frozen, keyword-only dataclasses, checked at construction.

A `Config` has one section per part of the program. Every field has a type and
a default; `describe()` lists them for `--help`, `apply_overrides` parses
`section.field=value` strings, and `validate` raises `ConfigError` naming the
field, the value and what is allowed. Paper constants live in `presets.py`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from typing import Any, Sequence

GAMES = ("tictactoe", "connect_four", "othello", "go9", "go", "chess", "shogi")
SEARCH_ALGORITHMS = ("puct", "gumbel")
OPTIMIZERS = ("sgd", "adam")
INFERENCE_DTYPES = ("float32", "bfloat16")
GO_PASS_RULES = ("pgx", "eyes")  # rules.py
GO_EYE_RULES = ("simple", "true")  # rules.own_eyes
UPDATE_LOOPS = ("auto", "scan", "unrolled")
ADJUDICATE_SCORES = ("margin", "logistic")  # selfplay.adjudicate_score
POLICY_HEADS = ("flat", "planes")
COMPACT_TREES = ("auto", "on", "off")  # search.tree_width
REPLAY_SAMPLINGS = ("lanes", "window")  # replay.sampling
GUMBEL_ACTS = ("policy", "halving")  # search.gumbel_act
ENGINE_GAMES = ("go9", "go", "chess", "shogi")  # the games a real engine plays (engines.match.OPPONENTS)


class ConfigError(ValueError):
  """An invalid configuration: names the field, the value and what is allowed."""

  def __init__(self, field: str, value: Any, allowed: str):
    self.field, self.value, self.allowed = field, value, allowed
    super().__init__(f"{field}={value!r} is invalid: {allowed}")


def _section(cls):
  return dataclasses.dataclass(frozen=True, kw_only=True)(cls)


# The positions a chess or Go observation holds, the current one first: AlphaZero's and AlphaGo Zero's T = 8
# ([AZ] Methods "Representation", [AGZ] Methods "Neural network architecture"; pgx's observations hold as many).
PAPER_HISTORY = 8

# KataGo's future-position target (network.future_position): the boards 8 and 32 plies later, their squared
# errors weighed 1 and 0.25 ("the further out targets should be weighted a little less due to them being higher
# entropy"), summed over the points and divided by the square root of their count (KataGo's
# cpp/dataio/trainingwrite.cpp, "Future position"; python/katago/train/metrics_pytorch.py, loss_futurepos_samplewise).
FUTURE_PLIES = (8, 32)
FUTURE_WEIGHTS = (1.0, 0.25)

# The material-change target's horizons (network.material_change, chess): the mover's material lead 2 and 8 plies
# later (its own move and the reply; a short exchange) less its lead now. This project's choice, not a paper's: even
# distances keep the player to move, so both leads are the same side's.
MATERIAL_PLIES = (2, 8)


@_section
class NetworkConfig:
  blocks: int = 2  # residual blocks
  channels: int = 32  # filters per convolution
  value_hidden: int = 64  # width of the value head's hidden layer
  policy_channels: int = 2  # 1x1 filters of the flat policy head (AlphaGo Zero: 2); the planes head uses `channels`
  # Precision of the network in search (self-play, arena, engines): float32 (the paper) | bfloat16.
  # Training is always float32.
  inference_dtype: str = "float32"
  # Go only: KataGo's auxiliary ownership target (Wu 2019, arXiv:1902.10565, section 4.1: "ownership and
  # score targets", 1.65x less compute to the same strength together). A 1x1 head predicts who owns each
  # point at the end of the game; its loss, this weight times the mean per-point cross-entropy, joins
  # eq. 1 (KataGo's weight: 1.5). 0 = no head (the papers).
  ownership: float = 0.0
  # Lc0's moves-left head (MLH): a head predicting the plies left to the game's end, trained with a Huber
  # loss (this weight) on the plies each position's game actually lasted after it; the search reads it
  # through search.moves_left_slope. 0 = no head (the papers).
  moves_left: float = 0.0
  # KataGo's auxiliary policy target (Wu 2019, arXiv:1902.10565, section 4.3: "auxiliary policy targets"): the
  # policy head's last layer, twice as wide, also predicts the opponent's reply, the search policy of the next
  # position of the same game; this weight times its cross-entropy joins eq. 1 (KataGo's weight: 0.15). Search
  # reads only the policy's half. Where the reply has no policy target (the game's last move, a fast search) the
  # term leaves the position out. 0 = the papers' policy head.
  opponent_policy: float = 0.0
  # Chess and Go: KataGo's future-position target (its training data's "futurepos", cpp/dataio/trainingwrite.cpp;
  # the loss `loss_futurepos_samplewise` in python/katago/train/metrics_pytorch.py): a 1x1 head predicts, for each
  # point, who will hold it FUTURE_PLIES[0] and [1] plies later (+1 the mover, -1 the opponent, 0 empty; in chess
  # any piece), a tanh each, trained by squared error weighed FUTURE_WEIGHTS over the points' count's square
  # root, times this weight (KataGo's: 0.25). A square whose piece is taken, moved or kept is what the board
  # later shows; the search never reads the head. Past the game's end, its last stored position with the same
  # player to move (KataGo: the final board, 1 or 2 plies later). 0 = no head (the papers).
  future_position: float = 0.0
  # Chess: the material-change target (this project's; no paper has it). A head like the value head predicts how
  # the mover's material lead (pawn 1, knight and bishop 3, rook 5, queen 9) will change MATERIAL_PLIES plies later
  # in its own self-play game; this weight times its squared error, in minor pieces (3 points), averaged over the
  # horizons, joins eq. 1. Why: the outcome a game gives the value does not carry the tactics, a capture available
  # now hardly moves it (docs/results/learning, section 41), where this target is the few plies' material swing
  # itself; labels come from self-play, like the adjudication's material count. The search never reads the head.
  # Past the game's end, its last stored position with the same player to move. 0 = no head (the papers).
  material_change: float = 0.0
  # KataGo's global pooling (Wu 2019, arXiv:1902.10565, section 4.2 and appendix A; 1.6x less compute to the
  # same strength): each residual block adds to its first convolution's output a bias computed from that
  # output's per-channel mean and max over the board, and the value head (and the moves-left and material heads) reads
  # the per-channel mean and max of a 1x1 convolution of the trunk instead of every point of one plane.
  # Information then crosses the board in one block (a material count in chess, a whole-board score in
  # Go). False = the papers' network.
  global_pooling: bool = False
  # Go only: three more input planes, a 1 where a stone's chain has exactly 1, 2 or 3 liberties (KataGo's
  # game-specific input features, Wu 2019, arXiv:1902.10565, appendix A; AlphaGo's liberty planes, Silver et al.
  # 2016, Extended Data Table 2). Computed from the observation's current stones inside the network, so replay,
  # search and engines are unchanged. A 3x3 convolutional net counts the liberties of a large chain only slowly
  # (KataGo's author: "pretty difficult for a neural net"). False = the papers' input (AlphaGo Zero: stones only).
  liberties: bool = False
  # Chess only: four more input planes, the squares each side attacks and each side's pieces en prise
  # (chess_features.py; Giraffe's attack and defend maps, Lai 2015, arXiv:1509.01549). Computed from the
  # observation inside the network, as the liberties are. False = the papers' input.
  attacks: bool = False
  # Chess and Go only: how many positions of the observation's history the network reads, the current one first
  # (PAPER_HISTORY: the papers' T = 8, "the last 8 positions"). Fewer drops the older positions' planes before the
  # first convolution and keeps the constant planes (chess: colour, move count, castling, no-progress count; Go:
  # colour). The papers give the history to see repetitions (chess, shogi) and ko (Go); pgx's legal moves and its
  # repetition planes of the current position keep both rules with 1. The first convolution of a 2x32 chess
  # network reads 119 + 4 planes, about as many FLOPs as its whole trunk: with 1, a step of the chess cpu preset
  # costs 0.78 of its time, but its network lost to the preset's at equal steps (0.266) and did not beat it at
  # equal time (0.430); with 2 (the position before shows what just moved) it beat the eight positions 0.629 and
  # 0.605 at equal steps on two seeds, and the chess cpu preset reads 2 (presets.py; docs/results/learning,
  # sections 58-59). 8 = the papers.
  history: int = PAPER_HISTORY
  # The policy head. "flat": AlphaGo Zero's, a 1x1 convolution of policy_channels filters and a fully connected
  # layer to every action (Go's in every paper). "planes" (chess only): AlphaZero's chess policy, a rectified,
  # batch-normalised 3x3 convolution of `channels` filters, then a 1x1 convolution to 73 planes per square, each
  # logit read at the square its move starts from (arXiv:1712.01815, Methods "Representation" and Table S2: "We
  # also tried using a flat distribution over moves for chess and shogi; the final result was almost identical
  # although training was slightly slower"). The planes share one move's weights across the board, where the flat
  # layer learns each of 4,672 moves alone.
  policy_head: str = "flat"


@_section
class SearchConfig:
  algorithm: str = "puct"  # puct (the paper) | gumbel (Gumbel MuZero)
  num_simulations: int = 32  # self-play's search (and play's, unless play_simulations)
  # Simulations a move at play: evaluation games, gating, matches and the UCI/USI/GTP engines (the top of their
  # clock's ladder); 0 = num_simulations. AlphaZero searched far longer at play than in self-play (800
  # simulations a self-play move; its matches gave 1 minute a move [AZ]). A search of Gumbel MuZero's 16 considered
  # moves at 16 simulations visits each once: a one-ply search (docs/results/learning, section 38).
  play_simulations: int = 0
  c_init: float = 1.25  # PUCT exploration constants
  c_base: float = 19652.0
  dirichlet_alpha: float = 0.0  # puct only: 0 = the game's own alpha (games.py)
  dirichlet_fraction: float = 0.25  # puct only (Gumbel search explores by its own Gumbel noise)
  unvisited_value: float = 0.0  # puct: Q of an unvisited move; 0 = AlphaGo Zero Methods, -1 = AlphaZero pseudocode
  # Go only: pgx (pass always legal, the papers' rules) | eyes (pass only after the opponent passed or
  # when every other move fills one's own eye; rules.py cites it). Against the early-pass collapse.
  go_pass: str = "pgx"
  # Go only: False keeps moves that fill one's own one-point eye out of the search (MoGo's playout rule, the
  # other half of go_pass=eyes; rules.py). True: every legal move (the papers). Measured on go9's cpu preset:
  # with go_eyes=simple it lost 10-54 to the same run without it at 1200 steps (docs/results/learning, section
  # 10); with go_eyes=true it won 47-17 and 50-14 on two seeds (sections 21, 23): on in go9's cpu preset.
  go_fill_eyes: bool = True
  # Go only: which points go_pass=eyes and go_fill_eyes count as one's own eyes: simple (every neighbour one's
  # own stone, false eyes too) | true (also at most one fault on the diagonals: Pachi's and minigo's playouts).
  # Trained on go9 with go_fill_eyes=false: 0.73 and 0.78 head to head against the run without the rule (two
  # seeds, paired), where simple eyes lost 0.16; on in go9's cpu preset (docs/results/learning, sections 21, 23).
  go_eyes: str = "simple"
  random_symmetry: bool = False  # Go only: each evaluation sees a random rotation/reflection [AGZ] (symmetry.py)
  gumbel_scale: float = 1.0  # gumbel only
  # Gumbel only: how far the completed Q-values move the prior (Danihelka et al. 2022, eq. 8's sigma, here mctx's
  # qtransform_completed_by_mix_value): logits + (maxvisit_init + the most visits of a child) * value_scale * Q,
  # Q min-max rescaled to [0, 1] over the node's children. The same sigma picks the moves sequential halving keeps
  # and the improved policy (the policy target, and the move played). The defaults are mctx's (0.1, 50). As the
  # visits grow, Q outweighs the prior; a smaller value_scale keeps a strong prior's say against a weak value.
  # Measured on chess (docs/results/learning, section 54): 0.03 at play keeps a 1,024-simulation search's tactics
  # (free material taken 0.70-0.73 against 0.58-0.63 at 0.1); in training it weakens the policy target (search KL
  # from the prior a tenth of 0.1's) and the runs fell behind the preset, so the presets keep 0.1.
  gumbel_value_scale: float = 0.1
  gumbel_maxvisit_init: float = 50.0
  # Children of a search node: its legal moves, up to the game's most (on), or every action (off); auto = on
  # where that bound is far below the action count (chess, shogi), so the tree shrinks (search.tree_width).
  compact_tree: str = "auto"
  max_considered_actions: int = 16  # gumbel only
  # Where a move is drawn from (self-play, agents, engines): False, the search policy on the moves the search
  # visited, as Gumbel MuZero plays only a move its Sequential Halving visited (Danihelka et al. 2022, Algorithm 2);
  # True, on every move. Under PUCT both are the visit counts. Gumbel's improved policy also weighs moves no
  # simulation reached, by a completed Q mixed from the root's value, which tops every visited Q where the search
  # found each move worse than the network thought: a 4-simulation fast search then played an unsearched move at
  # 14% of one go9 network's late plies (docs/results/learning, section 67). True is this library before that
  # section, and the cpu presets' setting (presets._CPU_PLAY_UNVISITED, with what was measured on go9 and chess).
  play_unvisited: bool = False
  # Which move a Gumbel search plays. "policy": one drawn from the improved policy (`play_unvisited` says over which
  # moves), sampled for selfplay.temperature_plies plies and then greedy or at selfplay.endgame_temperature: this
  # library's. "halving": Gumbel MuZero's, the winner of its Sequential Halving, argmax of g + logits + sigma(q) over
  # the most visited of the moves it considered (Danihelka et al. 2022, Algorithm 2 and section 4; mctx's
  # PolicyOutput.action): with self-play's Gumbel noise g a sample, at play (no noise) the best. Then the
  # temperature fields do not act: the move is the only one with weight. Playout-cap randomisation's fast plies
  # search without noise (KataGo's cheap searches; selfplay.fast_noise), so there halving plays the noise-free
  # winner: on go9's cpu preset three plies in four, and about three new games in four share their first move until
  # a full search's noise parts them (the "policy" draw samples those plies at the temperature). Go9's cpu preset
  # plays halving: longer self-play games on three seeds, about level against GNU Go (presets._CPU_GUMBEL_ACT;
  # docs/results/learning, sections 74-76); on chess level.
  gumbel_act: str = "policy"
  # Per-ply discount of values: 1 in the papers (a win is a win). Below 1, a win in fewer plies is worth more,
  # in the search (mctx's discount, as MuZero's) and in the value target (z * discount^(plies to the end - 1),
  # replay.py): a network that wins on material against a weak mover but never mates (chess's draws against
  # random, docs/results/learning, section 9) learns that the shorter win is the better one, the aim of Lc0's
  # moves-left head. The network's values are then discounted ones, so agents play with the run's discount.
  # Measured at 0.99 (docs/results/learning, section 11): shogi 0.926 against random (128 games) where 1 made
  # 0.816, on in shogi's cpu preset; chess 0.824 against the preset's 0.85-0.89, off there.
  discount: float = 1.0
  # Lc0's moves-left utility (src/search/classic/search.cc, MEvaluator): with network.moves_left, a child's Q
  # in the search gains clip(slope * (M_child - M_parent), +-max_effect) * -sign(Q) * (1.6521|Q| - 0.6521 Q^2)
  # where |Q| of the parent exceeds the threshold: the shorter win, the longer loss, without discounting the
  # values the network learns (search.discount does). 0 = off (the papers); lc0's defaults are 0.0027, 0.0345, 0.
  moves_left_slope: float = 0.0
  moves_left_max_effect: float = 0.0345
  moves_left_threshold: float = 0.0
  # The value of a drawn end (stalemate, repetition, the fifty-move rule, insufficient material, a length cap)
  # inside a search, for the player to move at its root, and minus that for the other player: Lc0's draw score
  # ("contempt", --draw-score-sidetomove, in hundredths of a win there). 0 = the papers (a draw is worth 0).
  # Below 0 the searcher avoids the draws its tree reaches, against a weaker opponent; the values the network
  # learns stay the games' outcomes. Measured in docs/results/learning, section 17.
  draw_value: float = 0.0
  # Chess: a move that repeats a position ends its branch as a draw inside the search (a twofold repetition)
  # where the whole cycle lies inside the tree, 4 or more plies below the root, so a searcher that is ahead looks
  # for progress instead of shuffling back into positions from which the opponent completes a threefold
  # repetition its tree does not see coming. Lc0's rule (--two-fold-draws, on by default at play since v0.26.2;
  # SearchWorker::GetRepetitions: depth >= 4 and depth >= the plies since the position's previous occurrence):
  # a return to a position first seen before the root is only the game's second occurrence, and play goes on.
  # False = the papers (only pgx's threefold ends a line); the games keep the real rule. Section 37 of
  # docs/results/learning measured an earlier form that drew every return (fewer repetitions, no measurable
  # gain against random); section 77 has the change.
  twofold_draw: bool = False
  # KataGo's score utility (Wu 2019, arXiv:1902.10565; search.py's SCORE_* constants cite the rest), Go with an
  # ownership head: each value in the search gains dynamic * f((s - c) / (0.75 sqrt A)) + static * f(s / (2 sqrt
  # A)), f = (2 / pi) atan, s the expected final margin (the ownership head's; the board's at a game's end), c the
  # root's. A won or lost position, whose value is flat, then still ranks its moves by the points they keep.
  # 0, 0 = the papers (values are outcomes only); KataGo's GTP defaults: 0.3 and 0.1. The network learns the same.
  score_utility: float = 0.0  # dynamic (KataGo's dynamicScoreUtilityFactor)
  score_utility_static: float = 0.0  # static (staticScoreUtilityFactor)

  @property
  def simulations_at_play(self) -> int:
    return self.play_simulations or self.num_simulations


@_section
class SelfPlayConfig:
  batch_size: int = 64  # games played in lockstep (all devices together)
  chunk_plies: int = 16  # plies played per train_step
  temperature_plies: int = 30  # sample moves by the search policy before this ply; after, endgame_temperature
  # From temperature_plies on, moves are drawn in proportion to weights^(1 / T) at this T (Lc0's --temp-endgame,
  # LeelaChessZero/lc0 pull 568; its issue 237 tried 0.45 so that self-play still converts won endings and
  # learns drawn ones). 0 = the most visited move (the papers). The weights are the search policy: visit
  # counts under PUCT, as in Lc0, but Gumbel's improved policy under Gumbel search, where every legal move
  # keeps some weight, so 0.45 is Lc0's number on a different distribution. At most 1 (a choice: above it
  # the endgame would be played more randomly than the opening).
  endgame_temperature: float = 0.0
  max_plies: int = 0  # length cap (game over, scored a draw); 0 = the game's own rules
  # Material adjudication at the length cap (chess; Zeta36/chess-alpha-zero, src/chess_zero/env/chess_env.py,
  # ChessEnv.adjudicate, at its max_game_length): a self-play game stopped by max_plies or pgx's own 512-ply cap
  # scores as a win for the side ahead by at least this many points of material (pawn 1, knight and bishop 3, rook
  # 5, queen 9; rules.CHESS_PIECE_VALUES) and a draw otherwise. Its values then learn what material is worth where
  # weak self-play rarely converts it. 0 = off: the cap is a draw (the papers). Evaluation games keep the rules.
  # Measured on chess's cpu preset (cap 160, margin 3; docs/results/learning): alone no gain (section 35); with
  # network.attacks a clear one (section 36), so the chess cpu preset has both.
  adjudicate_material: int = 0
  # How an adjudicated game scores: "margin" (Zeta36, above) a win for the side ahead by adjudicate_material points,
  # else a draw; "logistic" the expected score of the material lead, 1 / (1 + 10^(-lead/4)) for the side ahead
  # (Fischer and Kannan 2007, from 405,460 computer games: chessprogramming.org, "Pawn Advantage, Win Percentage,
  # and Elo"; rules.PAWNS_PER_DECADE), as an outcome in [-1, 1]: +-0.28 a pawn up, +-0.70 a piece, +-0.99 a queen.
  # Every capped game then labels its values with how much material each side keeps, not only leads of the margin.
  # Measured on chess's cpu preset, seed 0, 400 steps (docs/results/learning, section 57): level with the margin
  # head to head (0.516), and the value no closer to material; the preset keeps "margin".
  adjudicate_score: str = "margin"
  # Playout-cap randomisation (KataGo: Wu 2019, arXiv:1902.10565, section 3.1): each ply is searched in full
  # with this probability and its positions train the policy and the value; otherwise every game gets a
  # search of `fast_simulations` without root noise (`fast_noise`) and plays its move (trained on as `record_fast`
  # says). One coin per ply, shared by the games in lockstep and by a sweep's seeds (selfplay.playout_coins).
  # 1.0 = every move searched in full (the papers); KataGo: 0.25.
  full_search_fraction: float = 1.0
  fast_simulations: int = 0  # the fast search's simulations (KataGo: 100 against 600); used when fraction < 1
  # Whether the fast search draws root noise as the full one does (Dirichlet under PUCT, Gumbel under Gumbel).
  # False: KataGo's cheap searches, without it; the presets'. Then under search.gumbel_act=halving a fast ply plays
  # the noise-free winner, the same move in every game at the same position, since halving's Gumbel noise is its
  # move's only sample: a trained go9 network's 64 games from the empty board shared one opening through every run
  # of fast plies (docs/results/learning, section 76). True: every search samples its move as Gumbel MuZero's do;
  # trained on go9 seed 4 to step 3200 (section 77): level before step 2000, ahead at 2400 and 3200; one seed.
  fast_noise: bool = False
  # Whether a fast-search ply goes to replay. True: it trains the value only (its policy target is empty), with
  # train.q_ratio's q from its small search; this library's rule since playout caps came, and the cpu presets'.
  # False: KataGo's, "Only turns with a full search are recorded for training" (Wu 2019, section 3.1): the fast
  # plies only buy more games, and so more outcomes, per second. Then a step records about full_search_fraction as
  # many positions, so `train.updates_per_step` and `replay.window` scaled by it keep each position's sample count
  # and age. On chess's cpu preset so scaled (docs/results/learning, section 71): twice the steps an hour, far
  # behind at equal steps (0.176, 0.141) and level at equal time on two seeds (0.605, 0.395; at the end 0.492,
  # 0.453), so the presets keep True. (Not with the targets that count plies between recorded positions:
  # search.discount < 1, network.moves_left, train.q_lambda, network.opponent_policy, network.future_position,
  # network.material_change.)
  record_fast: bool = True
  # Resignation (AlphaGo Zero, Methods "Self-play"): a player resigns when its root value and its best child's
  # value are below v_resign, chosen automatically from the check games, where resignation is off, so that
  # at most `resign_false_positives` of their players who won or drew would have resigned (selfplay.py).
  resign: bool = False  # off: every game is played out (the AlphaZero pseudocode; its papers resign only at play)
  resign_check_fraction: float = 0.1  # [AGZ] "resignation is disabled in 10% of self-play games"
  resign_false_positives: float = 0.05  # [AGZ] "keep the fraction of false positives below 5%"
  # How many of its own moves in a row a player's value must stay below v_resign before it resigns; the
  # calibration counts a false positive by the same rule. 1 = AlphaGo Zero (one move). KataGo resigns only
  # after the value says so on `resignConsecTurns` consecutive turns (3 in its example configs; cpp/program/
  # play.cpp), so that one search's dip does not end a game.
  resign_turns: int = 1


@_section
class ReplayConfig:
  window: int = 16384  # positions kept (most recent first), split evenly over game slots
  # Store positions compactly and exactly (replay.Codec): bits for 0/1 planes and legal moves, the
  # policy's nonzero entries only. False stores them as they come, in the game's dtypes.
  compact: bool = True
  # How a minibatch weighs the window's positions. "lanes": every game slot's lane gives the same number of rows, so a
  # position in a lane that holds fewer labelled positions weighs more (every run before results section 70).
  # "window": each row weighted by its lane's count, so every labelled position counts alike, as AlphaGo Zero's
  # uniform draw ("Each mini-batch of data is sampled uniformly at random from all positions of the most recent
  # 500,000 games", AlphaGo Zero, Methods); the `paper` preset's. (replay.sample)
  sampling: str = "lanes"


@_section
class TrainConfig:
  batch_size: int = 256  # positions per update (all devices together)
  updates_per_step: int = 4  # optimiser updates per train_step
  optimizer: str = "sgd"  # sgd (momentum, the paper) | adam
  learning_rate: float = 0.2
  lr_boundaries: tuple[int, ...] = ()  # update counts where the learning rate drops
  lr_decay: float = 0.1  # factor applied at each boundary
  momentum: float = 0.9  # sgd only
  l2: float = 1e-4  # c in eq. 1
  num_steps: int = 100  # train_steps in a run
  augment: bool = False  # Go only: each sampled position under a random rotation/reflection [AGZ] (symmetry.py)
  # Lc0's q_ratio (lczero-training, tf/tfprocess.py): each position's value target is q_ratio * q + (1 - q_ratio)
  # * z, q the value its search gave its best move (Lc0's best_q), z the outcome. 0 = the papers (z alone).
  q_ratio: float = 0.0
  # KataGo's short-term value target (lightvector/KataGo docs/KataGoMethods.md, "Short-term Value and Score Targets"):
  # q_ratio's q becomes (1 - l) sum_k l^k q_(t+k), this and the game's later searches' values for this mover, plus
  # l^(plies to the end) z; a mean horizon of 1 / (1 - l) plies. KataGo trains auxiliary heads on it (l for about 6,
  # 16 and 50 turns on 19x19); here it is the q that q_ratio mixes into the value target. 0 = Lc0's q alone.
  q_lambda: float = 0.0
  # The value term's weight in eq. 1, (z - v)^2 against the policy's cross-entropy: 1 = the papers. Lc0 weighs
  # the two separately (lczero-training, tf/tfprocess.py: value_loss_weight); AlphaGo Zero's supervised run
  # weighed the value low against overfitting. The weight scales the value's gradient through the shared trunk.
  value_weight: float = 1.0
  # The updates of a train_step as a loop (scan: what accelerators run) or written out (unrolled: XLA:CPU
  # runs gradient convolutions in loops ~60x slower); auto = unrolled on CPU, scan elsewhere.
  update_loop: str = "auto"


@_section
class RunConfig:
  log_every: int = 10  # train_steps between metric read-backs
  checkpoint_every: int = 50
  eval_every: int = 0  # 0 = evaluate only at the end
  eval_games: int = 64  # games per opponent per evaluation (pairs of one opening, colours swapped); 0 = none
  eval_pool: int = 2  # earlier evaluated checkpoints each evaluation also plays
  eval_mcts_simulations: int = 0  # > 0 adds pure MCTS (random rollouts) with this many simulations as an anchor
  # > 0: each evaluation of a run (not a sweep) also plays this many games against the game's real engine, an
  # anchor nobody here wrote (engines.match.anchor_engine: GNU Go level 1, Stockfish skill 0 at depth 1,
  # Fairy-Stockfish skill 0); records in engine/step<N>/. Go, chess and shogi; the engine must be installed.
  eval_engine_games: int = 0
  eval_opening_plies: int = 2  # uniformly random first plies, so evaluation games differ
  keep_checkpoints: int = 3
  # > 0: the run stops at the first logged step after this many minutes (wall clock from the start of this
  # invocation, compile included), checkpointed there, and `--resume` continues it exactly. For a time-limited
  # machine (a Colab session) or a fixed time budget; 0 = train train.num_steps. Runs, not sweeps.
  max_minutes: float = 0.0
  # Gating [AGZ] "Evaluator": at each evaluation the trained network plays the one self-play uses,
  # and replaces it only if it scores above gate_score. 0 games = off: AlphaZero "maintains a
  # single neural network that is updated continually" [AZ], so self-play always uses the latest.
  gate_games: int = 0  # [AGZ]: 400 games
  gate_score: float = 0.55  # [AGZ] "wins by a margin of >55% (to avoid selecting on noise alone)"


@_section
class Config:
  game: str = "tictactoe"
  seed: int = 0
  network: NetworkConfig = dataclasses.field(default_factory=NetworkConfig)
  search: SearchConfig = dataclasses.field(default_factory=SearchConfig)
  selfplay: SelfPlayConfig = dataclasses.field(default_factory=SelfPlayConfig)
  replay: ReplayConfig = dataclasses.field(default_factory=ReplayConfig)
  train: TrainConfig = dataclasses.field(default_factory=TrainConfig)
  run: RunConfig = dataclasses.field(default_factory=RunConfig)

  def __post_init__(self):
    validate(self)  # an invalid Config cannot exist

  @property
  def lane_size(self) -> int:
    """Replay positions owned by each game slot."""
    return self.replay.window // self.selfplay.batch_size

  def replace(self, **sections) -> "Config":
    return dataclasses.replace(self, **sections)

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)

  def to_json(self) -> str:
    return json.dumps(self.to_dict(), indent=2, sort_keys=True)


SECTIONS = tuple(f.name for f in dataclasses.fields(Config) if dataclasses.is_dataclass(f.default_factory))


def _field_type(cls, name: str):
  return typing.get_type_hints(cls)[name]


def _parse(text: str, typ, path: str):
  """Parses a command-line string as `typ`, or raises ConfigError."""
  try:
    if typ is bool:
      if text.lower() in ("1", "true", "yes"):
        return True
      if text.lower() in ("0", "false", "no"):
        return False
      raise ValueError
    if typ in (int, float, str):
      return typ(text)
    if typing.get_origin(typ) is tuple:
      return tuple(int(x) for x in text.replace("(", "").replace(")", "").split(",") if x.strip())
  except ValueError:
    pass
  raise ConfigError(path, text, f"expected {_type_name(typ)}")


def _type_name(typ) -> str:
  if typing.get_origin(typ) is tuple:
    return "comma-separated integers"
  return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}[typ]


def _coerce(value, typ, path: str):
  """Checks a Python value (from JSON or code) against `typ`."""
  if typing.get_origin(typ) is tuple:
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
      return tuple(value)
  elif typ is float and isinstance(value, (int, float)) and not isinstance(value, bool):
    return float(value)
  elif isinstance(value, typ) and not (typ is int and isinstance(value, bool)):
    return value
  raise ConfigError(path, value, f"expected {_type_name(typ)}")


def from_dict(data: dict) -> Config:
  """Builds and validates a Config from a (possibly partial) nested dict."""
  kwargs = {}
  for key, value in data.items():
    if key in SECTIONS:
      cls = type(getattr(Config(), key))
      if not isinstance(value, dict):
        raise ConfigError(key, value, "expected a section of fields")
      fields = {f.name for f in dataclasses.fields(cls)}
      for name in value:
        if name not in fields:
          raise ConfigError(f"{key}.{name}", value[name], f"unknown field; {key} has {', '.join(sorted(fields))}")
      kwargs[key] = cls(**{n: _coerce(v, _field_type(cls, n), f"{key}.{n}") for n, v in value.items()})
    elif key in ("game", "seed"):
      kwargs[key] = _coerce(value, _field_type(Config, key), key)
    else:
      raise ConfigError(key, value, f"unknown field; top-level fields are game, seed, {', '.join(SECTIONS)}")
  return Config(**kwargs)  # validated on construction


def apply_overrides(config: Config, overrides: Sequence[str]) -> Config:
  """Applies `section.field=value` (or `seed=N`) strings and validates the result."""
  data = config.to_dict()
  for item in overrides:
    path, sep, text = item.partition("=")
    if not sep:
      raise ConfigError(item, item, "expected section.field=value")
    parts = path.strip().split(".")
    if len(parts) == 1 and parts[0] in ("game", "seed"):
      data[parts[0]] = _parse(text, _field_type(Config, parts[0]), path)
      continue
    if len(parts) != 2 or parts[0] not in SECTIONS:
      raise ConfigError(path, text, f"unknown field; use section.field with section one of {', '.join(SECTIONS)}")
    section, name = parts
    cls = type(getattr(config, section))
    if name not in {f.name for f in dataclasses.fields(cls)}:
      names = ", ".join(f.name for f in dataclasses.fields(cls))
      raise ConfigError(path, text, f"unknown field; {section} has {names}")
    data[section][name] = _parse(text, _field_type(cls, name), path)
  return from_dict(data)


def search_overrides(config: Config, overrides: Sequence[str]) -> Config:
  """`apply_overrides` for a trained network's config: only `search.*` fields may change (how it plays: the
  algorithm, simulations, Go's move rules...); the network and game are the checkpoint's."""
  for item in overrides:
    path = item.partition("=")[0].strip()
    if not path.startswith("search."):
      raise ConfigError(path, item.partition("=")[2], "only search.* fields: the network and game are the "
                        "checkpoint's")
  return apply_overrides(config, overrides)


def describe(config: Config) -> str:
  """One line per field with its value in `config`: the `--help` listing."""
  lines = [f"  game = {config.game}", f"  seed = {config.seed}"]
  for section in SECTIONS:
    for f in dataclasses.fields(getattr(config, section)):
      value = getattr(getattr(config, section), f.name)
      lines.append(f"  {section}.{f.name} = {value}")
  return "\n".join(lines)


def _check(ok: bool, field: str, value, allowed: str):
  if not ok:
    raise ConfigError(field, value, allowed)


SIGNED = ("unvisited_value", "draw_value")  # the numeric fields that may be below 0 (each checked below)


def validate(config: Config, num_devices: int | None = None) -> Config:
  """Raises ConfigError for any inconsistent setting; returns `config`.

  `num_devices`: the config is about to train on that many devices, which adds the checks of a training run (the
  mesh divides the games; what the value targets may mix). Without it, a config that only plays (an engine's, with
  search settings for play) is checked.
  """
  c = config
  _check(c.game in GAMES, "game", c.game, f"one of {', '.join(GAMES)}")
  _check(0 <= c.seed < 2 ** 32, "seed", c.seed, "an integer in 0..4294967295 (a PRNG key holds 32 bits)")
  for section in ("network", "search", "selfplay", "replay", "train", "run"):
    for f in dataclasses.fields(getattr(c, section)):
      value = getattr(getattr(c, section), f.name)
      if isinstance(value, (int, float)) and not isinstance(value, bool):
        _check(math.isfinite(value), f"{section}.{f.name}", value, "must be a finite number")
        if f.name not in SIGNED:
          _check(value >= 0, f"{section}.{f.name}", value, "must be >= 0")
  _check(c.search.algorithm in SEARCH_ALGORITHMS, "search.algorithm", c.search.algorithm,
         f"one of {', '.join(SEARCH_ALGORITHMS)}")
  _check(c.search.go_pass in GO_PASS_RULES, "search.go_pass", c.search.go_pass, f"one of {', '.join(GO_PASS_RULES)}")
  _check(c.search.go_eyes in GO_EYE_RULES, "search.go_eyes", c.search.go_eyes, f"one of {', '.join(GO_EYE_RULES)}")
  _check(c.search.compact_tree in COMPACT_TREES, "search.compact_tree", c.search.compact_tree,
         f"one of {', '.join(COMPACT_TREES)}")
  _check(c.search.gumbel_act in GUMBEL_ACTS, "search.gumbel_act", c.search.gumbel_act,
         f"one of {', '.join(GUMBEL_ACTS)}")
  _check(c.search.gumbel_act == "policy" or c.search.algorithm == "gumbel", "search.gumbel_act",
         c.search.gumbel_act, "policy unless search.algorithm=gumbel (halving plays a Gumbel search's own move)")
  _check(c.replay.sampling in REPLAY_SAMPLINGS, "replay.sampling", c.replay.sampling,
         f"one of {', '.join(REPLAY_SAMPLINGS)}")
  _check(c.train.optimizer in OPTIMIZERS, "train.optimizer", c.train.optimizer, f"one of {', '.join(OPTIMIZERS)}")
  _check(c.network.policy_head in POLICY_HEADS, "network.policy_head", c.network.policy_head,
         f"one of {', '.join(POLICY_HEADS)}")
  go, chess = ("Go (go9, go)", ("go9", "go")), ("chess", ("chess",))
  game_only = (("search.random_symmetry", c.search.random_symmetry, c.search.random_symmetry, go),  # (field, value,
               ("train.augment", c.train.augment, c.train.augment, go),                              # set, games)
               ("network.ownership", c.network.ownership, c.network.ownership != 0, go),
               ("network.future_position", c.network.future_position, c.network.future_position != 0,
                ("chess, Go (go9, go)", ("chess", "go9", "go"))),
               ("network.material_change", c.network.material_change, c.network.material_change != 0, chess),
               ("search.go_pass", c.search.go_pass, c.search.go_pass != "pgx", go),
               ("search.go_fill_eyes", c.search.go_fill_eyes, not c.search.go_fill_eyes, go),
               ("search.go_eyes", c.search.go_eyes, c.search.go_eyes != "simple", go),
               ("network.liberties", c.network.liberties, c.network.liberties, go),
               ("network.attacks", c.network.attacks, c.network.attacks, chess),
               ("network.policy_head", c.network.policy_head, c.network.policy_head != "flat", chess),
               ("selfplay.adjudicate_material", c.selfplay.adjudicate_material, c.selfplay.adjudicate_material,
                chess),
               ("search.twofold_draw", c.search.twofold_draw, c.search.twofold_draw, chess),
               # only chess's and Go's observations hold a history
               ("network.history", c.network.history, c.network.history != PAPER_HISTORY,
                ("chess and Go", chess[1] + go[1])))
  for name, value, set_, (label, games) in game_only:
    _check(not set_ or c.game in games, name, value, f"only for {label}, not {c.game}")
  _check(c.train.update_loop in UPDATE_LOOPS, "train.update_loop", c.train.update_loop,
         f"one of {', '.join(UPDATE_LOOPS)}")
  _check(c.network.inference_dtype in INFERENCE_DTYPES, "network.inference_dtype", c.network.inference_dtype,
         f"one of {', '.join(INFERENCE_DTYPES)}")
  _check(c.selfplay.adjudicate_score in ADJUDICATE_SCORES, "selfplay.adjudicate_score", c.selfplay.adjudicate_score,
         f"one of {', '.join(ADJUDICATE_SCORES)}")
  _check(c.selfplay.adjudicate_score == "margin" or c.selfplay.adjudicate_material > 0, "selfplay.adjudicate_score",
         c.selfplay.adjudicate_score, "margin unless selfplay.adjudicate_material > 0 turns adjudication on")
  _check(1 <= c.network.history <= PAPER_HISTORY, "network.history", c.network.history,
         f"must lie in [1, {PAPER_HISTORY}]; {PAPER_HISTORY} = the papers")
  for name in ("network.blocks", "network.channels", "network.value_hidden", "network.policy_channels",
               "search.num_simulations", "selfplay.batch_size", "selfplay.chunk_plies", "replay.window",
               "train.batch_size", "train.num_steps", "run.log_every", "run.checkpoint_every",
               "run.keep_checkpoints"):
    section, field = name.split(".")
    value = getattr(getattr(c, section), field)
    _check(value >= 1, name, value, "must be >= 1")
  _check(0.0 <= c.search.dirichlet_fraction <= 1.0, "search.dirichlet_fraction", c.search.dirichlet_fraction,
         "must lie in [0, 1]")
  _check(0.0 < c.search.discount <= 1.0, "search.discount", c.search.discount, "a number in (0, 1]; 1 = the papers")
  _check(c.train.q_ratio <= 1.0, "train.q_ratio", c.train.q_ratio, "must lie in [0, 1]; 0 = the papers")
  _check(c.train.value_weight > 0.0, "train.value_weight", c.train.value_weight, "must be > 0; 1 = the papers")
  _check(0.0 <= c.train.q_lambda < 1.0, "train.q_lambda", c.train.q_lambda, "must lie in [0, 1); 0 = Lc0's q alone")
  _check(not c.train.q_lambda or c.train.q_ratio > 0, "train.q_lambda", c.train.q_lambda,
         "0 unless train.q_ratio > 0 (it averages the search values that q_ratio mixes in)")
  _check(-1.0 < c.search.draw_value < 1.0, "search.draw_value", c.search.draw_value,
         "a number in (-1, 1): a drawn end's value for the root's player; 0 = the papers")
  for name in ("score_utility", "score_utility_static"):
    _check(not getattr(c.search, name) or c.network.ownership > 0, f"search.{name}", getattr(c.search, name),
           "0 unless network.ownership > 0 (the search reads the margin off the ownership head; Go only)")
  _check(not c.search.moves_left_slope or c.network.moves_left > 0, "search.moves_left_slope",
         c.search.moves_left_slope, "0 unless network.moves_left > 0 (the search reads the moves-left head)")
  _check(c.search.moves_left_threshold < 1.0, "search.moves_left_threshold", c.search.moves_left_threshold,
         "must lie in [0, 1)")
  _check(-1.0 <= c.search.unvisited_value <= 1.0, "search.unvisited_value", c.search.unvisited_value,
         "must lie in [-1, 1]")
  _check(c.search.gumbel_value_scale > 0, "search.gumbel_value_scale", c.search.gumbel_value_scale,
         "must be > 0 (0 would play the prior: no search); mctx's default is 0.1")
  _check(c.search.algorithm != "gumbel" or c.search.max_considered_actions >= 2, "search.max_considered_actions",
         c.search.max_considered_actions, "must be >= 2 for gumbel search")
  _check(0.0 <= c.selfplay.endgame_temperature <= 1.0, "selfplay.endgame_temperature",
         c.selfplay.endgame_temperature, "must lie in [0, 1]; 0 = the most visited move (the papers)")
  _check(c.selfplay.resign_turns >= 1, "selfplay.resign_turns", c.selfplay.resign_turns,
         "must be >= 1 (1 = AlphaGo Zero: resign on the first move below v_resign)")
  for name in ("resign_check_fraction", "resign_false_positives"):
    value = getattr(c.selfplay, name)
    _check(0.0 < value < 1.0, f"selfplay.{name}", value, "must lie in (0, 1)")
  _check(not c.run.eval_engine_games or c.game in ENGINE_GAMES, "run.eval_engine_games", c.run.eval_engine_games,
         f"0 for {c.game}: real engines play {', '.join(ENGINE_GAMES)}")
  _check(0.5 <= c.run.gate_score < 1.0, "run.gate_score", c.run.gate_score, "must lie in [0.5, 1)")
  _check(not c.run.gate_games or (c.run.eval_every >= 1 and c.run.eval_games >= 1), "run.gate_games",
         c.run.gate_games, "0 unless run.eval_every >= 1 and run.eval_games >= 1 (gating plays at each evaluation)")
  _check(0.0 < c.selfplay.full_search_fraction <= 1.0, "selfplay.full_search_fraction",
         c.selfplay.full_search_fraction, "must lie in (0, 1]")
  if c.selfplay.full_search_fraction < 1.0:
    _check(1 <= c.selfplay.fast_simulations < c.search.num_simulations, "selfplay.fast_simulations",
           c.selfplay.fast_simulations, f"must lie in [1, search.num_simulations={c.search.num_simulations}) when "
           "selfplay.full_search_fraction < 1")
  _check(not c.selfplay.fast_noise or c.selfplay.full_search_fraction < 1.0, "selfplay.fast_noise", True,
         "false unless selfplay.full_search_fraction < 1 (only playout caps' fast search reads it)")
  if not c.selfplay.record_fast:  # the replay counts recorded positions, not plies
    for name, on in (("search.discount", c.search.discount < 1.0), ("network.moves_left", c.network.moves_left > 0),
                     ("train.q_lambda", c.train.q_lambda > 0),
                     ("network.opponent_policy", c.network.opponent_policy > 0),
                     ("network.future_position", c.network.future_position > 0),
                     ("network.material_change", c.network.material_change > 0)):
      _check(not on, "selfplay.record_fast", False, f"must be true with {name} (its target counts the plies between "
             "positions, and unrecorded fast plies leave gaps)")
  boundaries = list(c.train.lr_boundaries)
  _check(boundaries == sorted(set(boundaries)) and min(boundaries, default=0) >= 0, "train.lr_boundaries",
         c.train.lr_boundaries, "update counts >= 0, strictly increasing")
  _check(c.search.c_base > 0, "search.c_base", c.search.c_base, "must be > 0 (PUCT divides by it)")
  _check(c.train.updates_per_step >= 1, "train.updates_per_step", c.train.updates_per_step,
         "must be >= 1 (a run without updates would play and never learn)")
  _check(c.train.momentum < 1.0, "train.momentum", c.train.momentum, "must lie in [0, 1)")
  _check(c.replay.window % c.selfplay.batch_size == 0, "replay.window", c.replay.window,
         f"must be a multiple of selfplay.batch_size={c.selfplay.batch_size} (each game slot owns an equal lane)")
  _check(c.replay.window >= c.train.batch_size, "replay.window", c.replay.window,
         f"must be >= train.batch_size={c.train.batch_size}")
  _check(c.train.batch_size % c.selfplay.batch_size == 0, "train.batch_size", c.train.batch_size,
         f"must be a multiple of selfplay.batch_size={c.selfplay.batch_size} (every lane gives the same "
         "number of positions to each minibatch)")
  if num_devices is not None:
    _check(c.selfplay.batch_size % num_devices == 0, "selfplay.batch_size", c.selfplay.batch_size,
           f"must be divisible by the device count {num_devices}")
    # Halving's move is the only one with weight, so the temperature fields do not act: without Gumbel noise every
    # game of the batch would play the same moves. At play (no noise) it is the best move, as it should be.
    _check(c.search.gumbel_act == "policy" or c.search.gumbel_scale > 0, "search.gumbel_scale",
           c.search.gumbel_scale, "> 0 in a run that trains with search.gumbel_act=halving (its Gumbel noise is "
           "self-play's only sampling; playout caps' fast plies have it only with selfplay.fast_noise)")
    # q_ratio's q is the search's Q of its best move, and these add the search's own utilities to Q: the value
    # would learn a drawn line as the contempt for whoever is to move, and Go values past +-1. At play they are
    # free (an engine's --set search.draw_value=... on a q_ratio network).
    for name in ("draw_value", "score_utility", "score_utility_static"):
      _check(not c.train.q_ratio or not getattr(c.search, name), f"search.{name}", getattr(c.search, name),
             "0 in a run that trains with train.q_ratio > 0 (the value target would learn the search's utility "
             "along with the game's outcome)")
  return c
