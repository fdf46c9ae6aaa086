#!/usr/bin/env bash
# Adopting a new API version is one config entry and a regeneration, tests included: proved on a copy.
#
# Copies the repository (without target/ and .git) to a temporary folder, makes a spec root there that is a copy of
# the real one plus a synthetic ARM API version (the newest AKS spec file under the next year's date, its
# `info.version` changed to match, with a copy of its examples), adds that version to the copy's azure-arm.yaml (one entry
# under `groups.containerservice.versions`) and to its specs/pin.json, regenerates, and runs the whole test suite
# (`cargo test --workspace`) against it. Snapshot assertions are forced to pass and their changes listed (a new
# version adds snapshot files; that is the only kind of test change allowed); any other failing test fails this
# script. Nothing in the repository is modified.
#
# Usage: bash tests/synthetic-version.sh [KUBE_VERSION]   (default v3beta1)
# Env: AZURE_REST_API_SPECS (the spec root, required), CARGO_TARGET_DIR (shared with the main build: dependencies
# are reused; the copy's own crates build anew, and are removed at the end), KEEP=1 keeps the copy (and what it
# built) for inspection.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
kube_version="${1:-v3beta1}"
: "${AZURE_REST_API_SPECS:?set AZURE_REST_API_SPECS to the spec root}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
start=$SECONDS

work=$(mktemp -d)
# What the copy builds in the shared target directory (its workspace crates under other paths: as much again as the
# main build's) is removed at the end: every file written there after this stamp. Cargo rebuilds whatever of that
# a later build needs.
stamp="$work/stamp"
touch "$stamp"
cleanup() {
  if [ -d "$CARGO_TARGET_DIR" ]; then find "$CARGO_TARGET_DIR" -newer "$stamp" -type f -delete 2>/dev/null || true; fi
  rm -rf "$work"
}
if [ "${KEEP:-}" = 1 ]; then echo "keeping $work"; else trap cleanup EXIT; fi
copy="$work/repo"
mkdir -p "$copy"
tar --exclude=./target --exclude=./.git --exclude='./specs/azure-rest-api-specs' -cf - . | tar -xf - -C "$copy"

# The spec root: a copy of the real one (about 5 MB; links would be refused, as the generator confines reads to
# the spec root with symlinks resolved), with the new version's folder added.
cp -R "$AZURE_REST_API_SPECS" "$work/specs"
chmod -R u+w "$work/specs"
python3 - "$AZURE_REST_API_SPECS" "$work/specs" "$copy" "$kube_version" <<'EOF'
import hashlib, json, os, re, shutil, sys
real, root, copy, kube = sys.argv[1:5]
aks = "specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable"
versions = sorted(v for v in os.listdir(os.path.join(real, aks)) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v))
newest = versions[-1]
year = int(newest[:4]) + 1
synthetic = f"{year}-01-01"
os.makedirs(os.path.join(root, aks, synthetic))
spec = json.load(open(os.path.join(real, aks, newest, "managedClusters.json")))
spec["info"]["version"] = synthetic
text = json.dumps(spec, indent=2) + "\n"
target = os.path.join(root, aks, synthetic, "managedClusters.json")
open(target, "w").write(text)
examples = os.path.join(real, aks, newest, "examples")
if os.path.isdir(examples):
    shutil.copytree(examples, os.path.join(root, aks, synthetic, "examples"))

# The one config entry.
config = os.path.join(copy, "azure-arm.yaml")
lines = open(config).read().split("\n")
at = next(i for i, l in enumerate(lines) if l == "    versions:")
entry = [f"      {kube}:", f'        armApiVersion: "{synthetic}"', f"        specFiles: [stable/{synthetic}/managedClusters.json]"]
lines[at + 1:at + 1] = entry
open(config, "w").write("\n".join(lines))

# Its pin.
pin_file = os.path.join(copy, "specs/pin.json")
pin = json.load(open(pin_file))
data = text.encode()
pin["files"].append({"path": f"{aks}/{synthetic}/managedClusters.json", "upstream_commit": "0" * 40,
                     "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
pin["files"].sort(key=lambda f: f["path"])
open(pin_file, "w").write(json.dumps(pin, indent=2) + "\n")
print(f"synthetic version {kube} = ARM {synthetic} (the {newest} spec), config entry:")
print("\n".join(entry))
EOF

export AZURE_REST_API_SPECS="$work/specs"
cd "$copy"
echo "=== regenerate ($((SECONDS - start))s)"
cargo run --locked -q -p armgen -- generate
# The new version is a crate of its own (output.versionCrates): the lock file gains it, and nothing else changes.
cargo update --workspace --offline -q
echo "=== cargo test --workspace ($((SECONDS - start))s)"
# CI=true: a test that needs the spec root fails rather than being ignored if it cannot find it. INSTA_FORCE_PASS
# lets snapshot assertions pass, INSTA_UPDATE=always writes what they saw.
status=0
CI=true INSTA_FORCE_PASS=1 INSTA_UPDATE=always cargo test --workspace --locked --no-fail-fast -q 2>&1 | tee "$work/test.log" |
  grep -E "^test result|FAILED|panicked" || true
grep -q "^test result: FAILED\|^error: test failed\|^error\[" "$work/test.log" && status=1
echo "=== snapshot files the new version adds or changes:"
(cd "$copy" && find . -path ./target -prune -o -name '*.snap' -newer "$copy/azure-arm.yaml" -print | sort) || true
if [ $status -ne 0 ]; then
  grep -B2 -A20 "^---- " "$work/test.log" | head -200 >&2
  echo "synthetic version $kube_version: tests failed ($((SECONDS - start))s)" >&2
  exit 1
fi
echo "synthetic version $kube_version: every test passed with no test edited ($((SECONDS - start))s)"
