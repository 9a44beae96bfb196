"""azjax: AlphaZero as one pure-JAX program (pgx games, mctx search, haiku networks, optax).

Public API:
  Config and its sections, presets      -- what to run (`preset(game, "paper" | "small" | "smoke")`)
  train(config, run_dir)                -- a whole run from Python: self-play, updates, logs, checkpoints;
                                           raises DivergenceError when the loss or parameters turn non-finite
  build, make_mesh, init_state,
  make_train_step                       -- the compiled `train_step(state) -> (state, metrics)` for custom loops
  load_agent(path) -> Agent             -- a trained agent; `Agent.act(state, key)` plays a batch of pgx states
  Player, match, random_player,
  mcts_player                           -- matches between players in one jitted program (`Agent.player()`)
  elo.fit                               -- maximum-likelihood Elo of a pool of players, with error bars
  azjax.engines                         -- UCI, GTP and USI engines and matches against real engines
"""

from azjax.agent import Agent, load_agent
from azjax import elo
from azjax.arena import MatchResult, Player, match, mcts_player, random_player
from azjax.checkpoint import CheckpointError
from azjax.cli import main as experiment_main
from azjax.config import (GAMES, Config, ConfigError, NetworkConfig, ReplayConfig, RunConfig, SearchConfig,
                          SelfPlayConfig, TrainConfig, apply_overrides, from_dict, validate)
from azjax.loop import DivergenceError, RunResult, train
from azjax.presets import PRESETS, preset
from azjax.train_step import TrainState, build, init_state, make_mesh, make_train_step

__all__ = [
    "Agent", "load_agent", "MatchResult", "Player", "match", "mcts_player", "random_player", "elo", "CheckpointError", "experiment_main", "GAMES",
    "Config", "ConfigError", "NetworkConfig", "ReplayConfig", "RunConfig", "SearchConfig", "SelfPlayConfig",
    "TrainConfig", "apply_overrides", "from_dict", "validate", "DivergenceError", "RunResult", "train", "PRESETS", "preset",
    "TrainState", "build", "init_state", "make_mesh", "make_train_step",
]
