//! Errors of the generator. Every error says where: a spec file and a JSON pointer, a config key, or a
//! file on disk.

use std::path::PathBuf;

/// Where in a spec document something is: the file and an RFC 6901 JSON pointer into it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    pub file: PathBuf,
    pub pointer: String,
}

impl Location {
    pub fn new(file: impl Into<PathBuf>, pointer: impl Into<String>) -> Self {
        Location {
            file: file.into(),
            pointer: pointer.into(),
        }
    }

    /// A child location: `segment` is escaped as RFC 6901 requires.
    pub fn join(&self, segment: &str) -> Self {
        Location {
            file: self.file.clone(),
            pointer: format!("{}/{}", self.pointer, escape_pointer(segment)),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.file.display(), self.pointer)
    }
}

/// Escapes one JSON-pointer segment (`~` → `~0`, `/` → `~1`). The same two replacements as
/// `armgen_runtime::pointer::escape`, kept here because the generator does not depend on the runtime: a `build.rs`
/// that runs armgen would otherwise build the runtime's Kubernetes dependencies for the host as well.
pub fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Unescapes one JSON-pointer segment (`~1` → `/`, `~0` → `~`).
pub fn unescape_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{at}: invalid JSON: {message}")]
    Json { at: Location, message: String },
    #[error("{at}: {message}")]
    Spec { at: Location, message: String },
    #[error("{at}: cannot resolve $ref {reference:?}: {message}")]
    Ref {
        at: Location,
        reference: String,
        message: String,
    },
    #[error("{file}: config key `{key}`: {message}")]
    Config {
        file: PathBuf,
        key: String,
        message: String,
    },
    #[error(
        "no spec root found: pass --specs DIR, or set AZURE_REST_API_SPECS, or place the specs at {default} \
         (tried: {tried})"
    )]
    SpecRootMissing { default: PathBuf, tried: String },
    #[error("generated code for {what} does not parse: {message}")]
    Emit { what: String, message: String },
    /// A bad entry of `specs/pin.json` (or of the pin file given): the file and the JSON pointer.
    #[error("{at}: {message}")]
    Pin { at: Location, message: String },
    /// A spec file could not be fetched, or was refused (size or SHA-256 not the pinned ones): the file (as the
    /// pin names it), the URL, what happened and what to do.
    #[error("cannot fetch {file} from {url}: {message}")]
    Fetch { file: String, url: String, message: String },
    /// A bad argument: a builder option, a command-line operand, a line of a structure file; `what` names it.
    #[error("{what}: {message}")]
    Invalid { what: String, message: String },
}

impl Error {
    pub fn spec(at: &Location, message: impl Into<String>) -> Self {
        Error::Spec {
            at: at.clone(),
            message: message.into(),
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
