"""python -m experiments.ablations [RECIPE [sweep options]]: list the recipes, or run one as a sweep."""

import sys

from experiments import sweep
from experiments.ablations import RECIPES, sweep_args


def main(argv=None) -> int:
  argv = sys.argv[1:] if argv is None else argv
  if not argv or argv[0] in ("-h", "--help", "list"):
    print(__doc__.strip() + "\n\nrecipes:")
    for name, recipe in RECIPES.items():
      print(f"  {name:<14} {recipe.question}\n  {'':<14} --grid " + " --grid ".join(recipe.grid))
    return 0
  if argv[0] not in RECIPES:
    print(f"error: unknown recipe {argv[0]!r}; choose one of {', '.join(RECIPES)}", file=sys.stderr)
    return 2
  return sweep.main(sweep_args(argv[0], argv[1:]))


if __name__ == "__main__":
  sys.exit(main())
