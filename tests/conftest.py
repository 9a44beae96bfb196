import os
import sys

import jax
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # for minimax.py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def strict_rank_promotion():
  """Our own code runs with rank promotion as an error (pgx's Go rules rely on it, so not globally)."""
  with jax.numpy_rank_promotion("raise"):
    yield
