"""Can the 2x32 network's 3x3 convolutions run faster on this CPU? (issue 17 section 4: go9's self-play is 70% forward
passes, so a 2x over the peer needs them about 3x faster.) Times one 3x3 convolution at go9's size three ways, each
program compiled once and timed 30 times (median): XLA's own convolution, im2col (the 9 shifted copies concatenated,
one matmul) and 9 shifted 1x1 matmuls summed. Run it once per XLA_FLAGS setting to compare XLA:CPU's back ends:

  for f in "" --xla_cpu_use_xnnpack=true --xla_cpu_use_onednn=true \
      --xla_cpu_experimental_xnn_graph_fusion_mode=XNN_GRAPH_FUSION_MODE_GREEDY; do
    XLA_FLAGS="$f" python conv_paths.py; done                                     # conv_paths.txt
"""
import os
import time

import jax
import jax.numpy as jnp
import numpy as np


def median_time(fn, *args, n: int = 30) -> float:
  jax.block_until_ready(fn(*args))
  times = []
  for _ in range(n):
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    times.append(time.perf_counter() - start)
  return float(np.median(times))


def xla_conv(x, w):
  return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def shifted_copies(x):
  h, w = x.shape[1:3]
  p = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
  return [p[:, i:i + h, j:j + w, :] for i in range(3) for j in range(3)]


def im2col(x, w):
  cols = jnp.concatenate(shifted_copies(x), -1)
  return (cols.reshape(-1, cols.shape[-1]) @ w.reshape(-1, w.shape[-1])).reshape(*x.shape[:3], w.shape[-1])


def shifted_matmuls(x, w):
  return sum(jnp.einsum("bhwc,cd->bhwd", s, w[k // 3, k % 3]) for k, s in enumerate(shifted_copies(x)))


def main():
  print(f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}")
  for batch, side, channels in [(64, 9, 32), (64, 8, 32), (64, 9, 128)]:
    x = jax.random.normal(jax.random.key(0), (batch, side, side, channels))
    w = jax.random.normal(jax.random.key(1), (3, 3, channels, channels))
    flops = 2 * batch * side * side * 9 * channels * channels
    row = []
    for name, fn in [("xla conv", xla_conv), ("im2col", im2col), ("9 matmuls", shifted_matmuls)]:
      f = jax.jit(fn)
      np.testing.assert_allclose(f(x, w), xla_conv(x, w), rtol=2e-3, atol=2e-3)
      t = median_time(f, x, w)
      row.append(f"{name} {t * 1e3:.3f} ms ({flops / t / 1e9:.0f} GFLOP/s)")
    print(f"  [{batch}, {side}, {side}, {channels}] -> {channels}: " + "; ".join(row))


if __name__ == "__main__":
  main()
