//! Logging in to MariaDB with mysql_async, tried again where the driver is at fault.

/// Opens a mysql_async connection, again when the login was refused (1045), twice at
/// most. mysql_common 0.37, the newest mysql_async 0.37 builds with, drops a trailing
/// zero byte from the data of an authentication switch. MariaDB's ed25519 plugin sends a
/// random 32-byte nonce there, so one login in 256 signs a nonce a byte short and is
/// refused (fixed upstream in
/// rust_mysql_common #193 and #194, in 0.38). Each try gets a new nonce; a
/// wrong password is refused three times before its error.
pub(super) async fn login_retried<T, F, Fut>(mut open: F) -> Result<T, mysql_async::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, mysql_async::Error>>,
{
    const ACCESS_DENIED: u16 = 1045;
    let mut refused = 0;
    loop {
        match open().await {
            Err(mysql_async::Error::Server(e)) if e.code == ACCESS_DENIED && refused < 2 => {
                refused += 1;
            }
            outcome => return outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refused_login_is_tried_twice_more_and_nothing_else_is() {
        let server = |code| {
            mysql_async::Error::Server(mysql_async::ServerError {
                code,
                message: "refused".into(),
                state: "28000".into(),
            })
        };
        let calls = std::cell::Cell::new(0);
        let refused_twice = login_retried(|| {
            calls.set(calls.get() + 1);
            let outcome = if calls.get() < 3 {
                Err(server(1045))
            } else {
                Ok(())
            };
            std::future::ready(outcome)
        });
        assert!(refused_twice.await.is_ok());
        assert_eq!(calls.get(), 3);
        calls.set(0);
        let always = login_retried(|| {
            calls.set(calls.get() + 1);
            std::future::ready(Err::<(), _>(server(1045)))
        });
        assert!(matches!(always.await, Err(mysql_async::Error::Server(e)) if e.code == 1045));
        assert_eq!(
            calls.get(),
            3,
            "a wrong password is asked three times, no more"
        );
        calls.set(0);
        let other = login_retried(|| {
            calls.set(calls.get() + 1);
            std::future::ready(Err::<(), _>(server(1049)))
        });
        assert!(other.await.is_err());
        assert_eq!(calls.get(), 1, "only a refused login is tried again");
    }
}
