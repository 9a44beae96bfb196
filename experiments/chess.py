"""python -m experiments.chess: AlphaZero on chess. `--help` lists the presets and every config field."""

import sys

import azjax

if __name__ == "__main__":
  sys.exit(azjax.experiment_main("chess"))
