#!/usr/bin/env bash
# Azure's own validator on the simulator's traffic: records every exchange of the reconciler scenario tests
# (reconciler/tests/scenarios.rs, every_kind.rs, example_set.rs, actions.rs, simulator/tests/actions.rs, which POSTs
# every action of the registry, and simulator/tests/views.rs, which GETs every view of the registry:
# ARMGEN_TRAFFIC_DIR, see reconciler/tests/common/mod.rs), keeps
# those that are operations of a spec file of their api-version (every provider of azure-arm.yaml), and runs `oav validate-traffic` on them against
# the real spec files. Fails on any error oav reports, request or response, and prints them.
#
# Not validated (counted in the output): operation-status polls (the Azure-AsyncOperation/Location URLs are
# ARM's, not operations of the resource provider's spec), exchanges without a response (fault injection drops the
# connection), and anything else that is not an operation of the spec, named.
#
# oav (npm, pinned by .ci/oav/package-lock.json) is installed with `npm ci` into a cache outside the repository:
# $ARMGEN_CACHE (default $HOME/.cache/armgen)/oav-<lock hash>. Needs node (>= 18) and npm.
set -euo pipefail
cd "$(dirname "$0")/.."

export AZURE_REST_API_SPECS="${AZURE_REST_API_SPECS:-$PWD/../shared/azure-rest-api-specs}"
start=$SECONDS

command -v node >/dev/null && command -v npm >/dev/null || { echo "oav.sh: node and npm are needed" >&2; exit 1; }
# The spec files generation reads (specs/pin.json, every file but the shared common-types): a new API version is
# validated as soon as its spec is pinned, with no edit here.
mapfile -t SPECS < <(node -e 'for (const f of require("./specs/pin.json").files) if (!f.path.includes("/common-types/")) console.log(f.path)')
[ ${#SPECS[@]} -gt 0 ] || { echo "oav.sh: no spec files in specs/pin.json" >&2; exit 1; }
echo "validating against ${#SPECS[@]} spec files: ${SPECS[*]}"
lock_hash=$(sha256sum .ci/oav/package-lock.json | cut -c1-12)
prefix="${ARMGEN_CACHE:-$HOME/.cache/armgen}/oav-$lock_hash"
oav="$prefix/node_modules/.bin/oav"
if [ ! -x "$oav" ]; then
  echo "installing oav into $prefix"
  rm -rf "$prefix" && mkdir -p "$prefix"
  cp .ci/oav/package.json .ci/oav/package-lock.json "$prefix/"
  npm ci --prefix "$prefix" --no-audit --no-fund --loglevel=error
fi
echo "oav $("$oav" --version) ($((SECONDS - start))s)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The scenario tests, recording. `--workspace` (not `-p aks-reconciler`) unifies features as `cargo test --workspace`
# does, so CI reuses that build instead of compiling aks-api a second time.
ARMGEN_TRAFFIC_DIR="$work/traffic" cargo test --workspace --locked -q --test scenarios --test every_kind --test example_set --test actions --test views
echo "scenario tests recorded ($((SECONDS - start))s)"

# oav reads a copy of the pinned files (common-types included) with stand-ins for the files the spec root lacks.
mapfile -t ALL_SPECS < <(node -e 'for (const f of require("./specs/pin.json").files) console.log(f.path)')
node .ci/oav/traffic.mjs stand-ins "$AZURE_REST_API_SPECS" "$work/specs" "${ALL_SPECS[@]}"
node .ci/oav/traffic.mjs split "$work/traffic" "$work/validate" "$work/specs" "${SPECS[@]}"

reports=()
for spec_file in "$work"/validate/*.spec; do
  version=$(basename "$spec_file" .spec)
  # oav writes its HTML report and logs into the current folder and ~/oav_output: keep them in $work. Its exit
  # code is 1 even for a clean run (its HTML report template is missing from the package): the JSON report
  # decides, and a missing one is an error.
  (cd "$work" && "$oav" validate-traffic "$work/validate/$version" "$(cat "$spec_file")" \
    --jsonReport "$work/oav-$version.json" --report "$work/oav-$version.html" \
    -l error -f "$work/oav-$version.log" >"$work/oav-$version.out" 2>&1) || true
  if [ ! -s "$work/oav-$version.json" ]; then
    cat "$work/oav-$version.out" >&2
    echo "oav wrote no report for $version" >&2
    exit 1
  fi
  reports+=("$work/oav-$version.json")
done
node .ci/oav/traffic.mjs report "${reports[@]}"
echo "oav: no errors ($((SECONDS - start))s)"
