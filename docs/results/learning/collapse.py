import sys, time, jax
from azjax import preset, apply_overrides, build, make_mesh, init_state, make_train_step
cfg = apply_overrides(preset("go9","cpu"), ["search.go_pass=pgx", "train.updates_per_step=8", "replay.window=16384"] + sys.argv[2:])
prog = build(cfg); mesh = make_mesh(); st = init_state(prog, mesh); step = make_train_step(prog, mesh)
keys = ["updates","value_loss","games","game_length_p50","end_double_pass","early_pass_end","first_player_win","policy_entropy","search_kl","value_std","value_saturated","value_saturated_first","value_saturated_second","value_mean_first","value_mean_second"]
print("step," + ",".join(keys))
for i in range(int(sys.argv[1])):
  st, m = step(st); m = jax.device_get(m)
  print(f"{i+1}," + ",".join(f"{float(m[k]):.4g}" for k in keys), flush=True)
