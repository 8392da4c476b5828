//! Apache Cassandra from Maven Central: `cassandra-all` and its dependencies are
//! fetched once into the hatshop cache with Maven, and a node runs as
//! `CassandraDaemon` on JDK 17 with a generated `cassandra.yaml` (the recipe in
//! shared/notes/cassandra-from-maven.md, checked on this kind of machine).

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::{
    Home, LocalServer, ServerKind, ServerRecord, StartOptions, now_rfc3339, process, wait_for_port,
};

pub const DEFAULT_VERSION: &str = "5.0.4";
const HOST: &str = "127.0.0.1";
/// A node takes about 40 s on an idle 2-core machine; a busy one needs more.
const START_TIMEOUT: Duration = Duration::from_secs(300);

/// The module flags of Cassandra's own conf/jvm17-server.options.
const JDK17_FLAGS: &[&str] = &[
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.math=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
];

/// The jar folder: `$HATSHOP_CASSANDRA_LIB`, or the cache, filled by Maven on first use.
pub fn jars(home: &Home, version: &str) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("HATSHOP_CASSANDRA_LIB") {
        return Ok(PathBuf::from(dir));
    }
    let dist = home.cache_dir().join(format!("cassandra-{version}"));
    let lib = dist.join("lib");
    let complete = dist.join(".complete");
    if complete.exists() {
        return Ok(lib);
    }
    let mvn = process::find_program("mvn", &[])
        .context("mvn is not installed: run `apt-get install -y maven` to fetch Cassandra from Maven Central")?;
    std::fs::create_dir_all(&dist).with_context(|| format!("cannot create {}", dist.display()))?;
    std::fs::write(
        dist.join("pom.xml"),
        format!(
            "<project><modelVersion>4.0.0</modelVersion>\n\
             <groupId>local.hatshop</groupId><artifactId>cassandra-dist</artifactId><version>1</version>\n\
             <dependencies><dependency><groupId>org.apache.cassandra</groupId>\
             <artifactId>cassandra-all</artifactId><version>{version}</version></dependency></dependencies>\n\
             </project>\n"
        ),
    )?;
    crate::note!(
        "fetching Cassandra {version} from Maven Central into {} (once; about 70 MB) …",
        lib.display()
    );
    let started = Instant::now();
    process::run_command(
        Command::new(mvn).current_dir(&dist).args([
            "-q",
            "-B",
            "dependency:copy-dependencies",
            "-DoutputDirectory=lib",
        ]),
        "mvn dependency:copy-dependencies",
    )?;
    if !lib.join(format!("cassandra-all-{version}.jar")).exists() {
        bail!(
            "Maven finished but {} holds no cassandra-all-{version}.jar",
            lib.display()
        );
    }
    std::fs::write(&complete, b"")?;
    crate::note!("fetched in {:.0} s", started.elapsed().as_secs_f64());
    Ok(lib)
}

fn write_config(
    conf: &Path,
    data: &Path,
    logs: &Path,
    native_port: u16,
    storage_port: u16,
) -> Result<()> {
    std::fs::create_dir_all(conf)?;
    let d = data.display();
    std::fs::write(
        conf.join("cassandra.yaml"),
        format!(
            "cluster_name: hatshop\n\
             num_tokens: 16\n\
             allocate_tokens_for_local_replication_factor: 1\n\
             partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n\
             data_file_directories: [{d}/data]\n\
             commitlog_directory: {d}/commitlog\n\
             saved_caches_directory: {d}/saved_caches\n\
             hints_directory: {d}/hints\n\
             commitlog_sync: periodic\n\
             commitlog_sync_period: 10000ms\n\
             seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n      - seeds: \"{HOST}:{storage_port}\"\n\
             listen_address: {HOST}\n\
             rpc_address: {HOST}\n\
             native_transport_port: {native_port}\n\
             storage_port: {storage_port}\n\
             endpoint_snitch: SimpleSnitch\n\
             start_native_transport: true\n\
             concurrent_reads: 16\n\
             concurrent_writes: 16\n\
             concurrent_compactors: 1\n\
             auto_snapshot: false\n"
        ),
    )?;
    std::fs::write(
        conf.join("logback.xml"),
        format!(
            "<configuration>\n\
             <appender name=\"FILE\" class=\"ch.qos.logback.core.FileAppender\">\n\
             <file>{}/system.log</file>\n\
             <encoder><pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern></encoder>\n\
             </appender>\n\
             <root level=\"INFO\"><appender-ref ref=\"FILE\"/></root>\n\
             </configuration>\n",
            logs.display()
        ),
    )?;
    Ok(())
}

pub struct Cassandra;

impl LocalServer for Cassandra {
    const NAME: &'static str = "cassandra";
    const ABOUT: &'static str = "Apache Cassandra from Maven Central (JDK 17)";
    const RETRY_START: bool = false;

    fn start(home: &Home, dir: &Path, options: &StartOptions) -> Result<ServerRecord> {
        start(home, dir, options)
    }
}

fn start(home: &Home, dir: &Path, options: &StartOptions) -> Result<ServerRecord> {
    let version = options
        .version
        .clone()
        .unwrap_or_else(|| DEFAULT_VERSION.to_string());
    let java = process::find_program("java", &[])
        .context("java is not installed: Cassandra 5.0 needs JDK 11 or 17 (`apt-get install -y openjdk-17-jre-headless`)")?;
    let lib = jars(home, &version)?;
    let native_port = match options.port {
        Some(port) => port,
        None => process::free_port(HOST, 9042)?,
    };
    let storage_port = process::free_port(HOST, 7000)?;
    let jmx_port = process::free_port(HOST, 7199)?;
    let conf = dir.join("conf");
    let data = dir.join("data");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs)?;
    write_config(&conf, &data, &logs, native_port, storage_port)?;

    let log_file = logs.join("system.log");
    let out = File::create(logs.join("stdout.log"))?;
    let heap = &options.heap;
    let child = Command::new(java)
        .args([format!("-Xms{heap}"), format!("-Xmx{heap}")])
        .args(["-Xss512k", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError"])
        // The GC log: server pauses are part of what a latency tail means.
        .arg(format!(
            "-Xlog:gc*:file={}/gc.log:time,uptime,level,tags:filecount=3,filesize=10m",
            logs.display()
        ))
        .args(JDK17_FLAGS)
        .arg(format!(
            "-Dcassandra.config=file://{}/cassandra.yaml",
            conf.display()
        ))
        .arg(format!(
            "-Dlogback.configurationFile={}/logback.xml",
            conf.display()
        ))
        .arg(format!("-Dcassandra.storagedir={}", data.display()))
        .arg(format!("-Dcassandra.jmx.local.port={jmx_port}"))
        .args([
            "-Dcassandra.ring_delay_ms=5000",
            "-Dcassandra.skip_wait_for_gossip_to_settle=0",
        ])
        .arg("-Dcassandra-foreground=yes")
        .arg("-cp")
        .arg(format!("{}:{}/*", conf.display(), lib.display()))
        .arg("org.apache.cassandra.service.CassandraDaemon")
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .process_group(0)
        .spawn()
        .context("cannot start the Cassandra JVM")?;
    let pid = child.id();
    crate::note!("waiting for Cassandra {version} on {HOST}:{native_port} (about a minute) …");
    let started = Instant::now();
    wait_for_port(
        HOST,
        native_port,
        pid,
        START_TIMEOUT,
        "Cassandra",
        &log_file,
    )?;
    crate::note!(
        "Cassandra answered after {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(ServerRecord {
        kind: ServerKind::find(Cassandra::NAME).expect("listed"),
        pid,
        url: format!("cassandra://{HOST}:{native_port}/hatshop"),
        version,
        host: HOST.into(),
        port: native_port,
        data_dir: data,
        log_file,
        started_at: now_rfc3339(),
        settings: Default::default(),
    })
}
