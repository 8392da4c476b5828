//! Who logs in, as a store's own tools find it: the user, the password with the place
//! it was found in, and the TLS settings. Each store reads its ecosystem's files and
//! variables in its own folder; what they find takes this one form.

use super::tls::TlsSettings;
use super::url::NetworkParts;

/// Who logs in, with what, and how. `User` is a `String` where the ecosystem has a
/// default user (`root`, `postgres`), an `Option` where no user means no login
/// (Cassandra's `AllowAllAuthenticator`).
pub struct Login<User = String> {
    pub user: User,
    pub password: Option<String>,
    /// Where the password came from: `URL`, `MYSQL_PWD`, `/root/.pgpass line 2`.
    pub password_from: Option<String>,
    pub tls: TlsSettings,
}

/// A password and the place it was found in.
pub type Found = (String, String);

impl<User> Login<User> {
    /// The login with the password found first, kept out of every output from here on.
    pub fn new(user: User, found: Option<Found>, tls: TlsSettings) -> Login<User> {
        if let Some((password, _)) = &found {
            crate::secrets::register(password);
        }
        let (password, password_from) = found.unzip();
        Login {
            user,
            password,
            password_from,
            tls,
        }
    }
}

/// The password the URL gives, which every ecosystem reads before its files.
pub fn in_url(address: &NetworkParts) -> Option<Found> {
    Some((address.password.clone()?, "URL".to_string()))
}
