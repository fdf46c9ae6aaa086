#!/usr/bin/env bash
# Measures what BENCHMARKS.md reports: a full `generate` (wall time, peak memory), the size of the generated
# crate, and the debug build time of the generated crate per feature. Whole commands, timed with
# /usr/bin/time; run from the workspace root. Prints Markdown rows.
set -euo pipefail
cd "$(dirname "$0")/.."
export AZURE_REST_API_SPECS="${AZURE_REST_API_SPECS:-$PWD/../shared/azure-rest-api-specs}"
runs="${RUNS:-5}"

cargo build -q --release -p armgen
bin=target/release/armgen

echo "## generate (release binary, $runs runs, into an empty folder)"
echo
echo "| run | wall s | peak RSS MiB |"
echo "| --- | --- | --- |"
for i in $(seq 1 "$runs"); do
  out=$(mktemp -d)
  /usr/bin/time -f "%e %M" -o /tmp/armgen-time "$bin" generate --out "$out" >/dev/null
  read -r wall kb </tmp/armgen-time
  echo "| $i | $wall | $((kb / 1024)) |"
  rm -rf "$out"
done
echo

echo "## generated crate"
echo
rs_files=$(find generated/src -name '*.rs' | wc -l)
rs_lines=$(cat $(find generated/src -name '*.rs') | wc -l)
echo "- $rs_files Rust files, $rs_lines lines"
for v in generated/src/*/*/; do
  [ -d "$v/arm" ] || continue
  echo "- $(basename "$v"): $(cat "$v"/arm/*.rs | wc -l) lines in $(ls "$v"/arm/*.rs | wc -l) files"
done
echo

echo "## cargo build -p aks-api (debug), dependencies prebuilt"
echo
echo "| features | wall s |"
echo "| --- | --- |"
for features in v1beta1 v2alpha1 "v1beta1,v2alpha1"; do
  cargo build -q -p aks-api --no-default-features --features "$features"
  touch generated/src/lib.rs
  /usr/bin/time -f "%e" -o /tmp/armgen-time cargo build -q -p aks-api --no-default-features --features "$features"
  echo "| $features | $(cat /tmp/armgen-time) |"
done
