"""Presets: `paper` (the AlphaZero paper's numbers), `small` (one GPU), `cpu` (learns visibly within the hour on a
2-core CPU; its whole run takes 1.5-2 hours for go9 and chess), `smoke` (seconds on a CPU).

Sources, cited where used:
  [AGZ]  Silver et al., Mastering the game of Go without human knowledge, Nature 2017, Methods.
  [AZ]   Silver et al., arXiv:1712.01815 (2017), Methods "Configuration" and Table S3.
  [AZp]  The AlphaZero pseudocode, supplementary material of Science 362:1140 (2018).
Numbers without a source are ours (sizes for a machine, not for the algorithm).
"""

from __future__ import annotations

import dataclasses
import math

from azjax.config import (PAPER_HISTORY, Config, ConfigError, NetworkConfig, ReplayConfig, RunConfig, SearchConfig,
                          SelfPlayConfig, TrainConfig)
from azjax.games import SPECS, spec
from azjax.rules import GO_SIZES

PRESETS = ("paper", "small", "cpu", "smoke")

# The paper's algorithm constants, shared by every game.
PAPER_SEARCH = dict(
    algorithm="puct",
    num_simulations=800,  # [AZ] "each MCTS used 800 simulations"
    c_init=1.25, c_base=19652.0,  # [AZp] pb_c_init, pb_c_base
    dirichlet_fraction=0.25,  # [AZp] root_exploration_fraction; alpha per game in games.py [AZ]
    unvisited_value=0.0,  # [AGZ] "Expand and evaluate": Q(s, a) = 0 (the [AZp] pseudocode's -1 is reachable)
)
PAPER_TEMPERATURE_PLIES = 30  # [AGZ] "For the first 30 moves of each game, the temperature is set to tau = 1"
PAPER_TRAIN = dict(
    # L2 as [AGZ] eq. 1: c ||theta||^2, c = 1e-4, beside the batch-mean data terms. [AZp], read literally, differs:
    # weight_decay 1e-4 times tf.nn.l2_loss (half the squared norm) beside data terms summed over the batch.
    optimizer="sgd", momentum=0.9, l2=1e-4,  # [AZp] momentum, weight_decay
    batch_size=4096,  # [AZ] "mini-batches of 4,096 positions"
    learning_rate=0.2, lr_decay=0.1,  # [AZ] 0.2, dropped three times to 0.02, 0.002, 0.0002
    lr_boundaries=(100_000, 300_000, 500_000),  # [AZp] learning_rate_schedule
)
# [AZp] learning_rate_schedule's comment: "Schedule for chess and shogi, Go starts at 2e-2 immediately" (Science
# 2018: the schedule is one of the two settings that differ between games). Go9 follows Go.
PAPER_GO_TRAIN = dict(learning_rate=0.02, lr_boundaries=(300_000, 500_000))
PAPER_UPDATES = 700_000  # [AZ] "700,000 steps (in mini-batches of 4096 training positions)"
PAPER_WINDOW_GAMES = 1_000_000  # [AZp] window_size: the latest 1M games
PAPER_NETWORK = NetworkConfig(blocks=19, channels=256, value_hidden=256, policy_channels=2)  # [AZ]/[AGZ]
# [AZ] Methods "Representation", Table S2: chess's policy as 8 x 8 x 73 planes (network.policy_head); Go's flat.
# Shogi's 9 x 9 x 139 planes are not built (pgx's shogi actions are 27 planes per destination): flat there.
PAPER_POLICY_HEAD = {"chess": "planes"}


def _round_up(x: float, multiple: int) -> int:
  return int(math.ceil(x / multiple) * multiple)


def _paper(game: str) -> Config:
  # Our choice: 1024 games in lockstep per chunk of 64 plies and 8 updates per
  # train_step train ~0.5 positions per position generated, about [AZ] Table
  # S3's ratio for chess (700k x 4096 trained over 44M games).
  games, chunk, updates = 1024, 64, 8
  window = _round_up(PAPER_WINDOW_GAMES * spec(game).typical_plies, games)
  return Config(
      game=game,
      network=dataclasses.replace(PAPER_NETWORK, policy_head=PAPER_POLICY_HEAD.get(game, "flat")),
      search=SearchConfig(**PAPER_SEARCH),
      selfplay=SelfPlayConfig(batch_size=games, chunk_plies=chunk, temperature_plies=PAPER_TEMPERATURE_PLIES),
      replay=ReplayConfig(window=window, sampling="window"),  # uniform over the window (AlphaGo Zero, Methods)
      train=TrainConfig(**dict(PAPER_TRAIN, **(PAPER_GO_TRAIN if game in GO_SIZES else {})), updates_per_step=updates,
                        num_steps=PAPER_UPDATES // updates),
      run=RunConfig(log_every=100, checkpoint_every=1000, eval_every=5000, eval_games=400),
  )


# Sizes for one GPU (small) and a CPU smoke test (smoke); the algorithm keeps the paper's constants.
_SMALL = {
    # game: (blocks, channels, simulations, games, window in positions, train batch, updates, steps)
    "tictactoe": (2, 32, 32, 128, 16384, 256, 8, 150),
    "connect_four": (4, 64, 64, 256, 131072, 512, 8, 2000),
    "othello": (6, 128, 64, 512, 524288, 1024, 8, 5000),
    "go9": (6, 128, 64, 512, 524288, 2048, 8, 5000),
    "go": (10, 128, 128, 256, 1048576, 2048, 8, 10000),
    "chess": (10, 128, 128, 256, 1048576, 2048, 8, 10000),
    "shogi": (10, 128, 128, 256, 1048576, 2048, 8, 10000),
}


# Go's pass rule off the papers' settings (rules.py): the early-pass collapse is not a matter of size.
_GO_PASS = {"go9": "eyes", "go": "eyes"}

# Pure MCTS anchors where random rollouts are cheap enough (games end in tens of plies).
_SMALL_MCTS_ANCHOR = {"tictactoe": 64, "connect_four": 64, "othello": 64}


def _drops(steps: int, updates: int) -> tuple[int, ...]:
  """The learning rate drops tenfold at half and at three quarters of a run (as [AZ]'s, at fixed fractions)."""
  return (steps * updates // 2, steps * updates * 3 // 4)


def _small(game: str) -> Config:
  blocks, channels, sims, games, window, batch, updates, steps = _SMALL[game]
  train = dict(PAPER_TRAIN, batch_size=batch, learning_rate=0.02 if game != "tictactoe" else 0.1,
               lr_boundaries=_drops(steps, updates))
  return Config(
      game=game,
      network=NetworkConfig(blocks=blocks, channels=channels, value_hidden=min(256, channels * 2),
                            policy_head=PAPER_POLICY_HEAD.get(game, "flat")),
      search=SearchConfig(**dict(PAPER_SEARCH, num_simulations=sims, go_pass=_GO_PASS.get(game, "pgx"))),
      selfplay=SelfPlayConfig(batch_size=games, chunk_plies=16, temperature_plies=PAPER_TEMPERATURE_PLIES),
      replay=ReplayConfig(window=window),
      train=TrainConfig(**train, updates_per_step=updates, num_steps=steps),
      run=RunConfig(log_every=10, checkpoint_every=max(steps // 10, 10), eval_every=max(steps // 5, 10),
                    eval_games=64, eval_mcts_simulations=_SMALL_MCTS_ANCHOR.get(game, 0)),
  )


# Sizes that learn visibly on a 2-core CPU within the hour (issue 16). Deviations from the paper, each a named switch:
# Gumbel search (Danihelka et al., ICLR 2022: learns 9x9 Go with few simulations where PUCT fails at 16 or
# fewer), Go's pass rule (rules.py) and a smaller learning rate. Go trains on the 8 symmetries of each position
# as AlphaGo Zero did ([AGZ] Methods; AlphaZero did not): on this CPU the positions are what is scarce. The rate
# stays constant, except go9's one late drop and tic-tac-toe's two (_CPU_LR_BOUNDARIES): go9 with small's drops (at half and three
# quarters of 1200 steps) fitted its small window tighter and lost games to random after them
# (docs/results/learning, section 6). Chess samples each position about 4 times (16 updates of 256 on 1,024 new
# positions a step): its best run so far, 0.94 against random at 600 steps (section 9); at 8 updates a step it is
# behind at equal steps (0.430) and level at equal time (0.520; section 72), at 32 no stronger at equal steps
# (section 62). Go9 at 16 updates a step beat go9 at 4 head to head at equal steps (0.69-0.83, two seeds) but not
# in equal CPU time (0.06-0.52 at 22-69 minutes), and lost to GNU Go by as much: it stays at 4 (section 20).
# Shogi plateaus at 0.73-0.91 against random from step 50 on, at 4 updates a step or 16 (section 9), so its run
# is 300 steps: about 50 minutes of training on one core and 45 of evaluation (shogi_pcr's 10 s a step and ~15
# minutes an evaluation), where 1500 steps would take about 8 hours.
# Chess trains for 1800 steps: on the 2 cores the CLI splits into two devices
# (`--cpu-devices auto`) the preset made 1,880 steps in 110 minutes with four evaluations (20 Stockfish games each),
# where one core had taken 88 minutes for 800, and its step-1880 network beat the same seed's 800-step preset network
# 28-2-2 (0.906, 0.765-0.960) over 32 games; against Stockfish skill 0, depth 1, still 1 of 20 (section 56; one
# seed). `--set train.num_steps=800 --set run.eval_every=200` is the preset before.
_CPU = {
    # game: (blocks, channels, simulations, games, window, train batch, updates, steps, learning rate)
    "tictactoe": (2, 32, 32, 128, 16384, 256, 8, 150, 0.1),
    "connect_four": (2, 32, 16, 64, 16384, 256, 4, 1500, 0.02),
    "othello": (2, 32, 16, 64, 16384, 256, 4, 1500, 0.02),
    "go9": (2, 32, 16, 64, 32768, 256, 4, 5300, 0.02),
    "go": (2, 32, 16, 16, 32768, 256, 4, 1500, 0.02),
    "chess": (2, 32, 16, 64, 32768, 256, 16, 1800, 0.002),
    "shogi": (2, 32, 16, 64, 32768, 256, 4, 300, 0.002),
}

# Playout-cap randomisation for the big games (KataGo: Wu 2019, section 3.1, its fraction 0.25): a quarter
# of the plies get the full search and train the policy, the rest a 4-simulation search that trains the
# value only (KataGo stores only the full plies: selfplay.record_fast=false, level on chess at equal time,
# section 71). On this CPU it doubles self-play's speed at no measured loss per step (docs/results/learning,
# section 9; docs/results/sweeps/go9_search_sims, "Playout-cap randomisation").
_CPU_PLAYOUT_CAP = {game: dict(full_search_fraction=0.25, fast_simulations=4)
                    for game in ("go9", "go", "chess", "shogi")}

# Resignation (AlphaGo Zero, Methods: v_resign calibrated on the 10% of games played out, false positives
# under 5%) for go9: in the same 600 steps, self-play finishes 1.4-1.7x as many games, and the resigning
# network beat the one without 59-5 (seed 0) and 40-24 (seed 1) (docs/results/learning, section 9).
# Unmeasured on 19x19, so off there as in AlphaZero. Off for chess: its calibrated threshold fell to -1 within
# 113-306 steps (a value head that does not know material cannot resign safely) and the run gained nothing
# (0.477 head to head; docs/results/learning, section 34).
_CPU_RESIGN = {"go9": dict(resign=True)}

# KataGo's ownership target (Wu 2019, section 4.1; its weight 1.5) for go9: at 1200 steps the network
# with it beat the one without 40-24 (seed 0), and lost to GNU Go level 1 by less: mean margins -59.3 against -74.7
# (seed 0) and -66.1 against -72.5 (seed 1), 1 and 2 wins of 20 against 0 and 1 (docs/results/learning, section
# 10). `--set network.ownership=0` for the papers' network. Unmeasured on 19x19, so off there.
_CPU_OWNERSHIP = {"go9": 1.5}

# MoGo's eye rule in training, with Pachi's and minigo's true eye (search.go_fill_eyes=false, search.go_eyes=true:
# no search fills its own true eye, and pass is open once only such moves remain), on KataGo's global pooling, for
# go9. Paired runs on one machine, two seeds, step 1200, against the same config without the rule: 47-17 and 50-14
# head to head; GNU Go level 1, 40 games each, as trained: -55.1 against -79.2 and -50.1 against -74.5
# (docs/results/learning, sections 21 and 23). Global pooling alone gained nothing (section 15); it stays because
# every run that measured the rule had it. Simple eyes, the rule's first form, lost 10-54 (section 10).
_CPU_GO_EYES = {"go9": dict(go_fill_eyes=False, go_eyes="true")}
_CPU_GLOBAL_POOLING = ("go9",)

# KataGo's liberty input planes (network.liberties; Wu 2019, appendix A) for go9, where the agent's groups died
# against GNU Go. Paired runs on one machine, two seeds, step 1200, against the same config without them: 60-4 and
# 57-7 head to head (54-10 and 45-19 from their step 1100, at equal CPU time: the planes cost about 10% of it); GNU Go
# level 1, 40 games each: -33.0 with 10 wins against -55.1 with 2, and -23.4 with 10 wins against -50.1 with 3
# (docs/results/learning, section 24). Unmeasured on 19x19, so off there.
_CPU_LIBERTIES = ("go9",)

# Go9 trains for 5300 steps, the 2 hours on one core beside another run on the machine of section 49
# (92 minutes with its 14 evaluations; 2650 steps took 82 minutes on the slower machine of sections 32-33, where
# 5300 would take about 2.7 hours: `--set train.num_steps=2650 --set train.lr_boundaries=6400` is that preset),
# evaluated every 400. Two seeds at 5300 steps beat the 2650-step preset's end 0.648 and 0.656 over 256 games, and
# lost to GNU Go level 1 by -19.0 (26 wins) and -10.0 (42 wins) over 60 games each, where 2650 steps on four seeds
# lost by -17.2 to -21.3 (21-27 wins; docs/results/learning, sections 33, 48, 49). Before that, 2650 steps: the
# two seeds of section 24 continued from step 1200 at the same constant rate beat their step 1200 41-23 and 38-26
# and gained 9 points against GNU Go (section 25). Chess, playing at 32 simulations (_CPU_PLAY_SIMULATIONS), every
# 400 (200 while it trained 800 steps): games at 32 cost about twice those at 16 (128 against random: 9-13 minutes
# against 5-6; docs/results/learning, section 38). Elsewhere an evaluation every 100 steps.
_CPU_EVAL_EVERY = {"go9": 400, "chess": 400}

# AlphaZero's tenfold learning-rate drop ([AZ]: 0.2 to 0.02 and on; train.lr_boundaries counts updates), once, late:
# at update 12,800, step 3209 of go9's 5300 (updates start at step 9, when the replay first holds a batch): 61% of
# the run, as update 6,400 was of the 2650-step preset. There, three seeds at step 2650 against GNU Go level 1, 60
# games each: -17.2, -18.5 and -21.1 points, pooled -18.9 (se 2.6), where the constant rate's three seeds pooled
# -21.1 (se 3.5) over 100 games on another machine; self-play sharpens (policy entropy 1.4 to 1.0-1.2) and its
# median game went from 57 plies to 59-72 (docs/results/learning, sections 32-33). A drop at step 1200 gained
# nothing by 1600 (section 25). Chess keeps a constant rate: the same drop, late, resumed from its preset runs, lost
# 0.434 and 0.445 head to head at steps 1600 and 1800 (seed 1, dropped at 1200) and tied 0.500 at 1140 (seed 0,
# dropped at 800; section 72). `--set train.lr_boundaries=` for a constant rate.
_CPU_LR_BOUNDARIES = {"go9": (12800,), "tictactoe": (600, 900)}

# Tic-tac-toe searches with PUCT, as its `small` preset, with small's two drops (at updates 600 and 900: steps 75 and
# 112 of 150): its Gumbel search at a constant rate, trained on seeds 0 and 1 (150 steps, 32 simulations), lost 2
# and 10 of 32 games as the second player to an exhaustive minimax player, 2 and 5 playing Gumbel MuZero's own move
# (search.gumbel_act=halving) and 6 and 9 with the drops; PUCT with the drops lost none, as either player, on both
# seeds (docs/results/learning, section 73). The issue asks the default to play perfectly.
_CPU_SEARCH_ALGORITHM = {"tictactoe": "puct"}

# Go9's evaluations also play GNU Go level 1, 20 games (run.eval_engine_games; the anchor issue 16 measures
# against), where it is installed (`experiments.go9` says when it is not and leaves them out). From step 400 on the
# preset wins every game against uniform random, so those games rate no later checkpoint; GNU Go's do: replayed on
# the preset's two seeds, 40 games a checkpoint, they put step 400 at -591 and -691 Elo against GNU Go and step
# 2650 at -23 and -221, margins -74 and -75 points rising to -24 and -14 (docs/results/learning, section 27).
# 20 games take 36-55 s on one core here: about 5 minutes of the 2-hour run.
_CPU_ENGINE_GAMES = {"go9": 20}


# A discount on values (search.discount, config.py) for shogi: the run with 0.99 scored 114-9-5 (0.926) against
# uniform random over 128 games at its step 300 (108-9-11, 0.879, at step 200), where the same preset and seed
# without it scored 99-11-18 (0.816) at step 200 (docs/results/learning, section 11; one seed). Chess at 0.99 did
# worse (0.824 against 0.85-0.89), so it stays 1 there and everywhere else (the papers).
_CPU_DISCOUNT = {"shogi": 0.99}


# Chess self-play samples its moves from the search policy at temperature 1 for the papers' first 30 plies, then at
# Lc0's endgame temperature 0.45 (selfplay.endgame_temperature; LeelaChessZero/lc0 pull 568, issue 237), where the
# papers play the most visited move. Against uniform random at step 600, 128 games: 118-10-0, 0.961 (0.921-0.974),
# where the same preset and seed sampling at temperature 1 all game made 110-17-1, 0.926 (0.878-0.948); on seed 1,
# 116-12-0, 0.953 (0.911-0.968), against 0.898. Self-play games finished sooner and more often won (60-62% against
# 50-52% over steps 401-600), threefold repetitions 9-14% against 3-6% (docs/results/learning, sections 30-31).
# Sampling all game had beaten the papers' greedy moves after ply 30, 0.930 against 0.852 at step 800 (section 12).
# `--set selfplay.endgame_temperature=0` for the papers'; `--set selfplay.temperature_plies=512` for whole-game
# sampling.
_CPU_ENDGAME_TEMPERATURE = {"chess": 0.45}


# AlphaZero's chess policy, 73 planes per square (network.policy_head; arXiv:1712.01815, Table S2), for chess: paired
# with the preset's flat head on seed 0, at step 600: 110-17-1 (0.926) against uniform random over 128 games where the
# flat head made 96-30-2 (0.867), and 29-20-15 (0.609) head to head; at step 400, 27-5-0 and 28-4-0 against random on
# seeds 0 and 1, where the flat head made 19-11-2 and 18-12-2 (docs/results/learning, section 28). It costs 1% more
# FLOPs a position and has 87k parameters where the flat head's 2x32 network has 678k.
_CPU_POLICY_HEAD = {"chess": "planes"}

# Chess: Giraffe's attack planes (network.attacks; Lai 2015, arXiv:1509.01549) together with chess-alpha-zero's
# material adjudication of games stopped at a 160-ply cap (selfplay.adjudicate_material, margin 3; Zeta36's
# ChessEnv.adjudicate). Either alone gained nothing measurable at 600 steps (0.555 and 0.508-0.523 head to head;
# docs/results/learning, sections 26 and 35); together, at step 600, they beat adjudication alone 0.719 (seed 1) and
# 0.711 (seed 0) over 64 games each, and the preset without both 0.742 (seed 1), and lose less to a one-ply material
# player (0.175-0.250 against 0.100; section 36); against uniform random 0.965 and 0.922 (seeds 1, 0; 128 games),
# where the preset before scored 0.953-0.961; at the preset's 800 steps 0.934 and 0.938, beating its own step 600
# (0.555, 0.602; section 37). The adjudicated value knows material, the planes show what hangs.
# The cap is 80 plies: against the same preset at 160, paired on its seeds, it scored 39-17-8 (0.742, 0.642-0.815) at
# step 1,000 on seed 0 and 36-24-4 (0.750, 0.660-0.812) and 35-19-10 (0.695, 0.594-0.775) at steps 200 and 400 on
# seed 1, 64 games each; its step 1,000 beat the 160-ply preset's step 1,200 0.602 and uniform random 0.977 (128
# games), and at 256 simulations won the first game any network here has won against Stockfish skill 0 at depth 1
# (1 of 20). Self-play labels about twice as many games a step, 1% of them ended by repetition (docs/results/learning,
# section 45). Seed 1 held to step 800: 31-24-9 (0.672, 0.575-0.749); 0.988 against uniform random at step 1,000.
# A 60-ply cap lost to this one 0.398 on each seed (steps 1,000 and 800), a 70-ply cap tied it (0.500, 0.539 on
# seed 1); neither gained against Stockfish on both seeds (sections 46-47). `--set selfplay.max_plies=160` for the
# cap before.
# `--set network.attacks=false --set selfplay.max_plies=0 --set selfplay.adjudicate_material=0` for the papers'.
_CPU_ATTACKS = {"chess"}
_CPU_ADJUDICATION = {"chess": dict(max_plies=80, adjudicate_material=3)}

# Chess plays at 32 simulations a move (search.play_simulations; evaluations, matches, engines) where self-play
# searches 16: AlphaZero too searched far longer at play than in self-play ([AZ]: 800 simulations a self-play move,
# 1 minute a move in its matches). At 16, Gumbel search's 16 considered moves get one visit each; at 32 the best 8
# get a second. The preset's step-800 networks (two seeds, 128 games each) against uniform random: 0.992 and 0.980
# at 32 where 16 made 0.934 and 0.938, and 32 beat 16 head to head 0.641 and 0.703 over 64 games; 64 added little
# (0.996, 0.984; 0.539 against 32). Go9 at 32 gained nothing against GNU Go level 1 (docs/results/learning,
# section 38). `--set search.play_simulations=0` plays at self-play's 16.
_CPU_PLAY_SIMULATIONS = {"chess": 32}

# Lc0's q_ratio (train.q_ratio; lczero-training, tf/tfprocess.py) at 0.75 for chess: each position's value target is
# a quarter its game's outcome and three quarters its own search's value of its best move. The outcome of a game
# between players that hang and retake pieces says little about a capture available now; the search's value, read
# after the capture where the material is on the board, does. At 0.5 against the preset without it (section 40's
# seed-0 run), 64 games at 16 simulations a side, equal steps: seed 0 0.719 (0.630-0.782) at step 400, seed 1 0.695
# (0.606-0.762); its search takes free material 0.445 of the time where the preset's takes 0.205 (docs/results/
# learning, sections 41-42). Those runs read q from the first of Gumbel's tied root children, not the best (section
# 64). With the best child's q, 0.75 against 0.5, 128 games at equal steps: seed 1 0.699, 0.656, 0.609 at steps 400,
# 800, 1200 (section 65); seed 0 0.492 (0.441-0.544), 0.613 (0.565-0.655), 0.684 (0.629-0.727) at 400, 800, 1140
# (section 66). At 0.5 self-play drew by repetition in 6-15% of games over steps 401-1200 on seed 1 and in 27% over
# steps 801-1140 on seed 0 (37% over its last 40), past the 20%; at 0.75 in 0-1% on both. 1.0 collapses the
# value (section 65). `--set train.q_ratio=0` for the outcome alone (the papers), `=0.5` for the preset before.
_CPU_Q_RATIO = {"chess": 0.75}

# Chess reads two positions, the current one and the one before (network.history; the papers' T = 8, [AZ] Methods
# "Representation"): the position before shows what just moved, and the six before that are, for a 2x32 network,
# inputs to learn to ignore. Paired with this preset at eight on two seeds, step 400, 128 games each at 32
# simulations a side: 46-69-13, 0.629 (0.570-0.680) on seed 0 and 44-67-17, 0.605 (0.545-0.660) on seed 1; its prior
# hangs material in quiet positions 0.035 of the time against 0.060; a step costs 0.77 of the time (the stem reads
# 39 planes instead of 123). The current position alone lost 0.266 at equal steps and 0.430 at equal time
# (docs/results/learning, sections 58-59). `--set network.history=8` for the papers' input.
_CPU_HISTORY = {"chess": 2}

# The cpu presets draw each self-play move from Gumbel's whole improved policy, moves no simulation visited included
# (search.play_unvisited), as every run before section 67 did; Gumbel MuZero plays only a visited move, the library's
# default. Paired on go9, seed 5, 50 minutes each on one core: visited-only lengthened self-play's median game by 6-8
# plies (63-69 against 56-62 over steps 401-1600), but it was behind at step 800 (0.352, 0.274-0.438, 128 games),
# level at 1600 (0.508) and no better against GNU Go level 1 at 1600 (6 wins, mean margin -33.4 over 20 games,
# against 7 and -5.7; docs/results/learning, section 67). Continued to step 5000 (section 69): the median 60 or more
# in 12 of 13 400-step windows against 3 of 13, level head to head at 5000 (0.523, 0.437-0.608) after 0.406 at 3200,
# and against GNU Go level 1 (40 games) -7.6 against -20.5 at 3200, -10.2 against -5.2 at 5000. Seed 4 with the rule,
# to 5300 (section 70): the mirror image, the median under 60 in all 6 windows after the learning-rate drop (56.5-59.9)
# where this draw held 60-64 there, and level against GNU Go level 1: go9 keeps this draw. Paired on chess, seeds 0
# and 1, to step 1170 on one core each: at step 1100 visited-only scored 0.562 (0.511-0.610) and 0.207
# (0.169-0.262) over 128 games, and seed 1's self-play drew by repetition in up to 42% of a 100-step window's games
# (steps 801-900), where this draw stayed at 0-2% (section 68). `--set search.play_unvisited=false`.
_CPU_PLAY_UNVISITED = True

# Go9's self-play plays Gumbel MuZero's own move, the winner of its Sequential Halving (search.gumbel_act=halving;
# Danihelka et al. 2022, Algorithm 2), where the other cpu presets draw from the improved policy. Paired with this
# preset's draw on three seeds, one core each (docs/results/learning, sections 74-75): the median self-play game was
# 60 plies or more in every 400-step window of seeds 4 and 6 to step 2000 (63.9-77.0; the draw 56.5-73.0, under 60
# in 4 of 10) and in 9 of 10 of seed 7's to step 4,030 (the draw: 5 of 11), the target the draw missed on three
# seeds of four. Against GNU Go level 1 (20 games an evaluation) the strength moved about the draw's: seeds 4 and 6
# level or ahead at steps 400-1600, behind at 2000 (-40.9 and -27.2 against -29.9 and -13.3; pooled 1.5 standard
# errors); seed 7 behind at 1200-1600 (about 3 se) and ahead at 4 of 5 evaluations from step 2400, 13 wins and
# -2.0 at 4000 against 11 and -6.6. Seed 4 run on past the drop (section 76, two devices): 9 of 10 windows at 60 or
# more, GNU Go's target met at 2800 and 4000 (9 wins, -16.2), but the draw ahead by about 2 se at each of 3200-4000
# (11 wins, -2.9 at 4000). Chess stayed level (seed 0, section 74) and keeps the draw. Under halving the
# temperature fields and play_unvisited do not act. `--set search.gumbel_act=policy` for the draw.
_CPU_GUMBEL_ACT = {"go9": "halving"}


def _cpu(game: str) -> Config:
  blocks, channels, sims, games, window, batch, updates, steps, lr = _CPU[game]
  return Config(
      game=game,
      network=NetworkConfig(blocks=blocks, channels=channels, value_hidden=channels * 2,
                            ownership=_CPU_OWNERSHIP.get(game, 0.0), global_pooling=game in _CPU_GLOBAL_POOLING,
                            liberties=game in _CPU_LIBERTIES, attacks=game in _CPU_ATTACKS,
                            policy_head=_CPU_POLICY_HEAD.get(game, "flat"),
                            history=_CPU_HISTORY.get(game, PAPER_HISTORY)),
      search=SearchConfig(**dict(PAPER_SEARCH, algorithm=_CPU_SEARCH_ALGORITHM.get(game, "gumbel"),
                                 num_simulations=sims,
                                 play_simulations=_CPU_PLAY_SIMULATIONS.get(game, 0),
                                 play_unvisited=_CPU_PLAY_UNVISITED, gumbel_act=_CPU_GUMBEL_ACT.get(game, "policy"),
                                 go_pass=_GO_PASS.get(game, "pgx"), discount=_CPU_DISCOUNT.get(game, 1.0),
                                 **_CPU_GO_EYES.get(game, {}))),
      selfplay=SelfPlayConfig(batch_size=games, chunk_plies=16,
                              temperature_plies=PAPER_TEMPERATURE_PLIES,
                              endgame_temperature=_CPU_ENDGAME_TEMPERATURE.get(game, 0.0),
                              **_CPU_PLAYOUT_CAP.get(game, {}), **_CPU_RESIGN.get(game, {}),
                              **_CPU_ADJUDICATION.get(game, {})),
      replay=ReplayConfig(window=window),
      train=TrainConfig(**dict(PAPER_TRAIN, batch_size=batch, learning_rate=lr,
                               lr_boundaries=_CPU_LR_BOUNDARIES.get(game, ()), q_ratio=_CPU_Q_RATIO.get(game, 0.0)),
                        updates_per_step=updates, num_steps=steps, augment=game in GO_SIZES),
      run=RunConfig(log_every=10, checkpoint_every=100, eval_every=_CPU_EVAL_EVERY.get(game, 100),
                    eval_games=32, eval_pool=1, eval_mcts_simulations=_SMALL_MCTS_ANCHOR.get(game, 0),
                    eval_engine_games=_CPU_ENGINE_GAMES.get(game, 0)),
  )


def default_preset(platform: str) -> str:
  """The preset `python -m experiments.<game>` picks for the devices it finds: cpu here, small on an
  accelerator (one GPU, or a TPU host; scale `selfplay.batch_size` up for more)."""
  return "cpu" if platform == "cpu" else "small"


def _smoke(game: str) -> Config:
  return Config(
      game=game,
      network=NetworkConfig(blocks=1, channels=8, value_hidden=16),
      search=SearchConfig(**dict(PAPER_SEARCH, num_simulations=4)),
      selfplay=SelfPlayConfig(batch_size=8, chunk_plies=4, temperature_plies=PAPER_TEMPERATURE_PLIES),
      replay=ReplayConfig(window=1024),
      # The paper's rate without its drops, which a few steps never reach (each would be a warning at every start).
      train=TrainConfig(**dict(PAPER_TRAIN, batch_size=16, lr_boundaries=()), updates_per_step=1, num_steps=4),
      run=RunConfig(log_every=2, checkpoint_every=2, eval_every=0, eval_games=2),
  )


def preset(game: str, name: str) -> Config:
  """The named preset of a game, validated."""
  if game not in SPECS:
    raise ConfigError("game", game, f"one of {', '.join(SPECS)}")
  if name not in PRESETS:
    raise ConfigError("preset", name, f"one of {', '.join(PRESETS)}")
  return {"paper": _paper, "small": _small, "cpu": _cpu, "smoke": _smoke}[name](game)  # Config validates itself
