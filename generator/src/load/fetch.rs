//! Fetching the spec root on a fresh machine: the files `specs/pin.json` names, each at its pinned upstream
//! commit, over HTTP(S), verified by SHA-256 and size before use.
//!
//! The destination is the default spec root `specs/azure-rest-api-specs` (git-ignored), which armgen then
//! *manages*: it holds a marker file ([`MARKER`]) and, on every run with fetching on, armgen checks each pinned
//! file by hash and fetches only those that are missing or differ (a `pin.json` moved to new commits, an edited
//! file). A folder at that place without the marker — a user's own sparse checkout — is used as it is and never
//! written to.
//!
//! - URL of a file: `<base>/<upstream_commit>/<path>`; the base defaults to [`DEFAULT_BASE_URL`] (GitHub's raw
//!   content host) and is set with `--spec-base-url`, [`BASE_URL_ENV`] or `Builder::spec_base_url`, for mirrors
//!   and tests. Only `http` and `https`.
//! - Integrity comes from the pin, not from the transport: a body is read up to the pinned size (at most
//!   [`MAX_FILE_BYTES`]) plus one byte, and refused unless its size and SHA-256 are the pinned ones. Connections
//!   time out after [`CONNECT_TIMEOUT`], a whole request after [`REQUEST_TIMEOUT`].
//! - Writes are atomic: a temporary file in the same folder, synced, then renamed over the target, so an
//!   interrupted fetch never leaves a file under the pinned name that is not the pinned bytes. What was verified
//!   stays: running again resumes.
//! - Fix-ups: a pinned file may differ from upstream by declared byte patches (`upstream.patches` in
//!   `pin.json`; today one, a trailing comma that makes upstream's `2024-09-01/managedClusters.json` invalid
//!   JSON). The download is verified against the *upstream* size and hash, the patches are applied (each checks
//!   the bytes it replaces), and the result is verified against the pinned size and hash. See
//!   `specs/README.md`.
//!
//! HTTP client: `reqwest`'s blocking client with rustls, because `reqwest` (with `rustls-tls`) is already in the
//! workspace's dependency graph (the CLI and the reconciler use it), so this adds only its `blocking` feature
//! rather than a second HTTP and TLS stack. The blocking client runs its own runtime thread; generation runs on
//! a thread of its own ([`crate::pipeline::builder::Builder::generate`]), so it is not called from inside an async
//! runtime. Hashes with `sha2`; temporary files with `tempfile`.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, Location, Result};

/// The environment variable naming the base URL files are fetched from.
pub const BASE_URL_ENV: &str = "ARMGEN_SPEC_BASE_URL";
/// The default base URL: GitHub's raw content of azure-rest-api-specs.
pub const DEFAULT_BASE_URL: &str = "https://raw.githubusercontent.com/Azure/azure-rest-api-specs";
/// The pin file, relative to the config file's folder.
pub const PIN_FILE: &str = "specs/pin.json";
/// The marker file armgen writes into a spec root it fetched (and so may update).
pub const MARKER: &str = crate::load::spec_root::FETCHED_MARKER;
/// The largest file a pin may name (and so the most read from one response).
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// How long connecting to the server may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request may take, body included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// `specs/pin.json`: the spec files generation reads, each at an upstream commit, with size and SHA-256.
#[derive(Debug, Clone)]
pub struct Pin {
    /// The pin file (for errors).
    pub file: PathBuf,
    pub files: Vec<PinnedFile>,
}

#[derive(Debug, Deserialize)]
struct PinDocument {
    files: Vec<PinnedFile>,
}

/// One pinned file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedFile {
    /// Relative to the spec root, `/`-separated.
    pub path: String,
    /// The upstream commit the file is taken at (40 hex digits).
    pub upstream_commit: String,
    /// The size of the pinned file.
    pub bytes: u64,
    /// The SHA-256 of the pinned file (lowercase hex).
    pub sha256: String,
    /// When the pinned file differs from upstream: the upstream file and the patches that make the pinned one.
    #[serde(default)]
    pub upstream: Option<Upstream>,
}

/// The upstream form of a pinned file that was fixed up.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upstream {
    /// The size of the upstream file.
    pub bytes: u64,
    /// The SHA-256 of the upstream file.
    pub sha256: String,
    /// Where the upstream size and hash come from (for reviewers).
    pub provenance: String,
    /// Replacements in upstream byte offsets, in ascending order, not overlapping.
    pub patches: Vec<Patch>,
}

/// One replacement: at byte `offset` of the upstream file, the bytes `find` become `replace`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    pub offset: u64,
    pub find: String,
    pub replace: String,
    /// Why (required: a fix-up without a reason is not accepted).
    pub because: String,
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

impl Pin {
    /// Reads and checks a pin file. Errors name the file and the JSON pointer of the bad entry.
    pub fn load(file: &Path) -> Result<Pin> {
        let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
        Pin::parse(&text, file)
    }

    /// Parses and checks the text of a pin file (`file` is named in errors).
    pub fn parse(text: &str, file: &Path) -> Result<Pin> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let doc: PinDocument = serde_path_to_error::deserialize(de).map_err(|e| Error::Json {
            at: Location::new(file, json_pointer(&e.path().to_string())),
            message: e.inner().to_string(),
        })?;
        let pin = Pin {
            file: file.to_path_buf(),
            files: doc.files,
        };
        for (i, f) in pin.files.iter().enumerate() {
            pin.check(i, f)?;
        }
        Ok(pin)
    }

    fn at(&self, pointer: String) -> Location {
        Location::new(&self.file, pointer)
    }

    fn invalid(&self, pointer: String, message: impl Into<String>) -> Error {
        Error::Pin {
            at: self.at(pointer),
            message: message.into(),
        }
    }

    fn check(&self, i: usize, f: &PinnedFile) -> Result<()> {
        let p = format!("/files/{i}");
        if f.path.is_empty()
            || f.path.contains('\\')
            || !Path::new(&f.path)
                .components()
                .all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(self.invalid(
                format!("{p}/path"),
                format!("{:?} is not a relative path inside the spec root", f.path),
            ));
        }
        if !is_hex(&f.upstream_commit, 40) {
            return Err(self.invalid(
                format!("{p}/upstream_commit"),
                format!("{:?} is not a commit (40 lowercase hex digits)", f.upstream_commit),
            ));
        }
        let mut sizes = vec![(format!("{p}/bytes"), f.bytes, format!("{p}/sha256"), &f.sha256)];
        if let Some(u) = &f.upstream {
            sizes.push((
                format!("{p}/upstream/bytes"),
                u.bytes,
                format!("{p}/upstream/sha256"),
                &u.sha256,
            ));
        }
        for (bytes_at, bytes, sha_at, sha) in sizes {
            if bytes > MAX_FILE_BYTES {
                return Err(self.invalid(
                    bytes_at,
                    format!("{bytes} bytes is over the limit of {MAX_FILE_BYTES} bytes per file"),
                ));
            }
            if !is_hex(sha, 64) {
                return Err(self.invalid(sha_at, format!("{sha:?} is not a SHA-256 (64 lowercase hex digits)")));
            }
        }
        if let Some(u) = &f.upstream {
            let mut end = 0u64;
            let mut size = u.bytes as i128;
            for (j, patch) in u.patches.iter().enumerate() {
                let at = format!("{p}/upstream/patches/{j}");
                if patch.because.trim().is_empty() {
                    return Err(self.invalid(format!("{at}/because"), "a patch must say why"));
                }
                if patch.find == patch.replace {
                    return Err(self.invalid(at, "`find` and `replace` are the same: the patch changes nothing"));
                }
                if patch.offset < end {
                    return Err(self.invalid(
                        format!("{at}/offset"),
                        format!(
                            "offset {} overlaps or precedes the previous patch (which ends at {end}): patches are in \
                             ascending order and do not overlap",
                            patch.offset
                        ),
                    ));
                }
                end = patch.offset + patch.find.len() as u64;
                if end > u.bytes {
                    return Err(self.invalid(
                        format!("{at}/offset"),
                        format!(
                            "the patch ends at byte {end}, past the upstream file's {} bytes",
                            u.bytes
                        ),
                    ));
                }
                size += patch.replace.len() as i128 - patch.find.len() as i128;
            }
            if size != f.bytes as i128 {
                return Err(self.invalid(
                    format!("{p}/bytes"),
                    format!(
                        "the patches make {size} bytes of the upstream {} bytes, but the pinned file has {}",
                        u.bytes, f.bytes
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The index of `f` in the pin (for JSON pointers).
    fn index(&self, f: &PinnedFile) -> usize {
        self.files.iter().position(|g| g.path == f.path).unwrap_or(0)
    }

    /// Applies `f`'s patches to its upstream bytes: the pinned bytes, checked against the pinned size and hash.
    /// A file without patches is returned as it is (its hash is checked by the caller).
    pub fn patch(&self, f: &PinnedFile, upstream: Vec<u8>) -> Result<Vec<u8>> {
        let Some(u) = &f.upstream else { return Ok(upstream) };
        let i = self.index(f);
        let mut out = Vec::with_capacity(f.bytes as usize);
        let mut cursor = 0usize;
        for (j, patch) in u.patches.iter().enumerate() {
            let start = patch.offset as usize;
            let end = start + patch.find.len();
            if upstream.get(start..end) != Some(patch.find.as_bytes()) {
                let found = upstream.get(start..end.min(upstream.len())).unwrap_or_default();
                return Err(self.invalid(
                    format!("/files/{i}/upstream/patches/{j}"),
                    format!(
                        "upstream bytes {start}..{end} of {} are {:?}, not {:?}",
                        f.path,
                        String::from_utf8_lossy(found),
                        patch.find
                    ),
                ));
            }
            out.extend_from_slice(&upstream[cursor..start]);
            out.extend_from_slice(patch.replace.as_bytes());
            cursor = end;
        }
        out.extend_from_slice(&upstream[cursor..]);
        let sha = sha256_hex(&out);
        if out.len() as u64 != f.bytes || sha != f.sha256 {
            return Err(self.invalid(
                format!("/files/{i}/sha256"),
                format!(
                    "patching upstream {} gives sha256 {sha} ({} bytes), but the pin says {} ({} bytes)",
                    f.path,
                    out.len(),
                    f.sha256,
                    f.bytes
                ),
            ));
        }
        Ok(out)
    }

    /// The inverse of [`patch`](Self::patch): the upstream bytes of a pinned file (for a mirror, and for tests
    /// that serve the upstream form). Checks each replaced span.
    pub fn unpatch(&self, f: &PinnedFile, pinned: &[u8]) -> Result<Vec<u8>> {
        let Some(u) = &f.upstream else {
            return Ok(pinned.to_vec());
        };
        let i = self.index(f);
        let mut out = Vec::with_capacity(u.bytes as usize);
        let mut cursor = 0usize;
        let mut shift: i128 = 0;
        for (j, patch) in u.patches.iter().enumerate() {
            let start = (patch.offset as i128 + shift) as usize;
            let end = start + patch.replace.len();
            if pinned.get(start..end) != Some(patch.replace.as_bytes()) || start < cursor {
                return Err(self.invalid(
                    format!("/files/{i}/upstream/patches/{j}"),
                    format!("pinned bytes {start}..{end} of {} are not {:?}", f.path, patch.replace),
                ));
            }
            out.extend_from_slice(&pinned[cursor..start]);
            out.extend_from_slice(patch.find.as_bytes());
            cursor = end;
            shift += patch.replace.len() as i128 - patch.find.len() as i128;
        }
        out.extend_from_slice(&pinned[cursor..]);
        Ok(out)
    }
}

/// Turns serde_path_to_error's `files[3].upstream` into `/files/3/upstream`.
fn json_pointer(path: &str) -> String {
    if path == "." {
        return String::new();
    }
    let mut out = String::new();
    for part in path.split('.') {
        let mut rest = part;
        while let Some(open) = rest.find('[') {
            if open > 0 {
                out.push('/');
                out.push_str(&crate::error::escape_pointer(&rest[..open]));
            }
            let close = rest[open..].find(']').map_or(rest.len(), |c| open + c);
            out.push('/');
            out.push_str(&rest[open + 1..close]);
            rest = rest.get(close + 1..).unwrap_or_default();
        }
        if !rest.is_empty() {
            out.push('/');
            out.push_str(&crate::error::escape_pointer(rest));
        }
    }
    out
}

/// The base URL files are fetched from, and where it was set (for errors).
#[derive(Debug, Clone)]
pub struct BaseUrl {
    url: reqwest::Url,
    /// `--spec-base-url`, `$ARMGEN_SPEC_BASE_URL` or `default`.
    pub source: String,
}

impl BaseUrl {
    /// `explicit` (the flag or builder option) when given, else `$ARMGEN_SPEC_BASE_URL` when set and not
    /// empty, else [`DEFAULT_BASE_URL`].
    pub fn resolve(explicit: Option<&str>) -> Result<BaseUrl> {
        if let Some(url) = explicit {
            return BaseUrl::parse(url, "--spec-base-url / armgen::Builder::spec_base_url");
        }
        match std::env::var(BASE_URL_ENV) {
            Ok(url) if !url.is_empty() => BaseUrl::parse(&url, &format!("${BASE_URL_ENV}")),
            _ => BaseUrl::parse(DEFAULT_BASE_URL, "the default base URL"),
        }
    }

    /// Parses a base URL: `http` or `https`, with a host.
    pub fn parse(url: &str, source: &str) -> Result<BaseUrl> {
        let invalid = |message: String| Error::Invalid {
            what: format!("{source}: {url:?}"),
            message,
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| invalid(format!("not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid(format!(
                "the scheme is {:?}: only http and https URLs are fetched",
                parsed.scheme()
            )));
        }
        if parsed.host_str().is_none_or(str::is_empty) || parsed.cannot_be_a_base() {
            return Err(invalid("the URL has no host".into()));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(invalid(
                "a base URL has no query or fragment: files are fetched from <base>/<commit>/<path>".into(),
            ));
        }
        Ok(BaseUrl {
            url: parsed,
            source: source.to_string(),
        })
    }

    /// `<base>/<commit>/<path>`, each path segment percent-encoded as needed.
    pub fn file_url(&self, commit: &str, path: &str) -> reqwest::Url {
        let mut url = self.url.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().push(commit).extend(path.split('/'));
        }
        url
    }
}

impl std::fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.url.as_str().trim_end_matches('/'))
    }
}

/// What [`sync`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchReport {
    /// Files downloaded (pin paths), in pin order.
    pub fetched: Vec<String>,
    /// Files already present with the pinned hash.
    pub cached: Vec<String>,
}

/// Whether `dir` is a spec root armgen fetched (it has the [`MARKER`] file).
pub fn is_managed(dir: &Path) -> bool {
    dir.join(MARKER).is_file()
}

/// Whether `path` holds exactly the pinned bytes of `f`.
fn is_cached(path: &Path, f: &PinnedFile) -> bool {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() == f.bytes => {
            std::fs::read(path).is_ok_and(|bytes| sha256_hex(&bytes) == f.sha256)
        }
        _ => false,
    }
}

/// What to do when a fetch fails, for every fetch error.
fn help(base: &BaseUrl) -> String {
    format!(
        "files are fetched from {base} (set by {}); to go on, set {} to a spec root holding the pinned files (see \
         specs/README.md), or point --spec-base-url / ${BASE_URL_ENV} at a mirror serving <base>/<commit>/<path>",
        base.source,
        crate::load::spec_root::SPECS_ENV
    )
}

/// Makes `dest` hold every file of `pin`: files present with the pinned size and hash are kept; the others are
/// fetched from `base`, verified, and written atomically. `progress(i, n, path)` is called before the `i`-th of
/// `n` downloads. `dest` is created (with the [`MARKER`]) when missing; an existing `dest` without the marker is
/// refused, since it is not armgen's to change.
pub fn sync(
    pin: &Pin,
    dest: &Path,
    base: &BaseUrl,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<FetchReport> {
    if dest.exists() && !is_managed(dest) {
        return Err(Error::Invalid {
            what: dest.display().to_string(),
            message: format!(
                "exists but was not fetched by armgen (it has no {MARKER} file), so armgen does not write into it; \
                 remove it to have armgen fetch the pinned files there"
            ),
        });
    }
    if !dest.exists() {
        std::fs::create_dir_all(dest).map_err(|e| Error::io(dest, e))?;
        let marker = dest.join(MARKER);
        let text = format!(
            "This folder was created by armgen: the spec files of {} at their pinned commits. armgen checks them \
             by SHA-256 on every run and fetches again those that differ; remove the folder to start over.\n",
            pin.file.display()
        );
        std::fs::write(&marker, text).map_err(|e| Error::io(&marker, e))?;
    }
    let mut report = FetchReport::default();
    let mut missing = Vec::new();
    for f in &pin.files {
        if is_cached(&dest.join(&f.path), f) {
            report.cached.push(f.path.clone());
        } else {
            missing.push(f);
        }
    }
    if missing.is_empty() {
        return Ok(report);
    }
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::limited(5))
        .user_agent(concat!("armgen/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::Invalid {
            what: "the HTTP client".into(),
            message: chain(&e),
        })?;
    for (i, f) in missing.iter().enumerate() {
        progress(i + 1, missing.len(), &f.path);
        let url = base.file_url(&f.upstream_commit, &f.path);
        let fail = |message: String| Error::Fetch {
            file: f.path.clone(),
            url: url.to_string(),
            message: format!("{message}; {}", help(base)),
        };
        let (want_bytes, want_sha) = match &f.upstream {
            Some(u) => (u.bytes, u.sha256.as_str()),
            None => (f.bytes, f.sha256.as_str()),
        };
        let body = download(&client, &url, want_bytes).map_err(fail)?;
        let got_sha = sha256_hex(&body);
        if body.len() as u64 != want_bytes || got_sha != want_sha {
            return Err(fail(format!(
                "refused, nothing written: the response has sha256 {got_sha} ({} bytes), but {} pins sha256 \
                 {want_sha} ({want_bytes} bytes) for the {} file at commit {}",
                body.len(),
                pin.file.display(),
                if f.upstream.is_some() { "upstream" } else { "pinned" },
                f.upstream_commit
            )));
        }
        let bytes = pin.patch(f, body)?;
        write_atomic(&dest.join(&f.path), &bytes)?;
        report.fetched.push(f.path.clone());
    }
    Ok(report)
}

/// An error and its sources, without the URL (which the caller names).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !out.contains(&s_text) {
            out.push_str(": ");
            out.push_str(&s_text);
        }
        source = s.source();
    }
    out
}

/// GETs `url` and returns its body, refusing a status other than success and a body over `limit` bytes.
fn download(client: &reqwest::blocking::Client, url: &reqwest::Url, limit: u64) -> Result<Vec<u8>, String> {
    let response = client
        .get(url.clone())
        .send()
        .map_err(|e| format!("request failed: {}", chain(&e.without_url())))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the server answered HTTP {status}"));
    }
    if let Some(len) = response.content_length()
        && len > limit
    {
        return Err(format!(
            "refused, nothing written: the server announces {len} bytes, more than the pinned {limit}"
        ));
    }
    let mut body = Vec::with_capacity(limit.min(MAX_FILE_BYTES) as usize);
    response
        .take(limit + 1)
        .read_to_end(&mut body)
        .map_err(|e| format!("reading the response failed, nothing written: {}", chain(&e)))?;
    if body.len() as u64 > limit {
        return Err(format!(
            "refused, nothing written: the response is longer than the pinned {limit} bytes"
        ));
    }
    Ok(body)
}

/// Writes `bytes` to `path` through a synced temporary file in the same folder and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".armgen-fetch-")
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(tmp.path(), e))?;
    tmp.as_file().sync_all().map_err(|e| Error::io(tmp.path(), e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    fn pin_with(upstream: &[u8], patches: serde_json::Value) -> (String, Vec<u8>) {
        let mut pinned = upstream.to_vec();
        for p in patches.as_array().into_iter().flatten().rev() {
            let offset = p["offset"].as_u64().unwrap_or_default() as usize;
            let find = p["find"].as_str().unwrap_or_default().len();
            let replace = p["replace"].as_str().unwrap_or_default().as_bytes();
            pinned.splice(offset..offset + find, replace.iter().copied());
        }
        let doc = serde_json::json!({ "files": [{
            "path": "a/b.json",
            "upstream_commit": COMMIT,
            "bytes": pinned.len(),
            "sha256": sha256_hex(&pinned),
            "upstream": {
                "bytes": upstream.len(),
                "sha256": sha256_hex(upstream),
                "provenance": "test",
                "patches": patches,
            }
        }]});
        (doc.to_string(), pinned)
    }

    fn parse(text: &str) -> Result<Pin> {
        Pin::parse(text, Path::new("pin.json"))
    }

    #[test]
    fn patches_turn_upstream_into_pinned_and_back() {
        let upstream = br#"{"a": "x",, "b": [1, 2,], "c": 3}"#;
        let patches = serde_json::json!([
            { "offset": 9, "find": ",", "replace": "", "because": "double comma" },
            { "offset": 22, "find": ",]", "replace": "]", "because": "trailing comma" },
        ]);
        let (text, pinned) = pin_with(upstream, patches);
        let pin = parse(&text).expect("pin parses");
        let f = &pin.files[0];
        assert_eq!(pinned, br#"{"a": "x", "b": [1, 2], "c": 3}"#);
        assert_eq!(pin.patch(f, upstream.to_vec()).expect("patch"), pinned);
        assert_eq!(pin.unpatch(f, &pinned).expect("unpatch"), upstream);
    }

    #[test]
    fn a_patch_that_does_not_match_upstream_names_its_pointer() {
        let (text, _) = pin_with(
            b"[1,]",
            serde_json::json!([{ "offset": 2, "find": ",", "replace": "", "because": "x" }]),
        );
        let pin = parse(&text).expect("pin parses");
        let e = pin.patch(&pin.files[0], b"[1;]".to_vec()).expect_err("mismatch");
        assert_eq!(
            e.to_string(),
            "pin.json#/files/0/upstream/patches/0: upstream bytes 2..3 of a/b.json are \";\", not \",\""
        );
    }

    #[test]
    fn bad_pins_are_refused_with_their_pointer() {
        let good = serde_json::json!({ "files": [{
            "path": "a/b.json", "upstream_commit": COMMIT, "bytes": 1, "sha256": "0".repeat(64)
        }]});
        assert!(parse(&good.to_string()).is_ok());
        let cases: [(&str, serde_json::Value, &str); 7] = [
            ("/files/0/path", serde_json::json!("../x.json"), "not a relative path"),
            ("/files/0/path", serde_json::json!("/etc/x.json"), "not a relative path"),
            ("/files/0/upstream_commit", serde_json::json!("main"), "not a commit"),
            ("/files/0/sha256", serde_json::json!("abc"), "not a SHA-256"),
            (
                "/files/0/bytes",
                serde_json::json!(MAX_FILE_BYTES + 1),
                "over the limit",
            ),
            ("/files/0/bytes", serde_json::json!("many"), "invalid type"),
            ("/files/0/extra", serde_json::json!(1), "unknown field"),
        ];
        for (pointer, value, needle) in cases {
            let mut doc = good.clone();
            let field = pointer.rsplit('/').next().unwrap_or_default();
            doc["files"][0][field] = value;
            let e = parse(&doc.to_string()).expect_err(pointer).to_string();
            let at = if field == "extra" {
                "pin.json#/files/0"
            } else {
                &format!("pin.json#{pointer}")
            };
            assert!(e.starts_with(at) && e.contains(needle), "{pointer}: {e}");
        }
        let (text, _) = pin_with(
            b"[1,]",
            serde_json::json!([{ "offset": 2, "find": ",", "replace": "", "because": " " }]),
        );
        let e = parse(&text).expect_err("no reason").to_string();
        assert!(
            e.contains("#/files/0/upstream/patches/0/because: a patch must say why"),
            "{e}"
        );
    }

    #[test]
    fn base_urls_are_http_only_and_files_are_under_commit_and_path() {
        let base = BaseUrl::parse("http://127.0.0.1:8080/mirror/", "test").expect("http");
        assert_eq!(
            base.file_url(COMMIT, "specification/a b/c.json").as_str(),
            format!("http://127.0.0.1:8080/mirror/{COMMIT}/specification/a%20b/c.json")
        );
        let base = BaseUrl::parse(DEFAULT_BASE_URL, "test").expect("default");
        assert_eq!(
            base.file_url(COMMIT, "x/y.json").as_str(),
            format!("{DEFAULT_BASE_URL}/{COMMIT}/x/y.json")
        );
        for (url, needle) in [
            ("file:///tmp/specs", "only http and https"),
            ("ftp://example.com/x", "only http and https"),
            ("example.com/specs", "not a URL"),
            ("https://example.com/x?y=1", "no query"),
        ] {
            let e = BaseUrl::parse(url, "--spec-base-url").expect_err(url).to_string();
            assert!(
                e.starts_with(&format!("--spec-base-url: {url:?}")) && e.contains(needle),
                "{e}"
            );
        }
    }

    #[test]
    fn json_pointers_from_serde_paths() {
        assert_eq!(
            json_pointer("files[3].upstream.patches[0].offset"),
            "/files/3/upstream/patches/0/offset"
        );
        assert_eq!(json_pointer("."), "");
        assert_eq!(json_pointer("files"), "/files");
    }
}
