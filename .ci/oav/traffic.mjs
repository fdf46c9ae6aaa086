// Helper of .ci/oav.sh (no dependencies): selects the recorded simulator exchanges that are operations of the
// AKS specs, one folder per ARM API version, and reads oav's JSON reports.
//
//   node traffic.mjs split TRAFFIC_DIR OUT_DIR SPEC_ROOT SPEC_FILE...   (SPEC_FILE relative to SPEC_ROOT)
//   node traffic.mjs report REPORT.json...
//
// split: an exchange is validated when its api-version is the version of one of the spec files and its method
// and path are an operation of that file (`paths`, `x-ms-paths`); the rest is counted by reason and not
// validated: operation-status polls (the Azure-AsyncOperation / Location URLs, which ARM serves outside the
// resource provider's spec), requests the simulator answered without a response (dropped connections), and
// anything else (named). Writes OUT_DIR/<api-version>/<test>--<file>.json and OUT_DIR/<api-version>.spec
// (the spec file's absolute path), and prints the counts.
//
// report: prints every error of the reports and exits 1 if there is one (oav's own exit code is 1 even for a
// clean run: its HTML report template is missing from the package).

import fs from "node:fs";
import path from "node:path";

function walk(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(p));
    else if (entry.name.endsWith(".json")) out.push(p);
  }
  return out.sort();
}

function operations(specFile) {
  const spec = JSON.parse(fs.readFileSync(specFile, "utf8"));
  const version = spec.info.version;
  const ops = [];
  for (const [template, item] of Object.entries({ ...spec.paths, ...(spec["x-ms-paths"] || {}) })) {
    const [p] = template.split("?");
    const pattern = "^" + p.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+") + "$";
    const methods = Object.keys(item).filter((m) => m !== "parameters").map((m) => m.toUpperCase());
    ops.push({ template, regex: new RegExp(pattern, "i"), methods });
  }
  return { version, ops };
}

function split(trafficDir, outDir, specRoot, specFiles) {
  const specs = new Map();
  for (const f of specFiles) {
    const abs = path.resolve(specRoot, f);
    const { version, ops } = operations(abs);
    specs.set(version, { file: abs, ops, count: 0, operations: new Map() });
    fs.mkdirSync(path.join(outDir, version), { recursive: true });
    fs.writeFileSync(path.join(outDir, `${version}.spec`), abs);
  }
  const skipped = new Map();
  const skip = (reason) => skipped.set(reason, (skipped.get(reason) || 0) + 1);
  const files = walk(trafficDir);
  for (const file of files) {
    const traffic = JSON.parse(fs.readFileSync(file, "utf8"));
    const { method, url } = traffic.liveRequest;
    const u = new URL(url);
    const status = Number(traffic.liveResponse.statusCode);
    const version = u.searchParams.get("api-version");
    if (/\/(operations|operationresults)\/[^/]+$/i.test(u.pathname) && !u.pathname.startsWith("/providers/")) {
      skip("operation-status polls (ARM's async-operation URLs, not operations of the spec)");
      continue;
    }
    if (!(status >= 100)) {
      skip("no response (connection dropped by fault injection)");
      continue;
    }
    const spec = specs.get(version);
    if (!spec) {
      skip(`api-version ${version} is not one of the validated spec versions`);
      continue;
    }
    const op = spec.ops.find((o) => o.regex.test(u.pathname) && o.methods.includes(method));
    if (!op) {
      skip(`${method} ${u.pathname.replace(/\/subscriptions\/[^/]+/, "/subscriptions/…")} is not an operation of the spec`);
      continue;
    }
    spec.count += 1;
    const key = `${method} ${op.template.replace(/^.*\/providers\/Microsoft\.ContainerService/, "…")}`;
    spec.operations.set(key, (spec.operations.get(key) || 0) + 1);
    const name = path.relative(trafficDir, file).split(path.sep).join("--");
    fs.writeFileSync(path.join(outDir, version, name), JSON.stringify(traffic, null, 2));
  }
  console.log(`${files.length} exchanges recorded`);
  for (const [version, spec] of specs) {
    console.log(`${spec.count} to validate against ${version} (${path.relative(specRoot, spec.file)}):`);
    for (const [op, n] of [...spec.operations].sort()) console.log(`  ${String(n).padStart(4)}  ${op}`);
  }
  for (const [reason, n] of [...skipped].sort()) console.log(`${n} not validated: ${reason}`);
  if ([...specs.values()].some((s) => s.count === 0)) {
    console.error("an API version has no exchange to validate: did the scenario tests record traffic?");
    process.exit(1);
  }
}

function report(files) {
  let problems = 0;
  for (const file of files) {
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    const errors = r.errors || [];
    const failed = r.failedOperations || 0;
    console.log(`${path.basename(file)}: ${r.coveredOperations ?? "?"} of the spec's ${r.allOperations ?? "?"} ` +
      `operations covered, ${failed} failed, ${errors.length} errors`);
    // Each error once, with how often it occurred.
    const seen = new Map();
    for (const e of errors) {
      const line = `${e.operationId} (${e.issueSource}): ${e.errorCode}: ${e.errorMessage}` +
        (e.schemaPathWithPosition ? ` [${e.schemaPathWithPosition.replace(/^.*\/specification\//, "specification/")}]` : "");
      seen.set(line, (seen.get(line) || 0) + 1);
    }
    for (const [line, n] of seen) console.log(`  ${n}x ${line}`);
    for (const x of r.runtimeExceptions || []) console.log(`  runtime exception: ${JSON.stringify(x)}`);
    problems += errors.length + (errors.length ? 0 : failed) + (r.runtimeExceptions || []).length;
  }
  if (problems) {
    console.error(`oav found ${problems} problem(s)`);
    process.exit(1);
  }
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "split" && args.length >= 4) split(args[0], args[1], args[2], args.slice(3));
else if (cmd === "report" && args.length >= 1) report(args);
else {
  console.error("usage: traffic.mjs split TRAFFIC OUT SPEC_ROOT SPEC... | report REPORT.json...");
  process.exit(2);
}
