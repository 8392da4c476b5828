//! What a point select costs a client with nothing around it: the floor under hatshop's
//! `race-sql-select`. CONNS connections as tasks of one tokio runtime of THREADS
//! threads, each sending a prepared `SELECT c FROM TABLE WHERE id=?` (ids uniform over
//! 1..=100,000) and waiting for its row, OPS selects in all. Prints "selects/s client
//! µs/select" (user + system CPU of this process over the selects ÷ OPS).
//!
//!   select-floor raw|driver|threaded THREADS CONNS OPS DATABASE TABLE
//!
//! `raw` speaks MariaDB's binary protocol by hand: one write and one read per select.
//! `threaded` is `raw` with a thread per connection, each with a single-threaded
//! runtime of its own (THREADS is then ignored), as sysbench has a thread per
//! connection.
//! `driver` sends the same statement through mysql_async, as hatshop does, without
//! hatshop around it. In both, each select's future is boxed (as hatshop boxes each
//! call), its only allocation in `raw`. Connects as root without a password to
//! 127.0.0.1:3306 (a server from `hatshop server start mysql`). Ends with an error when
//! no connection opens and no select is answered for 10 s.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

type Result<T> = std::result::Result<T, String>;

const ADDRESS: &str = "127.0.0.1:3306";
const ROWS: u64 = 100_000;
/// How long the probe waits without a connection opened or a select answered.
const SILENCE: Duration = Duration::from_secs(10);

/// Connections opened so far.
static OPENED: AtomicUsize = AtomicUsize::new(0);
/// Selects not yet begun: the race's own counter, so that watching it costs the
/// selects nothing.
static LEFT: AtomicI64 = AtomicI64::new(0);

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let usage = "usage: select-floor raw|driver|threaded THREADS CONNS OPS DATABASE TABLE";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, threads, conns, ops, database, table] = &args[..] else {
        return Err(usage.into());
    };
    let number = |s: &str| {
        s.parse::<usize>()
            .map_err(|_| format!("not a number: {s}; {usage}"))
    };
    let (threads, conns, ops) = (number(threads)?, number(conns)?, number(ops)? as i64);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let sql = format!("SELECT c FROM {table} WHERE id=?");
    watch_for_silence();
    let (seconds, cpu) = match mode.as_str() {
        "raw" => runtime.block_on(raw::race(conns, ops, database, &sql))?,
        "driver" => runtime.block_on(driver::race(conns, ops, database, &sql))?,
        "threaded" => raw::race_threaded(conns, ops, database, &sql)?,
        _ => return Err(usage.into()),
    };
    println!("{:.0} {:.2}", ops as f64 / seconds, cpu * 1e6 / ops as f64);
    Ok(())
}

/// Ends the process with an error once neither counter has moved for `SILENCE`
/// (a thread of its own: the runtime's may all be waiting on a silent server).
fn watch_for_silence() {
    std::thread::spawn(|| {
        let progress = || (OPENED.load(Ordering::Relaxed), LEFT.load(Ordering::Relaxed));
        let (mut last, mut since) = (progress(), Instant::now());
        loop {
            std::thread::sleep(Duration::from_millis(200));
            if progress() != last {
                (last, since) = (progress(), Instant::now());
            } else if since.elapsed() >= SILENCE {
                eprintln!("error: no answer from {ADDRESS} in {} s", SILENCE.as_secs());
                std::process::exit(1);
            }
        }
    });
}

/// Ids of one connection: xorshift, so that drawing one costs next to nothing.
fn ids(connection: usize) -> impl FnMut() -> i64 {
    let mut x = 0x9E37_79B9_7F4A_7C15_u64 ^ connection as u64;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % ROWS) as i64 + 1
    }
}

/// User + system CPU of this process so far, in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Runs one task per connection until `ops` selects are done; returns the wall seconds
/// and CPU seconds they took.
async fn race<C, F>(conns: Vec<C>, ops: i64, select: F) -> Result<(f64, f64)>
where
    C: Send + 'static,
    F: Fn(C, i64) -> std::pin::Pin<Box<dyn Future<Output = Result<C>> + Send>>
        + Send
        + Sync
        + 'static,
{
    LEFT.store(ops, Ordering::Relaxed);
    let select = Arc::new(select);
    let (cpu, start) = (cpu_seconds(), Instant::now());
    let tasks: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, mut conn)| {
            let select = select.clone();
            tokio::spawn(async move {
                let mut next_id = ids(i);
                while LEFT.fetch_sub(1, Ordering::Relaxed) > 0 {
                    conn = select(conn, next_id()).await?;
                }
                Ok::<_, String>(())
            })
        })
        .collect();
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok((start.elapsed().as_secs_f64(), cpu_seconds() - cpu))
}

mod driver {
    use std::sync::atomic::Ordering;

    use mysql_async::prelude::Queryable;
    use mysql_async::{Conn, Statement};

    use super::{OPENED, Result};

    pub async fn race(conns: usize, ops: i64, database: &str, sql: &str) -> Result<(f64, f64)> {
        // prefer_socket=false: else mysql_async reconnects through the Unix socket.
        let url = format!(
            "mysql://root@{}/{database}?prefer_socket=false",
            super::ADDRESS
        );
        let mut opened = Vec::new();
        for _ in 0..conns {
            let mut conn = Conn::from_url(url.as_str())
                .await
                .map_err(|e| e.to_string())?;
            let statement = conn.prep(sql).await.map_err(|e| e.to_string())?;
            opened.push((conn, statement));
            OPENED.fetch_add(1, Ordering::Relaxed);
        }
        super::race(
            opened,
            ops,
            |(mut conn, statement): (Conn, Statement), id| {
                Box::pin(async move {
                    let row: Option<Vec<u8>> = conn
                        .exec_first(&statement, (id,))
                        .await
                        .map_err(|e| e.to_string())?;
                    row.ok_or_else(|| format!("no row {id}"))?;
                    Ok((conn, statement))
                })
            },
        )
        .await
    }
}

mod raw {
    use super::*;

    const CLIENT_CONNECT_WITH_DB: u32 = 1 << 3;
    const CLIENT_PROTOCOL_41: u32 = 1 << 9;
    const CLIENT_TRANSACTIONS: u32 = 1 << 13;
    const CLIENT_SECURE_CONNECTION: u32 = 1 << 15;
    const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
    /// MariaDB's: the server leaves out the columns of a prepared statement's rows.
    const MARIADB_CLIENT_CACHE_METADATA: u32 = 1 << 4;
    const COM_STMT_PREPARE: u8 = 0x16;
    const COM_STMT_EXECUTE: u8 = 0x17;
    const MYSQL_TYPE_LONGLONG: u8 = 8;

    /// A connection with one prepared statement and a read buffer kept for its life.
    pub struct Conn {
        stream: TcpStream,
        buf: Vec<u8>,
        start: usize,
        end: usize,
        statement: u32,
        types_sent: bool,
    }

    pub async fn race(conns: usize, ops: i64, database: &str, sql: &str) -> Result<(f64, f64)> {
        let mut opened = Vec::new();
        for _ in 0..conns {
            let mut conn = Conn::open(database).await?;
            conn.prepare(sql).await?;
            opened.push(conn);
            OPENED.fetch_add(1, Ordering::Relaxed);
        }
        super::race(opened, ops, |mut conn: Conn, id| {
            Box::pin(async move {
                conn.select(id).await?;
                Ok(conn)
            })
        })
        .await
    }

    /// Each connection on a thread of its own, opened and driven by its own
    /// single-threaded runtime; the clock and CPU count from when all are open.
    pub fn race_threaded(conns: usize, ops: i64, database: &str, sql: &str) -> Result<(f64, f64)> {
        LEFT.store(ops, Ordering::Relaxed);
        let ready = Arc::new(std::sync::Barrier::new(conns + 1));
        let threads: Vec<_> = (0..conns)
            .map(|i| {
                let (ready, database, sql) = (ready.clone(), database.to_string(), sql.to_string());
                std::thread::spawn(move || -> Result<()> {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| e.to_string())?;
                    runtime.block_on(async {
                        let opened = async {
                            let mut conn = Conn::open(&database).await?;
                            conn.prepare(&sql).await?;
                            Ok::<_, String>(conn)
                        }
                        .await;
                        OPENED.fetch_add(1, Ordering::Relaxed);
                        ready.wait();
                        let mut conn = opened?;
                        let mut next_id = ids(i);
                        while LEFT.fetch_sub(1, Ordering::Relaxed) > 0 {
                            conn.select(next_id()).await?;
                        }
                        Ok(())
                    })
                })
            })
            .collect();
        ready.wait();
        let (cpu, start) = (cpu_seconds(), Instant::now());
        for thread in threads {
            thread
                .join()
                .map_err(|_| "a connection's thread panicked".to_string())??;
        }
        Ok((start.elapsed().as_secs_f64(), cpu_seconds() - cpu))
    }

    impl Conn {
        async fn open(database: &str) -> Result<Conn> {
            let stream = TcpStream::connect(ADDRESS)
                .await
                .map_err(|e| e.to_string())?;
            stream.set_nodelay(true).map_err(|e| e.to_string())?;
            let mut conn = Conn {
                stream,
                buf: vec![0; 16 * 1024],
                start: 0,
                end: 0,
                statement: 0,
                types_sent: false,
            };
            let (server_caps, mariadb_caps) = greeting(&conn.packet().await?)?;
            let caps = server_caps
                & (CLIENT_CONNECT_WITH_DB
                    | CLIENT_PROTOCOL_41
                    | CLIENT_TRANSACTIONS
                    | CLIENT_SECURE_CONNECTION
                    | CLIENT_PLUGIN_AUTH);
            // Without CLIENT_MYSQL (bit 0) MariaDB reads the filler's last 4 bytes as its
            // own capabilities.
            let mut reply = Vec::new();
            reply.extend_from_slice(&caps.to_le_bytes());
            reply.extend_from_slice(&(16u32 << 20).to_le_bytes());
            reply.push(45); // utf8mb4_general_ci
            reply.extend_from_slice(&[0; 19]);
            reply.extend_from_slice(&(mariadb_caps & MARIADB_CLIENT_CACHE_METADATA).to_le_bytes());
            reply.extend_from_slice(b"root\0");
            reply.push(0); // no password: an empty auth response
            reply.extend_from_slice(database.as_bytes());
            reply.extend_from_slice(b"\0mysql_native_password\0");
            conn.send(1, &reply).await?;
            let mut answer = conn.packet().await?;
            if answer.first() == Some(&0xFE) {
                conn.send(3, &[]).await?; // switched to another plugin: still no password
                answer = conn.packet().await?;
            }
            ok(&answer, "login")?;
            Ok(conn)
        }

        async fn prepare(&mut self, sql: &str) -> Result<()> {
            let mut command = vec![COM_STMT_PREPARE];
            command.extend_from_slice(sql.as_bytes());
            self.send(0, &command).await?;
            let answer = self.packet().await?;
            ok(&answer, "prepare")?;
            let u16_at = |i: usize| u16::from_le_bytes([answer[i], answer[i + 1]]);
            self.statement = u32::from_le_bytes([answer[1], answer[2], answer[3], answer[4]]);
            let (columns, params) = (u16_at(5), u16_at(7));
            // Each list of definitions ends with an EOF packet.
            for count in [params, columns] {
                if count > 0 {
                    for _ in 0..=count {
                        self.skip().await?;
                    }
                }
            }
            Ok(())
        }

        /// Executes the statement for `id`; its types are sent on the first execute only.
        async fn select(&mut self, id: i64) -> Result<()> {
            let mut packet = [0u8; 4 + 22];
            packet[4] = COM_STMT_EXECUTE;
            packet[5..9].copy_from_slice(&self.statement.to_le_bytes());
            packet[10..14].copy_from_slice(&1u32.to_le_bytes()); // iteration count
            let value_at = if self.types_sent {
                16
            } else {
                packet[15] = 1;
                packet[16] = MYSQL_TYPE_LONGLONG;
                18
            };
            packet[value_at..value_at + 8].copy_from_slice(&id.to_le_bytes());
            let len = value_at + 8;
            packet[0] = (len - 4) as u8;
            self.types_sent = true;
            self.stream
                .write_all(&packet[..len])
                .await
                .map_err(|e| e.to_string())?;
            // Column count and whether the columns follow; the columns, if they do; the
            // EOF that ends them (sent also when they do not); the rows; an EOF.
            let len = self.next_len().await?;
            let head = &self.buf[self.start + 4..self.start + 4 + len];
            if head.first() == Some(&0xFF) {
                return Err(format!("execute: {}", String::from_utf8_lossy(head)));
            }
            let (columns, follow) = (head[0] as usize, head.get(1) != Some(&0));
            self.start += 4 + len;
            let definitions = if follow { columns } else { 0 };
            for _ in 0..=definitions {
                self.skip().await?;
            }
            let mut rows = 0;
            while self.skip().await? != Some(0xFE) {
                rows += 1;
            }
            if rows == 1 {
                Ok(())
            } else {
                Err(format!("id {id}: {rows} rows"))
            }
        }

        async fn send(&mut self, sequence: u8, body: &[u8]) -> Result<()> {
            let len = body.len();
            let mut packet = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, sequence];
            packet.extend_from_slice(body);
            self.stream
                .write_all(&packet)
                .await
                .map_err(|e| e.to_string())
        }

        /// The next packet's body, copied (setup only).
        async fn packet(&mut self) -> Result<Vec<u8>> {
            let len = self.next_len().await?;
            let body = self.buf[self.start + 4..self.start + 4 + len].to_vec();
            self.start += 4 + len;
            Ok(body)
        }

        /// Passes over the next packet; returns its first byte if it is an EOF
        /// packet's (0xFE and short), else `None`.
        async fn skip(&mut self) -> Result<Option<u8>> {
            let len = self.next_len().await?;
            let first = self.buf[self.start + 4];
            self.start += 4 + len;
            Ok((first == 0xFE && len < 9).then_some(first))
        }

        /// Reads until a whole packet is buffered; returns its body's length.
        async fn next_len(&mut self) -> Result<usize> {
            loop {
                let buffered = &self.buf[self.start..self.end];
                if buffered.len() >= 4 {
                    let len = u32::from_le_bytes([buffered[0], buffered[1], buffered[2], 0]);
                    if buffered.len() >= 4 + len as usize {
                        return Ok(len as usize);
                    }
                }
                if self.start == self.end {
                    (self.start, self.end) = (0, 0);
                } else if self.buf.len() - self.end < 4096 {
                    self.buf.copy_within(self.start..self.end, 0);
                    (self.start, self.end) = (0, self.end - self.start);
                }
                if self.buf.len() - self.end < 4096 {
                    self.buf.resize(self.buf.len() * 2, 0);
                }
                let n = self
                    .stream
                    .read(&mut self.buf[self.end..])
                    .await
                    .map_err(|e| e.to_string())?;
                if n == 0 {
                    return Err("the server closed the connection".into());
                }
                self.end += n;
            }
        }
    }

    /// The server's capabilities and MariaDB's own, from its greeting (protocol 10).
    fn greeting(packet: &[u8]) -> Result<(u32, u32)> {
        let bad = || "not a MariaDB greeting".to_string();
        if packet.first() != Some(&10) {
            return Err(bad());
        }
        let version_end = 1 + packet[1..].iter().position(|&b| b == 0).ok_or_else(bad)?;
        // After the version: connection id (4), scramble (8), filler (1), then the
        // capabilities' low half, charset, status, high half, scramble length, 6 bytes
        // of filler and MariaDB's capabilities.
        let at = version_end + 1 + 4 + 8 + 1;
        let field = packet.get(at..at + 19).ok_or_else(bad)?;
        let low = u16::from_le_bytes([field[0], field[1]]) as u32;
        let high = u16::from_le_bytes([field[5], field[6]]) as u32;
        let mariadb = u32::from_le_bytes([field[14], field[15], field[16], field[17]]);
        Ok((low | high << 16, mariadb))
    }

    fn ok(packet: &[u8], what: &str) -> Result<()> {
        match packet.first() {
            Some(0) => Ok(()),
            _ => Err(format!(
                "{what}: {}",
                String::from_utf8_lossy(packet.get(9..).unwrap_or_default())
            )),
        }
    }
}
