"""azjax: AlphaZero as one pure-JAX program (pgx games, mctx search, haiku networks, optax).

Public API:
  Config and its sections, presets      -- what to run (`preset(game, "paper" | "small" | "cpu" | "smoke")`)
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

import importlib

# Names are imported on first use (PEP 562): `import azjax` touches no device and imports no game, so
# a command can join the other processes of a multi-host run (azjax.distributed) before pgx's
# import-time arrays start JAX's backend.
_EXPORTS = {
    "azjax.agent": ("Agent", "load_agent"),
    "azjax.arena": ("MatchResult", "Player", "match", "mcts_player", "random_player"),
    "azjax.checkpoint": ("CheckpointError",),
    "azjax.config": ("GAMES", "Config", "ConfigError", "NetworkConfig", "ReplayConfig", "RunConfig", "SearchConfig",
                     "SelfPlayConfig", "TrainConfig", "apply_overrides", "from_dict", "validate"),
    "azjax.loop": ("DivergenceError", "RunResult", "train"),
    "azjax.presets": ("PRESETS", "preset"),
    "azjax.train_step": ("TrainState", "build", "init_state", "make_mesh", "make_train_step"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
_WHERE["experiment_main"] = "azjax.cli"
__all__ = ["elo", *_WHERE]


def __getattr__(name: str):
  if name == "experiment_main":
    return importlib.import_module("azjax.cli").main
  if name in _WHERE:
    return getattr(importlib.import_module(_WHERE[name]), name)
  if name == "elo":
    return importlib.import_module("azjax.elo")
  raise AttributeError(f"module 'azjax' has no attribute {name!r}")
