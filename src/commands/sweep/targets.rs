//! What a sweep runs on: a database URL, or a server it starts at each node count
//! (`lifecycle::servers`: stopped and wiped when the step ends, whatever happened).

use anyhow::{Result, bail};

use crate::cluster::{SERVERS, ServerDeclarations, server_declarations};
use crate::db::{DbUrl, StoreDeclarations, store_declarations};

/// A database a sweep runs on.
#[derive(Debug, Clone)]
pub(super) enum Target {
    Url(String),
    /// A server the sweep starts at each size, with URL settings for its runs.
    Server {
        kind: &'static ServerDeclarations,
        query: String,
    },
}

impl Target {
    pub(super) fn parse(text: &str, nodes_sweep: bool) -> Result<Target> {
        if !nodes_sweep {
            return Ok(Target::Url(text.to_string()));
        }
        let (name, query) = text.split_once('?').unwrap_or((text, ""));
        let names: Vec<&str> = SERVERS
            .iter()
            .filter(|k| k.max_nodes > 1)
            .map(|k| k.name)
            .collect();
        match server_declarations(name) {
            Some(kind) if kind.max_nodes > 1 => Ok(Target::Server {
                kind,
                query: query.to_string(),
            }),
            _ => bail!(
                "a nodes sweep starts its own servers: give --db as a server of several nodes \
                 ({}), with settings after ?, e.g. --db 'cassandra?rf=2' (got '{}')",
                names.join(", "),
                crate::db::shown_url(text)
            ),
        }
    }

    /// How rows and charts name it.
    pub(super) fn label(&self) -> String {
        match self {
            Target::Url(url) => {
                let scheme = url.split("://").next().unwrap_or(url);
                // The settings as parsed: credentials are not among them, wherever given.
                let settings: Vec<String> = DbUrl::parse(url)
                    .map(|parsed| parsed.params())
                    .unwrap_or_default()
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                if settings.is_empty() {
                    scheme.to_string()
                } else {
                    format!("{scheme}?{}", settings.join("&"))
                }
            }
            Target::Server { kind, query } if query.is_empty() => kind.name.to_string(),
            Target::Server { kind, query } => format!("{}?{query}", kind.name),
        }
    }

    /// The store its runs use.
    pub(super) fn store(&self) -> Result<&'static StoreDeclarations> {
        let scheme = match self {
            Target::Url(url) => DbUrl::parse(url)?.scheme(),
            Target::Server { kind, .. } => kind.store,
        };
        Ok(store_declarations(scheme).expect("a known store"))
    }

    /// A URL of the right store for checking a run's flags before servers start.
    pub(super) fn probe_url(&self) -> String {
        match self {
            Target::Url(url) => url.clone(),
            Target::Server { kind, query } => {
                let store = kind.store;
                let query = if query.is_empty() {
                    String::new()
                } else {
                    format!("?{query}")
                };
                format!("{store}://127.0.0.1/hatshop{query}")
            }
        }
    }
}
