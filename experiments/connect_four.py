"""python -m experiments.connect_four: AlphaZero on connect_four. `--help` lists the presets and every config field."""

import sys

import azjax

if __name__ == "__main__":
  sys.exit(azjax.experiment_main("connect_four"))
