#!/usr/bin/env bash
# The reconciler scale benchmark (BENCHMARKS.md, "Reconciler at scale"): builds the release binaries of
# aks-reconciler, arm-simulator and fake-apiserver and the driver reconciler/examples/scale.rs, then runs
# CLUSTERS ManagedClusters with POOLS AgentPools each (default 1000 × 3). Prints Markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release --locked -p aks-reconciler -p arm-simulator -p fake-apiserver --bins --example scale
target/release/examples/scale --bin-dir target/release --clusters "${CLUSTERS:-1000}" --pools "${POOLS:-3}" \
  --concurrency "${CONCURRENCY:-32}" --idle-secs "${IDLE_SECS:-30}"
