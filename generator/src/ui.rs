//! Terminal output of the `armgen` command: errors as `error: message` plus a `-->` line saying where (spec
//! file and JSON pointer, config file and key, file on disk, argument), coloured only when stderr is a
//! terminal and `NO_COLOR` is not set (<https://no-color.org>).

use std::io::IsTerminal;

use crate::error::Error;

/// Whether to colour output to stderr: a terminal, and `NO_COLOR` unset or empty.
pub fn stderr_color() -> bool {
    use_color(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR").as_deref())
}

/// The colour decision, for tests: `NO_COLOR` set to anything but the empty string turns colour off.
pub fn use_color(is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    is_terminal && no_color.is_none_or(|v| v.is_empty())
}

/// ANSI styles, or nothing.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    pub fn error_label(&self) -> String {
        self.paint("1;31", "error")
    }

    pub fn warning_label(&self) -> String {
        self.paint("1;33", "warning")
    }

    pub fn arrow(&self) -> String {
        self.paint("1;34", "-->")
    }

    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
}

/// The message of `e` and where it is (when it says), apart.
pub fn split_error(e: &Error) -> (String, Option<String>) {
    match e {
        Error::Io { path, source } => (source.to_string(), Some(path.display().to_string())),
        Error::Json { at, message } | Error::Spec { at, message } | Error::Pin { at, message } => {
            (message.clone(), Some(at.to_string()))
        }
        Error::Ref { at, reference, message } => (
            format!("cannot resolve $ref {reference:?}: {message}"),
            Some(at.to_string()),
        ),
        Error::Config { file, key, message } => {
            (message.clone(), Some(format!("{}: config key `{key}`", file.display())))
        }
        Error::Emit { what, message } => (format!("generated code does not parse: {message}"), Some(what.clone())),
        Error::Invalid { what, message } => (message.clone(), Some(what.clone())),
        Error::Fetch { file, url, message } => (format!("cannot fetch {file}: {message}"), Some(url.clone())),
        other => (other.to_string(), None),
    }
}

/// `e` for a terminal:
///
/// ```text
/// error: cannot resolve $ref "#/definitions/Missing": no such schema
///   --> specification/…/managedClusters.json#/definitions/Widget/properties/x
/// ```
pub fn render_error(e: &Error, style: Style) -> String {
    let (message, at) = split_error(e);
    let mut out = format!("{}: {}", style.error_label(), style.bold(&message));
    if let Some(at) = at {
        out.push_str(&format!("\n  {} {at}", style.arrow()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        use std::ffi::OsStr;
        assert!(use_color(true, None));
        assert!(
            use_color(true, Some(OsStr::new(""))),
            "an empty NO_COLOR does not count"
        );
        assert!(!use_color(true, Some(OsStr::new("1"))));
        assert!(!use_color(false, None));
    }

    #[test]
    fn an_error_is_a_message_and_a_place() {
        let e = Error::Ref {
            at: crate::Location::new("spec/widgets.json", "/definitions/Widget/properties/x"),
            reference: "#/definitions/Missing".into(),
            message: "no such schema".into(),
        };
        assert_eq!(
            render_error(&e, Style { color: false }),
            "error: cannot resolve $ref \"#/definitions/Missing\": no such schema\n  \
             --> spec/widgets.json#/definitions/Widget/properties/x"
        );
        assert_eq!(
            render_error(&e, Style { color: true }),
            "\u{1b}[1;31merror\u{1b}[0m: \u{1b}[1mcannot resolve $ref \"#/definitions/Missing\": no such schema\u{1b}[0m\n  \
             \u{1b}[1;34m-->\u{1b}[0m spec/widgets.json#/definitions/Widget/properties/x"
        );
        let e = Error::SpecRootMissing {
            default: "specs/azure-rest-api-specs".into(),
            tried: "--specs (not given)".into(),
        };
        assert_eq!(render_error(&e, Style { color: false }), format!("error: {e}"));
    }
}
