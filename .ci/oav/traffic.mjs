// Helper of .ci/oav.sh (no dependencies): selects the recorded simulator exchanges that are operations of the
// specs, one folder per spec file, and reads oav's JSON reports.
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
    // A leading parameter (`/{scope}/providers/…`, `/{roleAssignmentId}`) is an ARM ID: one or more segments.
    const pattern =
      "^" +
      p
        .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
        .replace(/^\/\{[^}]+\}/, "/.+")
        .replace(/\{[^}]+\}/g, "[^/]+") +
      "$";
    const methods = Object.keys(item).filter((m) => m !== "parameters").map((m) => m.toUpperCase());
    // The most specific template wins (`/{scope}/providers/…/roleAssignments/{name}` over `/{roleAssignmentId}`).
    const literal = p.replace(/\{[^}]+\}/g, "").length;
    ops.push({ template, regex: new RegExp(pattern, "i"), methods, literal });
  }
  ops.sort((a, b) => b.literal - a.literal);
  return { version, ops };
}

function split(trafficDir, outDir, specRoot, specFiles) {
  // Several spec files share an api-version (a provider's spec is many files): each exchange goes to the file that
  // has its operation, one folder per file.
  const specs = [];
  for (const f of specFiles) {
    const abs = path.resolve(specRoot, f);
    const { version, ops } = operations(abs);
    if (ops.length === 0) continue; // definitions only (common types of a provider)
    const key = `${version}--${path.basename(f, ".json")}`;
    specs.push({ key, version, file: abs, ops, count: 0, operations: new Map() });
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
    const candidates = specs.filter((s) => s.version === version);
    if (candidates.length === 0) {
      skip(`api-version ${version} is not one of the validated spec versions`);
      continue;
    }
    let spec, op;
    for (const s of candidates) {
      op = s.ops.find((o) => o.regex.test(u.pathname) && o.methods.includes(method));
      if (op) {
        spec = s;
        break;
      }
    }
    if (!op) {
      skip(`${method} ${u.pathname.replace(/\/subscriptions\/[^/]+/, "/subscriptions/…")} is not an operation of the spec`);
      continue;
    }
    spec.count += 1;
    const key = `${method} ${op.template.replace(/^.*\/providers\/Microsoft\.[A-Za-z]+/, "…")}`;
    spec.operations.set(key, (spec.operations.get(key) || 0) + 1);
    const name = path.relative(trafficDir, file).split(path.sep).join("--");
    fs.mkdirSync(path.join(outDir, spec.key), { recursive: true });
    fs.writeFileSync(path.join(outDir, spec.key, name), JSON.stringify(traffic, null, 2));
  }
  console.log(`${files.length} exchanges recorded`);
  for (const spec of specs) {
    if (spec.count === 0) continue;
    fs.writeFileSync(path.join(outDir, `${spec.key}.spec`), spec.file);
    console.log(`${spec.count} to validate against ${spec.version} (${path.relative(specRoot, spec.file)}):`);
    for (const [op, n] of [...spec.operations].sort()) console.log(`  ${String(n).padStart(4)}  ${op}`);
  }
  for (const [reason, n] of [...skipped].sort()) console.log(`${n} not validated: ${reason}`);
  // Every API version of the specs must have been exercised (one of its files at least).
  const silent = [...new Set(specs.map((s) => s.version))].filter(
    (v) => !specs.some((s) => s.version === v && s.count > 0),
  );
  if (silent.length) {
    console.error(`API versions with no exchange to validate: ${silent.join(", ")}: did the scenario tests record traffic?`);
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
    // oav that loaded no operation validated nothing (a spec it could not resolve): never a pass.
    if (!(r.coveredOperations > 0)) {
      console.log(`  oav covered no operation of this spec: nothing was validated`);
      problems += 1;
    }
  }
  if (problems) {
    console.error(`oav found ${problems} problem(s)`);
    process.exit(1);
  }
}

// stand-ins: copies the spec files into OUT_ROOT (same relative paths) and writes, for every file they `$ref` that
// the spec root lacks (the network spec's privateEndpoint.json and natGateway.json, see its README), a stand-in
// defining each referenced definition as any object: what the generator's `overrides.opaqueFiles` does, so that
// oav can resolve the spec (without them it loads no operation and validates nothing).
function standIns(specRoot, outRoot, specFiles) {
  const missing = new Map(); // absolute path -> set of definition names
  const refs = (value, file) => {
    if (Array.isArray(value)) return value.forEach((v) => refs(v, file));
    if (!value || typeof value !== "object") return;
    for (const [k, v] of Object.entries(value)) {
      if (k === "x-ms-examples") continue;
      if (k === "$ref" && typeof v === "string") {
        const [target, pointer = ""] = v.split("#");
        if (!target) continue;
        const abs = path.resolve(path.dirname(file), target);
        if (!fs.existsSync(abs)) {
          if (!missing.has(abs)) missing.set(abs, new Set());
          const m = pointer.match(/^\/definitions\/([^/]+)$/);
          if (m) missing.get(abs).add(m[1]);
        }
      } else refs(v, file);
    }
  };
  // A schema `type` that is no JSON Schema type (the network spec's PrivateLinkServiceProperties.accessMode says
  // "enum") makes oav's schema compiler refuse the whole response schema: it loses its `type` in the copy (any
  // value), as the generator's `overrides.types.X.opaque` stands in any JSON for it.
  const types = new Set(["array", "boolean", "integer", "number", "null", "object", "string", "file"]);
  const repair = (value, at, file) => {
    if (Array.isArray(value)) return value.forEach((v, i) => repair(v, `${at}/${i}`, file));
    if (!value || typeof value !== "object") return;
    if (typeof value.type === "string" && !types.has(value.type) && at.includes("/properties/")) {
      console.log(`oav's copy of ${file}: ${at}/type ${JSON.stringify(value.type)} is no JSON Schema type: removed`);
      delete value.type;
    }
    // Extensions (`x-ms-arm-id-details` has `type`s of its own) are not schemas.
    for (const [k, v] of Object.entries(value)) if (!k.startsWith("x-ms-")) repair(v, `${at}/${k}`, file);
  };
  for (const f of specFiles) {
    const src = path.resolve(specRoot, f);
    const dst = path.resolve(outRoot, f);
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    const doc = JSON.parse(fs.readFileSync(src, "utf8"));
    refs(doc, src);
    repair(doc, "", f);
    fs.writeFileSync(dst, JSON.stringify(doc, null, 2));
  }
  for (const [abs, names] of missing) {
    const definitions = {};
    for (const n of [...names].sort()) {
      definitions[n] = { type: "object", description: "Stand-in: the file is not in the spec root." };
    }
    const dst = path.resolve(outRoot, path.relative(specRoot, abs));
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    const standIn = { swagger: "2.0", info: { title: "stand-in", version: "0" }, paths: {}, definitions };
    fs.writeFileSync(dst, JSON.stringify(standIn, null, 2));
    console.log(`stand-in for ${path.relative(specRoot, abs)}: ${[...names].sort().join(", ")}`);
  }
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "split" && args.length >= 4) split(args[0], args[1], args[2], args.slice(3));
else if (cmd === "stand-ins" && args.length >= 3) standIns(args[0], args[1], args.slice(2));
else if (cmd === "report" && args.length >= 1) report(args);
else {
  console.error("usage: traffic.mjs split TRAFFIC OUT SPEC_ROOT SPEC... | stand-ins SPEC_ROOT OUT_ROOT SPEC... | report REPORT.json...");
  process.exit(2);
}
