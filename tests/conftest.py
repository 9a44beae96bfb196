import os
import sys
import tempfile

# Most of the suite's time is XLA compiling the same few smoke-size programs again in each test and in each
# engine or CLI subprocess. A persistent compilation cache shared by the xdist workers and the subprocesses
# (they inherit these variables) compiles each once. A size limit turns on jax's file lock, which the
# concurrent workers need. Only programs that took a second to compile are kept: each write scans the whole
# cache under that lock (jax's LRU eviction), so caching the thousands of tiny eager-op programs as well cost
# more than they compile in (test_search.py alone: 360 of 970 s in that scan; 533 s in all with this limit).
# Set JAX_COMPILATION_CACHE_DIR to keep the cache elsewhere.
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(tempfile.gettempdir(), "azjax-tests-xla-cache"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "1")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(4 << 30))
# The rest of the compile time is XLA:CPU's LLVM back end; at -O0 it compiles the smoke programs in two thirds of
# the time (a connect four train-and-play test 88 s against 152 s, a chess search test 67 s against 99 s, one core
# each), and they run on a handful of positions. Tests that train for real run their runs optimised, in a process
# of their own (`xla_env(optimised=True)`): at -O0 tic-tac-toe's learning test took 611 s against 324 s.
FAST_COMPILE = "--xla_backend_optimization_level=0"
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
  os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {FAST_COMPILE}".strip()
# The experiments' CLI splits a CPU into one device a core (`--cpu-devices auto`); the suite's subprocesses keep one,
# as the in-process runs they are compared with bit for bit do, and as the xdist workers already fill the cores.
# tests/test_distributed.py runs the split itself.
os.environ.setdefault("AZJAX_CPU_DEVICES", "1")
# A test that computes on many positions jits its program with `compiler_options=COMPUTE`: -O1 for that one program
# (the Dirichlet test's 512 chess searches: 8.7 s to compile and 5.0 s to run, against 5.7 s and 16.9 s at -O0).
COMPUTE = {"xla_backend_optimization_level": 1}

import jax  # noqa: E402  (after the cache settings, which jax reads when imported)
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # for minimax.py and crashes.py

from azjax.games import batched_init, batched_step  # noqa: E402,F401  (jit(vmap(env.init / env.step)), the library's, one per env)
from crashes import pytest_handlecrashitem, pytest_report_teststatus  # noqa: E402,F401  (hooks: a worker lost to a native crash)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pytest_collection_modifyitems(config, items):
  """Slow tests first: under pytest-xdist (-n) they then run beside the many short ones instead of after them."""
  items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def strict_rank_promotion():
  """Our own code runs with rank promotion as an error (pgx's Go rules rely on it, so not globally)."""
  with jax.numpy_rank_promotion("raise"):
    yield



def untrained_agent(game: str, simulations: int = 4):
  """An agent with freshly initialised weights at the smoke preset's size (no training: engines and arenas only)."""
  import azjax
  from azjax.agent import Agent
  from azjax.games import make_env
  from azjax.network import make_network
  config = azjax.apply_overrides(azjax.preset(game, "smoke"), [f"search.num_simulations={simulations}"])
  env = make_env(game)
  obs = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 1)).observation
  params, bn_state = make_network(config.network, env.num_actions).init(jax.random.PRNGKey(0), obs)
  return Agent(config=config, params=params, bn_state=bn_state, step=0)


def untrained_checkpoint(game: str, directory) -> str:
  """A real orbax checkpoint of an untrained smoke-size agent, for engines started as processes."""
  import azjax
  from azjax import checkpoint as ckpt
  config = azjax.preset(game, "smoke")
  program = azjax.build(config)
  state = azjax.init_state(program, azjax.make_mesh())
  ckpt.save(ckpt.manager(os.path.join(directory, "checkpoints")), state, config)
  return str(directory)


def run_module(capfd, module: str, *args: str) -> tuple[int, str, str]:
  """`python -m module args` as -m runs it (runpy), in this process: (exit code, stdout, stderr). It skips a new
  interpreter's imports and traces, and reuses this process's compiled train steps; what needs a process of its
  own (a kill, another device count, several processes) starts one."""
  import runpy
  argv = sys.argv
  sys.argv = [module, *args]
  imported = sys.modules.pop(module, None)  # a test's own import of it: runpy warns of running it twice
  try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    code = 0
  except SystemExit as e:
    code = e.code if isinstance(e.code, int) else int(e.code is not None)
  finally:
    sys.argv = argv
    if imported is not None:
      sys.modules[module] = imported
  return code, *capfd.readouterr()


def xla_env(*flags: str, optimised: bool = False, **variables) -> dict:
  """The environment for a subprocess: this one's XLA flags (fast compiles, unless `optimised`) plus `flags`."""
  inherited = os.environ.get("XLA_FLAGS", "").split()
  kept = [f for f in inherited if not (optimised and f == FAST_COMPILE)]
  return dict(os.environ, XLA_FLAGS=" ".join(kept + list(flags)), **variables)
