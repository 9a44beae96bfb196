"""Totals of compile_profile.py's records by test file; with two files, both side by side and the change.

  python docs/results/suite/summarise.py BEFORE.jsonl [AFTER.jsonl]
"""
import collections
import json
import sys


def load(path: str) -> dict:
  return {r["name"]: r for r in map(json.loads, open(path))}


def main(paths: list[str]) -> None:
  runs = [load(p) for p in paths]
  for key in ("wall", "compile_s", "trace_s"):
    print(f"{key}: " + " -> ".join(f"{sum(r[key] for r in run.values()):.0f} s" for run in runs))
  files = collections.defaultdict(lambda: [0.0] * len(runs))
  for i, run in enumerate(runs):
    for name, r in run.items():
      files[name.split("::")[0]][i] += r["wall"]
  print("| file | " + " | ".join(paths) + (" | change |" if len(runs) == 2 else " |"))
  print("|---|" + "---:|" * (len(runs) + (len(runs) == 2)))
  for name, t in sorted(files.items(), key=lambda kv: -kv[1][0]):
    cells = [f"{x:.1f}" for x in t] + ([f"{t[1] - t[0]:+.1f}"] if len(runs) == 2 else [])
    print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
  main(sys.argv[1:])
