//! A TLS session of hatshop's own wires: rustls's state machine beside the socket, not
//! around it, so that the socket can still move between event loops; reads and writes
//! go through it when a connection has one.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use rustls::ClientConnection;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{Tls, describe};
use crate::db::DbError;

/// One connection's TLS state.
pub struct Session(Box<ClientConnection>);

/// What a connection's TLS is, for run.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsFacts {
    /// "TLSv1.3".
    pub version: String,
    /// "TLS13_AES_256_GCM_SHA384".
    pub cipher: String,
}

/// Runs the TLS handshake over `io` (a socket at the point where the protocol turns to
/// TLS); a certificate or handshake that fails is one line saying which and why.
pub async fn handshake<T: AsyncRead + AsyncWrite + Unpin>(
    io: &mut T,
    tls: &Tls,
) -> Result<Session, DbError> {
    let connection = ClientConnection::new(tls.config.clone(), tls.server_name.clone())
        .map_err(|e| describe(&e, tls))?;
    let mut session = Session(Box::new(connection));
    std::future::poll_fn(|cx| session.poll_handshake(io, cx))
        .await
        .map_err(|e| match e {
            Failed::Tls(e) => describe(&e, tls),
            Failed::Io(e) => super::describe::io_failed(&e, tls),
        })?;
    Ok(session)
}

/// The protocol version and cipher suite a connection agreed.
pub fn facts_of(connection: &ClientConnection) -> TlsFacts {
    let version = match connection.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
        Some(other) => format!("{other:?}"),
        None => "?".into(),
    };
    let cipher = connection
        .negotiated_cipher_suite()
        .map_or_else(|| "?".into(), |suite| format!("{:?}", suite.suite()));
    TlsFacts { version, cipher }
}

impl TlsFacts {
    /// As run.json's store settings give it: "TLSv1.3 TLS13_AES_256_GCM_SHA384".
    pub fn summary(&self) -> String {
        format!("{} {}", self.version, self.cipher)
    }
}

/// How a handshake failed.
enum Failed {
    Tls(rustls::Error),
    Io(io::Error),
}

impl Session {
    /// The protocol version and cipher suite agreed.
    pub fn facts(&self) -> TlsFacts {
        facts_of(&self.0)
    }

    fn poll_handshake<T: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        io: &mut T,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Failed>> {
        loop {
            while self.0.wants_write() {
                match self.0.write_tls(&mut Blocking { io, cx }) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                    Err(e) => return Poll::Ready(Err(Failed::Io(e))),
                }
            }
            if !self.0.is_handshaking() {
                return Poll::Ready(Ok(()));
            }
            match self.0.read_tls(&mut Blocking { io, cx }) {
                Ok(0) => {
                    return Poll::Ready(Err(Failed::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection during the TLS handshake",
                    ))));
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) => return Poll::Ready(Err(Failed::Io(e))),
            }
            if let Err(e) = self.0.process_new_packets() {
                // The alert that says why goes out if it can; the error is ours to tell.
                let _ = self.0.write_tls(&mut Blocking { io, cx });
                return Poll::Ready(Err(Failed::Tls(e)));
            }
        }
    }

    /// Reads plaintext into `buf`, reading and opening records from `io` as needed.
    pub fn poll_read<T: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        io: &mut T,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            match self.0.reader().read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
            match self.0.read_tls(&mut Blocking { io, cx }) {
                // The reader says next time round whether the close was announced.
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) => return Poll::Ready(Err(e)),
            }
            if let Err(e) = self.0.process_new_packets() {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("TLS: {e}"),
                )));
            }
            // A key update or ticket may want an answer; it goes with the next write.
        }
    }

    /// Takes `bytes` as plaintext once what was taken before has gone out.
    pub fn poll_write<T: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        io: &mut T,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.poll_send(io, cx) {
            Poll::Ready(Ok(())) => {}
            // What was taken before is still going out.
            waiting => return waiting.map_ok(|()| 0),
        }
        let taken = self.0.writer().write(bytes)?;
        // Sent now where the socket takes it; else by the flush every request ends with.
        if let Poll::Ready(Err(e)) = self.poll_send(io, cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(taken))
    }

    /// Writes every record made so far to `io`.
    pub fn poll_send<T: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        io: &mut T,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        while self.0.wants_write() {
            match self.0.write_tls(&mut Blocking { io, cx }) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Pin::new(io).poll_flush(cx)
    }

    /// Says the connection ends (close_notify), to go out with the next send.
    pub fn close(&mut self) {
        self.0.send_close_notify();
    }
}

/// An async socket as the blocking `Read` and `Write` rustls takes, `WouldBlock`
/// standing for "pending" (the task is then woken when the socket is ready).
struct Blocking<'a, 'b, T> {
    io: &'a mut T,
    cx: &'a mut Context<'b>,
}

impl<T: AsyncRead + Unpin> Read for Blocking<'_, '_, T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut read = ReadBuf::new(buf);
        match Pin::new(&mut *self.io).poll_read(self.cx, &mut read) {
            Poll::Ready(Ok(())) => Ok(read.filled().len()),
            Poll::Ready(Err(e)) => Err(e),
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl<T: AsyncWrite + Unpin> Write for Blocking<'_, '_, T> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match Pin::new(&mut *self.io).poll_write(self.cx, bytes) {
            Poll::Ready(result) => result,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match Pin::new(&mut *self.io).poll_flush(self.cx) {
            Poll::Ready(result) => result,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}
