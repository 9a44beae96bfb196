import importlib
import re
from pathlib import Path

from conftest import ROOT


def test_every_module_the_architecture_map_names_exists():
  text = (Path(ROOT) / "docs" / "architecture.md").read_text()
  names = sorted(set(re.findall(r"`(azjax(?:\.\w+)?)`", text)))
  assert len(names) >= 15, names
  for name in names:
    importlib.import_module(name)  # ImportError names the module the map got wrong
  modules = {p.stem for p in (Path(ROOT) / "azjax").glob("*.py") if p.stem != "__init__"}
  assert modules <= {n.split(".")[1] for n in names if "." in n}, "a module the map leaves out"
