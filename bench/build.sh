#!/usr/bin/env bash
# Debug build cost of the generated crate, per version feature and with every feature (the default): what issue 19's
# build targets measure. For each feature set, RUNS times (default 3): `cargo clean` of every generated package
# (`aks-api` and, with `output.versionCrates`, its per-version crates in generated/crates/), then
# `cargo build -p aks-api` (non-incremental, as in CI; dependencies built first and not counted), timed whole by
# /usr/bin/time: so a version's figure includes its hub's crate when the feature set turns the hub on. Prints a Markdown table of the median wall time, the median CPU time (user + system: less
# sensitive than wall time to a busy or throttled machine) and the largest peak RSS of the runs (the compiler's, as
# rustc is cargo's largest child). Run from the workspace root of any checkout (e.g. a worktree of an older commit,
# with CARGO_TARGET_DIR shared so that dependencies are built once).
set -euo pipefail
runs=${RUNS:-3}
export CARGO_INCREMENTAL=0
# Every package of generated/ (the main crate and the version crates), as `-p` arguments.
generated=$(cargo metadata --no-deps --format-version 1 |
  python3 -c 'import json, sys; print(" ".join("-p " + p["name"] for p in json.load(sys.stdin)["packages"] if "/generated/" in p["manifest_path"]))')
versions=$(sed -n '/^\[features\]/,/^\[/p' generated/Cargo.toml | awk -F' = ' '/^v[0-9a-z]+ = / {print $1}')
all=$(echo $versions | tr ' ' ',')
echo "| features | wall s (median of $runs) | CPU s (median) | peak RSS MiB (max) |"
echo "| --- | ---: | ---: | ---: |"
for features in $versions "$all"; do
  cargo build -q -p aks-api --no-default-features --features "$features"
  walls=() cpus=() peak=0
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086
    cargo clean -q $generated
    /usr/bin/time -f "%e %U %S %M" -o /tmp/armgen-build-time \
      cargo build -q -p aks-api --no-default-features --features "$features"
    read -r wall user sys kb </tmp/armgen-build-time
    walls+=("$wall")
    cpus+=("$(echo "$user + $sys" | bc)")
    (( kb > peak )) && peak=$kb
  done
  median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  label=$features
  [ "$features" = "$all" ] && label="all ($features)"
  echo "| $label | $(median "${walls[@]}") | $(median "${cpus[@]}") | $((peak / 1024)) |"
done
