//! What a full TLS handshake costs the client with hatshop's TLS (rustls and
//! aws-lc-rs's cryptography, the one library every store's client uses), beside
//! `openssl s_time -new` against the same port (OpenSSL, which libpq, libmariadb and
//! hiredis use):
//!
//!   cargo run --release --example tls_handshake -- HOST:PORT CA.pem COUNT
//!
//! The port must begin with TLS (a Redis `tls-port`, Cassandra's native port with
//! client encryption); each handshake is a new connection, checked against the CA and
//! the host's name, with no session resumed. Prints `handshakes/s client_µs/handshake
//! version cipher`: user + system CPU of the whole process over the handshakes, ÷ COUNT.

use std::path::PathBuf;
use std::time::Instant;

use hatshop::client_cost::{ClientCost, CpuSnapshot};

const USAGE: &str = "usage: tls_handshake HOST:PORT CA.pem COUNT";

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [address, ca, count] = args.as_slice() else {
        return Err(USAGE.into());
    };
    let (host, port) = address.rsplit_once(':').ok_or(USAGE)?;
    let port: u16 = port.parse().map_err(|_| USAGE)?;
    let count: u64 = count.parse().map_err(|_| USAGE)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let cpu = CpuSnapshot::now();
    let began = Instant::now();
    let spoken = runtime
        .block_on(hatshop::db::handshake_cost(
            host,
            port,
            &PathBuf::from(ca),
            count,
        ))
        .map_err(|e| e.message)?;
    let cost = ClientCost::since(&cpu, count);
    let wall = began.elapsed().as_secs_f64();
    let last = spoken.last().ok_or("no handshake")?;
    println!(
        "{:.0} {:.1} {} {}",
        count as f64 / wall,
        cost.cpu_us_per_op,
        last.version,
        last.cipher
    );
    Ok(())
}
