"""azjax: AlphaZero as one pure-JAX program (pgx games, mctx search, haiku networks, optax).

Public API:
  Config and its sections, presets      -- what to run (`preset(game, "paper" | "small" | "smoke")`)
  train(config, run_dir)                -- a whole run from Python: self-play, updates, logs, checkpoints
  build, make_mesh, init_state,
  make_train_step                       -- the compiled `train_step(state) -> (state, metrics)` for custom loops
  load_agent(path) -> Agent             -- a trained agent; `Agent.act(state, key)` plays a batch of pgx states
  match, random_player                  -- matches between players
"""

from azjax.agent import Agent, load_agent
from azjax.arena import MatchResult, match, random_player
from azjax.checkpoint import CheckpointError
from azjax.cli import main as experiment_main
from azjax.config import (GAMES, Config, ConfigError, NetworkConfig, ReplayConfig, RunConfig, SearchConfig,
                          SelfPlayConfig, TrainConfig, apply_overrides, from_dict, validate)
from azjax.loop import RunResult, train
from azjax.presets import PRESETS, preset
from azjax.train_step import TrainState, build, init_state, make_mesh, make_train_step

__all__ = [
    "Agent", "load_agent", "MatchResult", "match", "random_player", "CheckpointError", "experiment_main", "GAMES",
    "Config", "ConfigError", "NetworkConfig", "ReplayConfig", "RunConfig", "SearchConfig", "SelfPlayConfig",
    "TrainConfig", "apply_overrides", "from_dict", "validate", "RunResult", "train", "PRESETS", "preset",
    "TrainState", "build", "init_state", "make_mesh", "make_train_step",
]
