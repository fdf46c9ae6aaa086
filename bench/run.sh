#!/usr/bin/env bash
# Measures what BENCHMARKS.md reports: a full `generate` (wall time, peak memory, time per stage, and an
# up-to-date rerun), the size of the generated crate, and the debug build time of the generated crate per
# feature. Whole commands; run from the workspace root. Prints Markdown. RUNS sets the number of runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export AZURE_REST_API_SPECS="${AZURE_REST_API_SPECS:-$PWD/../shared/azure-rest-api-specs}"
runs="${RUNS:-5}"

cargo build -q --release -p armgen
bin=target/release/armgen

median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else printf "%g\n", (v[NR/2]+v[NR/2+1])/2}'; }

echo "## generate (release binary, $runs runs, every configured version, into an empty folder)"
echo
echo "Wall time in ms (clock around the whole process), peak RSS from /usr/bin/time."
echo
echo "| run | wall ms | peak RSS MiB |"
echo "| --- | --- | --- |"
: >/tmp/armgen-walls; : >/tmp/armgen-rss; : >/tmp/armgen-stages
for i in $(seq 1 "$runs"); do
  out=$(mktemp -d)
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o /tmp/armgen-time "$bin" generate --verbose --out "$out" >/tmp/armgen-out 2>/dev/null
  t1=$(date +%s%N)
  wall=$(( (t1 - t0) / 1000000 )); rss=$(( $(cat /tmp/armgen-time) / 1024 ))
  echo "$wall" >>/tmp/armgen-walls; echo "$rss" >>/tmp/armgen-rss
  # `--verbose` prints "  <stage>  <ms> ms" under "timings:".
  sed -n '/^timings:/,$p' /tmp/armgen-out | awk '/ ms$/ {print $1, $2}' >>/tmp/armgen-stages
  echo "| $i | $wall | $rss |"
  rm -rf "$out"
done
echo "| **median** | **$(median </tmp/armgen-walls)** | **$(median </tmp/armgen-rss)** |"
echo

echo "### time per stage (median of $runs runs, ms; from \`armgen generate --verbose\`)"
echo
echo "| stage | ms |"
echo "| --- | --- |"
for stage in $(awk '!seen[$1]++ {print $1}' /tmp/armgen-stages); do
  echo "| $stage | $(awk -v s="$stage" '$1 == s {print $2}' /tmp/armgen-stages | median) |"
done
echo

echo "### up-to-date regeneration (nothing to write), $runs runs"
echo
out=$(mktemp -d)
"$bin" generate --out "$out" >/dev/null
: >/tmp/armgen-walls
for i in $(seq 1 "$runs"); do
  t0=$(date +%s%N); "$bin" generate --out "$out" >/dev/null; t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 )) >>/tmp/armgen-walls
done
rm -rf "$out"
echo "- median wall: $(median </tmp/armgen-walls) ms"
echo

echo "## generated crate"
echo
# generated/src and, with output.versionCrates, the version crates in generated/crates/.
rs_dirs=$(ls -d generated/src generated/crates 2>/dev/null)
rs_files=$(find $rs_dirs -name '*.rs' | wc -l)
rs_lines=$(cat $(find $rs_dirs -name '*.rs') | wc -l)
echo "- $rs_files Rust files, $rs_lines lines"
for v in generated/src/*/*/ generated/crates/*/src/; do
  [ -d "$v/arm" ] || continue
  echo "- ${v#generated/}: $(cat "$v"/arm/*.rs | wc -l) lines in $(ls "$v"/arm/*.rs | wc -l) files"
done
echo

echo "## cargo build -p aks-api (debug, non-incremental as in CI), dependencies prebuilt"
echo
echo "| features | wall s | peak RSS MiB |"
echo "| --- | --- | --- |"
# Every version feature alone, then all of them (the default), from the generated manifest.
versions=$(sed -n '/^\[features\]/,/^\[/p' generated/Cargo.toml | awk -F' = ' '/^v[0-9a-z]+ = / {print $1}')
# Every package of generated/ (the main crate and the version crates), as `-p` arguments.
generated=$(cargo metadata --no-deps --format-version 1 |
  python3 -c 'import json, sys; print(" ".join("-p " + p["name"] for p in json.load(sys.stdin)["packages"] if "/generated/" in p["manifest_path"]))')
for features in $versions "$(echo $versions | tr ' ' ',')"; do
  CARGO_INCREMENTAL=0 cargo build -q -p aks-api --no-default-features --features "$features"
  # shellcheck disable=SC2086
  CARGO_INCREMENTAL=0 cargo clean -q $generated
  CARGO_INCREMENTAL=0 /usr/bin/time -f "%e %M" -o /tmp/armgen-time \
    cargo build -q -p aks-api --no-default-features --features "$features"
  read -r wall kb </tmp/armgen-time
  echo "| $features | $wall | $((kb / 1024)) |"
done
