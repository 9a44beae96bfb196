"""python -m experiments.go9: AlphaZero on go9. `--help` lists the presets and every config field."""

import sys

import azjax

if __name__ == "__main__":
  sys.exit(azjax.experiment_main("go9"))
