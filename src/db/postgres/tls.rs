//! tokio-postgres over hatshop's TLS (rustls, the verifier the mode asks for): the
//! driver's connections for setup, orders and verify speak TLS as the own wire does.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::db::tls::{Tls, TlsFacts, describe, facts_of};

/// What TLS the store's connections spoke, the last one's, for run.json.
#[derive(Clone, Default)]
pub struct Seen(Arc<Mutex<Option<TlsFacts>>>);

impl Seen {
    /// Notes what a connection spoke (`None`: no TLS).
    pub fn saw(&self, facts: Option<TlsFacts>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = facts;
    }

    /// As run.json's store settings say it: what was spoken, and the mode.
    pub fn describe(&self, tls: Option<&Tls>) -> String {
        let spoken = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match (tls, spoken) {
            (None, _) => "off (sslmode=disable)".into(),
            (Some(tls), Some(facts)) => format!("{} ({})", facts.summary(), tls.mode_source),
            (Some(tls), None) => format!("off: the server offers none ({})", tls.mode_source),
        }
    }
}

/// Makes TLS connections for tokio-postgres from hatshop's settings.
#[derive(Clone)]
pub struct MakeRustls {
    pub tls: Arc<Tls>,
    pub seen: Seen,
}

/// One connection's TLS, to come.
pub struct RustlsConnect(MakeRustls);

/// A connection over TLS.
pub struct RustlsStream(TlsStream<tokio_postgres::Socket>);

impl MakeTlsConnect<tokio_postgres::Socket> for MakeRustls {
    type Stream = RustlsStream;
    type TlsConnect = RustlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, _domain: &str) -> io::Result<RustlsConnect> {
        Ok(RustlsConnect(self.clone()))
    }
}

impl TlsConnect<tokio_postgres::Socket> for RustlsConnect {
    type Stream = RustlsStream;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream>> + Send>>;

    fn connect(self, socket: tokio_postgres::Socket) -> Self::Future {
        let MakeRustls { tls, seen } = self.0;
        Box::pin(async move {
            let connector = TlsConnector::from(tls.config.clone());
            match connector.connect(tls.server_name.clone(), socket).await {
                Ok(stream) => {
                    seen.saw(Some(facts_of(stream.get_ref().1)));
                    Ok(RustlsStream(stream))
                }
                Err(e) => {
                    let said = e
                        .get_ref()
                        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                        .map(|tls_error| describe(tls_error, &tls).message);
                    Err(match said {
                        Some(line) => io::Error::other(line),
                        None => e,
                    })
                }
            }
        })
    }
}

impl tokio_postgres::tls::TlsStream for RustlsStream {
    /// None: SCRAM without channel binding, as hatshop's own wire logs in.
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

impl AsyncRead for RustlsStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for RustlsStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, bytes)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}
