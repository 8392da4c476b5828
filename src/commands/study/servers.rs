//! The servers a study runs on: one already running at the right size is used and
//! left running (its CPU budget as the study found it); one the study starts is
//! stopped when its cells are done, whatever happened; one the user gave by URL
//! (`--server-url`, machines of their own) is only used. Each cell gets the CPU budget
//! per node it asks for before it runs, and a fresh JVM server is warmed up first.

use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::cells::ServerNeed;
use crate::cluster::{self, Home, ServerKind, StartOptions};
use crate::console::note;

/// Clusters the user gave by URL, by server name and node count.
pub type GivenUrls = [(String, usize, String)];

/// A server serving a study's cells.
pub struct StudyServer {
    home: Home,
    kind: ServerKind,
    pub nodes: usize,
    set: &'static [(&'static str, &'static str)],
    /// Whether the study started it, and so stops it.
    started: bool,
    /// Given by URL: machines of the user's, which the study neither starts nor caps.
    given: bool,
    /// Each node's CPU budget now, and as the study found it (restored at the end).
    budget: Option<f64>,
    found_budget: Option<f64>,
    /// Whether it has been warmed up in this study's run.
    pub warmed: bool,
    pub url: String,
}

impl StudyServer {
    /// The server `need` names, running with its node count.
    pub async fn get(
        home: &Home,
        need: &ServerNeed,
        install: bool,
        given: &GivenUrls,
    ) -> Result<StudyServer> {
        let kind = ServerKind::find(need.server)
            .with_context(|| format!("no server named {}", need.server))?;
        let mut server = StudyServer {
            home: home.clone(),
            kind,
            nodes: need.nodes,
            set: need.set,
            started: false,
            given: false,
            budget: None,
            found_budget: None,
            warmed: false,
            url: String::new(),
        };
        if let Some((_, _, url)) = given
            .iter()
            .find(|(server, nodes, _)| server == need.server && *nodes == need.nodes)
        {
            note!(
                "{} with {} node{}: the machines at {}",
                kind.name(),
                need.nodes,
                if need.nodes == 1 { "" } else { "s" },
                crate::db::shown_url(url)
            );
            server.given = true;
            server.warmed = true;
            server.url = url.clone();
            return Ok(server);
        }
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
            server.budget = record.cpu_per_node();
            server.found_budget = server.budget;
            server.url = record.url;
            return Ok(server);
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
        server.started = true;
        server.url = record.url;
        Ok(server)
    }

    /// Whether it serves `need` (same server, size and settings; the budget is set per
    /// cell, on the running nodes).
    pub fn serves(&self, need: &ServerNeed) -> bool {
        self.kind.name() == need.server && self.nodes == need.nodes && self.set == need.set
    }

    /// Gives every node the CPU budget `need` asks for (none: no cap), unless the
    /// machines are the user's own.
    pub async fn budget(&mut self, need: &ServerNeed) -> Result<()> {
        if self.given || self.budget == need.cpu_per_node {
            return Ok(());
        }
        let (home, kind, cores) = (self.home.clone(), self.kind, need.cpu_per_node);
        tokio::task::spawn_blocking(move || cluster::budget(&home, kind, cores)).await??;
        self.budget = cores;
        Ok(())
    }

    /// How long to warm it up before its first cell: a fresh JVM compiling its hot
    /// code answers slower than it will, at any scale.
    pub fn warm_up(&self) -> Option<std::time::Duration> {
        if self.warmed {
            return None;
        }
        self.kind.meta().warm_up
    }

    /// Its name, as `hatshop server` takes it.
    pub fn name(&self) -> &'static str {
        self.kind.name()
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
        } else if !self.given && self.budget != self.found_budget {
            // A server the study found running gets back the budget it had.
            if let Err(e) = cluster::budget(&self.home, self.kind, self.found_budget) {
                note!("could not restore {}'s CPU budget: {e:#}", self.kind.name());
            }
        }
    }
}
