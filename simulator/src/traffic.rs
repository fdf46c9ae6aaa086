//! Recorded request/response exchanges and their `oav validate-traffic` file format.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One recorded request and its response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// Milliseconds since the simulator started.
    pub at_ms: u64,
    /// The request.
    pub request: ExchangeRequest,
    /// The response.
    pub response: ExchangeResponse,
}

/// A recorded request. The `authorization` header reads `Bearer <redacted>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExchangeRequest {
    /// The full URL, query included.
    pub url: String,
    /// The method, upper case.
    pub method: String,
    /// The headers (lower-case names).
    pub headers: BTreeMap<String, String>,
    /// The JSON body; a body that is not JSON is kept as a string.
    pub body: Option<Value>,
}

/// A recorded response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExchangeResponse {
    /// The status code.
    pub status_code: u16,
    /// The headers.
    pub headers: BTreeMap<String, String>,
    /// The JSON body, if any.
    pub body: Option<Value>,
}

impl Exchange {
    /// The exchange as one `oav validate-traffic` file reads it:
    /// `{"liveRequest": {"url","method","headers","body"}, "liveResponse": {"statusCode": "200","headers","body"}}`.
    pub fn to_live_traffic(&self) -> Value {
        json!({
            "liveRequest": {
                "url": self.request.url,
                "method": self.request.method,
                "headers": self.request.headers,
                "body": self.request.body,
            },
            "liveResponse": {
                "statusCode": self.response.status_code.to_string(),
                "headers": self.response.headers,
                "body": self.response.body,
            },
        })
    }
}

/// Writes one file per exchange into `dir` (created if missing), named `{index:05}-{METHOD}-{status}.json`.
pub(crate) fn write(dir: &Path, exchanges: &[Exchange]) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    for (i, e) in exchanges.iter().enumerate() {
        let name = format!("{:05}-{}-{}.json", i + 1, e.request.method, e.response.status_code);
        let text = serde_json::to_string_pretty(&e.to_live_traffic()).map_err(std::io::Error::other)?;
        std::fs::write(dir.join(name), text)?;
    }
    Ok(exchanges.len())
}
