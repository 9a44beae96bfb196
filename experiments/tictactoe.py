"""python -m experiments.tictactoe: AlphaZero on tictactoe. `--help` lists the presets and every config field."""

import sys

import azjax

if __name__ == "__main__":
  sys.exit(azjax.experiment_main("tictactoe"))
