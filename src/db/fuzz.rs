//! What a broken or hostile server may send, for the tests that feed it to hatshop's
//! own wires: valid replies mutated (bits flipped, bytes set, inserted, cut, repeated,
//! a stray CRLF in front), replayed by a server on loopback, for a fixed time each
//! (`HATSHOP_FUZZ_SECONDS` runs them longer).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

/// A seeded source of mutations (splitmix64: the same seed, the same bytes).
pub struct Mutator(u64);

impl Mutator {
    /// Mutations drawn from `seed`.
    pub fn new(seed: u64) -> Mutator {
        Mutator(seed)
    }

    /// The next random number.
    pub fn next(&mut self) -> u64 {
        crate::workload::splitmix64(&mut self.0)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// `valid` changed in one to three ways.
    pub fn mutate(&mut self, valid: &[u8]) -> Vec<u8> {
        let mut out = valid.to_vec();
        for _ in 0..1 + self.below(3) {
            let at = self.below(out.len() + 1);
            match self.below(9) {
                0 | 1 => {
                    if let Some(byte) = out.get_mut(at) {
                        *byte ^= 1 << self.below(8);
                    }
                }
                2 => {
                    let value = self.next() as u8;
                    if let Some(byte) = out.get_mut(at) {
                        *byte = value;
                    }
                }
                3 => {
                    // A length's bytes at their extremes.
                    let value = [0x00, 0x7F, 0x80, 0xFF][self.below(4)];
                    if let Some(byte) = out.get_mut(at) {
                        *byte = value;
                    }
                }
                4 => {
                    let random: Vec<u8> =
                        (0..1 + self.below(8)).map(|_| self.next() as u8).collect();
                    out.splice(at..at, random);
                }
                5 => out.truncate(at),
                6 => {
                    let end = (at + 1 + self.below(16)).min(out.len());
                    out.drain(at.min(end)..end);
                }
                7 => {
                    let end = (at + 1 + self.below(16)).min(out.len());
                    let copy = out[at.min(end)..end].to_vec();
                    out.splice(at..at, copy);
                }
                _ => {
                    out.splice(0..0, b"\r\n".iter().copied());
                }
            }
        }
        out
    }
}

/// Calls `each` with a new seed until the budget has passed (`default` seconds, or
/// `HATSHOP_FUZZ_SECONDS`); returns how many ran, at least `minimum`.
pub fn for_a_while(default: f64, minimum: u64, mut each: impl FnMut(u64)) -> u64 {
    let seconds = std::env::var("HATSHOP_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(default);
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let mut ran = 0;
    while ran < minimum || Instant::now() < until {
        each(ran);
        ran += 1;
    }
    ran
}

/// Rounds of calls on connections fed mutated replies, for a while: `round` sets up
/// its server from the round's number and the mutator, makes one call, and gives
/// whether the call dropped its connection (`None` where the connection did not open).
/// Some calls must run, and some must drop theirs.
pub fn calls_on_mutated_replies(
    seed: u64,
    mut round: impl FnMut(u64, &mut Mutator, &tokio::runtime::Runtime) -> Option<bool>,
) {
    let runtime = runtime();
    let mut mutator = Mutator::new(seed);
    let (mut calls, mut dropped) = (0, 0);
    for_a_while(1.5, 30, |n| {
        if let Some(was_dropped) = round(n, &mut mutator, &runtime) {
            calls += 1;
            dropped += u64::from(was_dropped);
        }
    });
    assert!(calls > 0 && dropped > 0, "{calls} calls, {dropped} dropped");
}

/// Whether a fuzzed call dropped its connection, checked: an answer, or the server's
/// own error on a connection still in step, leaves it; anything else (what it could
/// not read, a call past its deadline) must have dropped it.
pub fn dropped<T, E>(
    ended: Result<Result<T, E>, tokio::time::error::Elapsed>,
    servers_own: impl Fn(&E) -> bool,
    broken: bool,
) -> bool {
    match ended {
        Ok(Ok(_)) => {
            assert!(!broken, "an answered call keeps its connection");
            false
        }
        Ok(Err(e)) if servers_own(&e) && !broken => false,
        Ok(Err(_)) | Err(_) => {
            assert!(
                broken,
                "a connection that met what it could not read is dropped"
            );
            true
        }
    }
}

/// A server on loopback that answers each request of one connection with the next of
/// `replies` (after reading whatever the request was), then closes: the port.
pub fn replying_server(replies: Vec<Vec<u8>>) -> u16 {
    greeting_server(Vec::new(), replies)
}

/// A server whose first words (a greeting, where not empty) come before any request,
/// then as [`replying_server`].
pub fn greeting_server(greeting: Vec<u8>, replies: Vec<Vec<u8>>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        let Ok((mut socket, _)) = listener.accept() else {
            return;
        };
        let _ = socket.set_read_timeout(Some(Duration::from_millis(100)));
        if socket.write_all(&greeting).is_err() {
            return;
        }
        let mut request = [0u8; 64 * 1024];
        for reply in replies {
            match socket.read(&mut request) {
                Ok(n) if n > 0 => {}
                _ => return,
            }
            if socket.write_all(&reply).is_err() {
                return;
            }
        }
    });
    port
}

/// A runtime for the live rounds.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}
