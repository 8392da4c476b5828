//! The servers a study runs on: one already running at the right size is used and
//! left running; one the study starts is stopped when its cells are done, whatever
//! happened.

use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::cells::ServerNeed;
use crate::cluster::{self, Home, ServerKind, StartOptions};
use crate::console::note;

/// A server serving a study's cells.
pub struct StudyServer {
    home: Home,
    kind: ServerKind,
    pub nodes: usize,
    set: &'static [(&'static str, &'static str)],
    /// Whether the study started it, and so stops it.
    started: bool,
    pub url: String,
}

impl StudyServer {
    /// The server `need` names, running with its node count.
    pub async fn get(home: &Home, need: &ServerNeed, install: bool) -> Result<StudyServer> {
        let kind = ServerKind::find(need.server)
            .with_context(|| format!("no server named {}", need.server))?;
        if let Some(record) = home.running(kind) {
            if record.nodes.len() != need.nodes {
                bail!(
                    "{} already runs with {} node{} under {}; the study needs {}: stop it \
                     first (`hatshop server stop {}`)",
                    kind.name(),
                    record.nodes.len(),
                    if record.nodes.len() == 1 { "" } else { "s" },
                    home.root.display(),
                    need.nodes,
                    kind.name()
                );
            }
            if let Some((key, value)) = need
                .set
                .iter()
                .find(|(key, value)| !record.started_with(key, value))
            {
                bail!(
                    "{} runs without {key}={value}, which the study needs: stop it first \
                     (`hatshop server stop {}`) and the study starts one with it",
                    kind.name(),
                    kind.name()
                );
            }
            return Ok(StudyServer {
                home: home.clone(),
                kind,
                nodes: need.nodes,
                set: need.set,
                started: false,
                url: record.url,
            });
        }
        let began = Instant::now();
        note!(
            "starting {}{}",
            kind.name(),
            if need.nodes > 1 {
                format!(" with {} nodes", need.nodes)
            } else {
                String::new()
            }
        );
        let (nodes, set) = (need.nodes, need.set);
        let record = tokio::task::spawn_blocking({
            let home = home.clone();
            move || {
                // Ctrl-C reaches the waits of a start through this.
                let _listening = crate::interrupt::Listening::new();
                let options = StartOptions {
                    nodes,
                    config: set
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                    install,
                    ..StartOptions::default()
                };
                cluster::start(&home, kind, &options).map(|(record, _)| record)
            }
        })
        .await??;
        note!(
            "{} ready in {:.0} s",
            kind.name(),
            began.elapsed().as_secs_f64()
        );
        Ok(StudyServer {
            home: home.clone(),
            kind,
            nodes,
            set,
            started: true,
            url: record.url,
        })
    }

    /// Whether it serves `need` (same server, size and settings).
    pub fn serves(&self, need: &ServerNeed) -> bool {
        self.kind.name() == need.server && self.nodes == need.nodes && self.set == need.set
    }

    /// The URL a cell runs against: the server's, with the cell's settings.
    pub fn url(&self, need: &ServerNeed) -> String {
        if need.query.is_empty() {
            return self.url.clone();
        }
        let joint = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{joint}{}", self.url, need.query)
    }
}

impl Drop for StudyServer {
    fn drop(&mut self) {
        if self.started {
            match cluster::stop(&self.home, self.kind) {
                Ok(_) => note!("{} stopped", self.kind.name()),
                Err(e) => note!("could not stop {}: {e:#}", self.kind.name()),
            }
        }
    }
}
