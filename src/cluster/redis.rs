//! A private Redis server from Debian's `redis-server`: its own folder, config and port
//! on 127.0.0.1, persistence as asked (`none`, `aof-everysec`, `aof-always`); with
//! `--tls`, that port speaks TLS alone.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};

use super::{
    DeclaredServer, Home, LOOPBACK, Launch, NodeRecord, ServerRecord, StartOptions, certs,
    ensure_packages, node_record, process, wait_for_port,
};

/// One Redis server, with the persistence asked for.
pub struct Redis;

impl DeclaredServer for Redis {
    const NAME: &'static str = "redis";
    const ABOUT: &'static str =
        "Redis from Debian's redis-server (--persistence none|aof-everysec|aof-always)";
    const STORE: &'static str = "redis";

    fn restart_node(home: &Home, record: &ServerRecord, _node: usize) -> Result<NodeRecord> {
        let again = StartOptions {
            persistence: record
                .settings
                .get("persistence")
                .cloned()
                .unwrap_or_else(|| "none".into()),
            ..Default::default()
        };
        Ok(Self::start(&Launch::again(home, record, &again))?
            .nodes
            .remove(0))
    }

    fn start(launch: &Launch) -> Result<ServerRecord> {
        let (dir, options) = (&launch.dir, launch.options);
        let redis = ensure_packages(
            "redis-server",
            &["redis-server"],
            options.install,
            &["/usr/bin", "/usr/sbin"],
        )?;
        let port = launch.port_or(LOOPBACK, 6379)?;
        let data = dir.join("data");
        std::fs::create_dir_all(&data)
            .with_context(|| format!("cannot create {}", data.display()))?;
        let log_file = dir.join("redis.log");
        let tls = match launch.tls() {
            true => Some(certs::server_certs(dir, &[LOOPBACK])?),
            false => None,
        };
        let conf = write_conf(dir, port, tls.as_ref(), &options.persistence)?;
        let child = Command::new(&redis)
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group: a Ctrl-C meant for hatshop does not reach it.
            .process_group(0)
            .spawn()
            .with_context(|| format!("cannot start {}", redis.display()))?;
        // Killed unless the start gets to its end (see `process::Spawned`).
        let mut spawned = process::Spawned::default();
        let pid = spawned.push(child.id());
        wait_for_port(
            LOOPBACK,
            port,
            pid,
            Duration::from_secs(30),
            "redis-server",
            &log_file,
        )?;
        let version = process::run_command(Command::new(&redis).arg("--version"), "redis-server")?
            .split_whitespace()
            .find_map(|w| w.strip_prefix("v="))
            .unwrap_or("?")
            .to_string();
        let node = node_record(1, LOOPBACK, port, pid, dir, data, log_file);
        let url = match &tls {
            None => format!("redis://{LOOPBACK}:{port}/0"),
            Some(certs) => format!("rediss://{LOOPBACK}:{port}/0?cacert={}", certs.ca.display()),
        };
        let version = format!("Redis {version}");
        spawned.keep();
        Ok(ServerRecord {
            settings: [("persistence".to_string(), options.persistence.clone())].into(),
            ..ServerRecord::of::<Self>(url, version, vec![node])
        })
    }
}

/// The server's redis.conf in `dir`: where it listens (over TLS where `tls` is given),
/// keeps its data and log, and how it persists.
fn write_conf(
    dir: &Path,
    port: u16,
    tls: Option<&certs::ServerCerts>,
    persistence: &str,
) -> Result<PathBuf> {
    let (appendonly, fsync) = match persistence {
        "aof-always" => ("yes", "always"),
        "aof-everysec" => ("yes", "everysec"),
        _ => ("no", "everysec"),
    };
    let listen = match tls {
        None => format!("port {port}\n"),
        Some(certs) => format!(
            "port 0\ntls-port {port}\ntls-cert-file {}\ntls-key-file {}\n\
             tls-ca-cert-file {}\ntls-auth-clients no\n",
            certs.cert.display(),
            certs.key.display(),
            certs.ca.display()
        ),
    };
    let conf = dir.join("redis.conf");
    std::fs::write(
        &conf,
        format!(
            "bind {LOOPBACK}\n{listen}protected-mode yes\ndaemonize no\n\
             dir {data}\nlogfile {log}\npidfile {dir}/redis.pid\n\
             save \"\"\nappendonly {appendonly}\nappendfsync {fsync}\n",
            data = dir.join("data").display(),
            log = dir.join("redis.log").display(),
            dir = dir.display(),
        ),
    )
    .with_context(|| format!("cannot write {}", conf.display()))?;
    Ok(conf)
}
