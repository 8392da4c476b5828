//! `hatshop server start|stop|status|logs|wipe`.

use anyhow::{Result, bail};

use crate::cli::{ServerAction, ServerArgs};
use crate::cluster::{self, Home, ServerKind, StartOptions, process};
use crate::{interrupt, note, say};

/// The server named, or with `--all` every server that has a folder.
fn chosen(home: &Home, kind: Option<ServerKind>, all: bool) -> Result<Vec<ServerKind>> {
    match kind {
        Some(kind) => Ok(vec![kind]),
        None if all => Ok(cluster::known(home).into_iter().map(|(k, _)| k).collect()),
        None => bail!("name a server or pass --all"),
    }
}

pub fn run(args: &ServerArgs) -> Result<()> {
    // Starting Cassandra takes a minute: Ctrl-C stops the start and the half-started server.
    let _listening = interrupt::Listening::new();
    let home = Home::resolve(args.home.as_deref())?;
    match &args.action {
        ServerAction::Start {
            kind,
            version,
            heap,
            port,
            persistence,
            install,
        } => {
            let options = StartOptions {
                version: version.clone(),
                heap: heap.clone(),
                port: *port,
                persistence: persistence.clone(),
                install: *install,
            };
            let (record, started) = cluster::start(&home, *kind, &options)?;
            if started {
                note!(
                    "{} ({}) started (pid {})",
                    kind.name(),
                    record.version,
                    record.pid
                );
            } else {
                note!("{} is already running (pid {})", kind.name(), record.pid);
            }
            say!("{}", record.url);
        }
        ServerAction::Stop { kind, all } => {
            for kind in chosen(&home, *kind, *all)? {
                if cluster::stop(&home, kind)? {
                    say!("{}: stopped", kind.name());
                } else {
                    say!("{}: not running", kind.name());
                }
            }
        }
        ServerAction::Wipe { kind, all } => {
            for kind in chosen(&home, *kind, *all)? {
                cluster::wipe(&home, kind)?;
                say!("{}: wiped", kind.name());
            }
        }
        ServerAction::Status => {
            let known = cluster::known(&home);
            if known.is_empty() {
                say!("no servers under {}", home.root.display());
            }
            for (kind, record) in known {
                match record.filter(|r| process::alive(r.pid)) {
                    Some(r) => {
                        let settings: Vec<String> =
                            r.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        say!(
                            "{:<10} running  {}  {}  pid {}  {} MiB  since {}{}",
                            kind.name(),
                            r.url,
                            r.version,
                            r.pid,
                            process::rss_mib(r.pid).map_or("?".into(), |m| m.to_string()),
                            r.started_at,
                            if settings.is_empty() {
                                String::new()
                            } else {
                                format!("  {}", settings.join(" "))
                            }
                        )
                    }
                    None => say!("{:<10} stopped", kind.name()),
                }
            }
        }
        ServerAction::Logs { kind, lines } => {
            let Some(record) = home.record(*kind) else {
                bail!(
                    "{} has never been started under {}",
                    kind.name(),
                    home.root.display()
                );
            };
            say!("{}", process::tail_file(&record.log_file, *lines));
        }
    }
    Ok(())
}
