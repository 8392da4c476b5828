//! A node's configuration files: `cassandra.yaml` (hatshop's settings, TLS for
//! clients where asked, then any given with `--set`), its rack and data centre, and a logback file that logs in UTC (the
//! compaction times in `system.log` are read back on the run's time axis).

use anyhow::Result;

use super::super::certs::ServerCerts;
use super::{CQL_PORT, GOSSIP_PORT, Ring, RingNode};

impl RingNode {
    /// 16 tokens spread evenly and interleaved with the other nodes'.
    pub(super) fn initial_tokens(&self, nodes: usize) -> String {
        const TOKENS: i128 = 16;
        let n = nodes as i128;
        let step = (1i128 << 64) / (n * TOKENS);
        (0..TOKENS)
            .map(|k| (-(1i128 << 63) + (k * n + self.number as i128 - 1) * step).to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    pub(super) fn write_config(&self, ring: &Ring, fresh: bool) -> Result<()> {
        let conf = self.conf();
        let data = self.dir.join("data");
        let logs = self.dir.join("logs");
        std::fs::create_dir_all(&conf)?;
        std::fs::create_dir_all(&logs)?;
        let d = data.display();
        let n = ring.nodes.len();
        let tokens = if fresh && n > 1 {
            format!("initial_token: {}", self.initial_tokens(n))
        } else {
            format!("allocate_tokens_for_local_replication_factor: {}", n.min(3))
        };
        let snitch = if ring.dcs > 1 {
            "GossipingPropertyFileSnitch"
        } else {
            "SimpleSnitch"
        };
        let yaml = format!(
            "cluster_name: hatshop\n\
                 num_tokens: 16\n\
                 {tokens}\n\
                 partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n\
                 data_file_directories: [{d}/data]\n\
                 commitlog_directory: {d}/commitlog\n\
                 saved_caches_directory: {d}/saved_caches\n\
                 hints_directory: {d}/hints\n\
                 commitlog_sync: periodic\n\
                 commitlog_sync_period: 10000ms\n\
                 seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n      - seeds: \"{seed}:{GOSSIP_PORT}\"\n\
                 listen_address: {host}\n\
                 rpc_address: {host}\n\
                 native_transport_port: {CQL_PORT}\n\
                 storage_port: {GOSSIP_PORT}\n\
                 endpoint_snitch: {snitch}\n\
                 start_native_transport: true\n\
                 concurrent_reads: 16\n\
                 concurrent_writes: 16\n\
                 concurrent_compactors: 1\n\
                 auto_snapshot: false\n{tls}",
            seed = ring.nodes[0].host,
            host = self.host,
            tls = ring.tls.as_ref().map(client_encryption).unwrap_or_default(),
        );
        std::fs::write(
            conf.join("cassandra.yaml"),
            with_settings(yaml, &ring.config),
        )?;
        std::fs::write(
            conf.join("cassandra-rackdc.properties"),
            format!("dc={}\nrack={}\n", self.dc, self.rack),
        )?;
        std::fs::write(
            conf.join("logback.xml"),
            format!(
                "<configuration>\n\
                 <appender name=\"FILE\" class=\"ch.qos.logback.core.FileAppender\">\n\
                 <file>{}</file>\n\
                 <encoder><pattern>%-5level [%thread] %date{{ISO8601, UTC}} %F:%L - %msg%n</pattern></encoder>\n\
                 </appender>\n\
                 <root level=\"INFO\"><appender-ref ref=\"FILE\"/></root>\n\
                 </configuration>\n",
                self.log_file().display()
            ),
        )?;
        Ok(())
    }
}

/// Clients must speak TLS, with the node's key and certificate from one PEM file.
fn client_encryption(certs: &ServerCerts) -> String {
    format!(
        "client_encryption_options:\n  enabled: true\n  optional: false\n  \
         ssl_context_factory:\n    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory\n  \
         keystore: {}\n  require_client_auth: false\n",
        certs.key_and_cert.display()
    )
}

/// hatshop's cassandra.yaml with `--set` settings: a key it writes gets the new
/// value, any other is added.
fn with_settings(yaml: String, settings: &[(String, String)]) -> String {
    let mut lines: Vec<String> = yaml.lines().map(String::from).collect();
    for (key, value) in settings {
        let line = format!("{key}: {value}");
        match lines.iter_mut().find(|l| l.starts_with(&format!("{key}:"))) {
            Some(old) => *old = line,
            None => lines.push(line),
        }
    }
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_settings_replace_hatshops_and_add_the_rest() {
        let yaml = "cluster_name: hatshop\nconcurrent_writes: 16\n".to_string();
        let set = [
            ("concurrent_writes".to_string(), "32".to_string()),
            ("batch_size_fail_threshold".to_string(), "4MiB".to_string()),
        ];
        assert_eq!(
            with_settings(yaml, &set),
            "cluster_name: hatshop\nconcurrent_writes: 32\nbatch_size_fail_threshold: 4MiB\n"
        );
    }
}
