"""python -m experiments.go: AlphaZero on go. `--help` lists the presets and every config field."""

import sys

import azjax

if __name__ == "__main__":
  sys.exit(azjax.experiment_main("go"))
