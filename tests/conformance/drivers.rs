//! The stores' own drivers, for what a test puts where hatshop will find it (a user, a
//! table it did not make), outside hatshop.

use mysql_async::prelude::Queryable;

/// Runs async driver work to its end on a runtime of its own.
pub fn block_on<F: std::future::Future>(work: F) -> F::Output {
    tokio::runtime::Runtime::new().unwrap().block_on(work)
}

/// Runs `sql` (statements separated by `;`) on MariaDB at `db`.
pub fn mysql_sql(db: &str, sql: &str) {
    block_on(async {
        let mut conn = mysql_async::Conn::from_url(db).await.unwrap();
        conn.query_drop(sql).await.unwrap();
        conn.disconnect().await.unwrap();
    });
}

/// Runs `sql` (statements separated by `; `, each on its own) on PostgreSQL at `db`.
pub fn postgres_sql(db: &str, sql: &str) {
    block_on(async {
        let (client, connection) = tokio_postgres::connect(db, tokio_postgres::NoTls)
            .await
            .unwrap();
        let connection = tokio::spawn(connection);
        for statement in sql.split("; ") {
            client.batch_execute(statement).await.unwrap();
        }
        drop(client);
        let _ = connection.await;
    });
}
