//! TLS to the real PostgreSQL server (`TOGGLE_ADMIN_TEST_POSTGRES`, whose server has SSL on
//! with the self-signed certificate `/etc/ssl/certs/ssl-cert-snakeoil.pem`, issued for
//! `localhost`): `sslmode` and `sslrootcert` as libpq honours them, proven with `pg_stat_ssl`.

use test_support::postgres as pg;

use toggle_admin::store::{PostgresStore, StoreError};

/// The server's certificate, which is its own root.
const SERVER_CERT: &str = "/etc/ssl/certs/ssl-cert-snakeoil.pem";
/// Public roots, none of which signed the server's certificate.
const WRONG_ROOTS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// `url` with the query parameters `params` added.
fn with_params(url: &str, params: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{params}")
}

/// `url` with its host replaced by `host`.
fn with_host(url: &str, host: &str) -> String {
    url.replace("127.0.0.1", host)
}

async fn connect(schema: &pg::TestSchema, url: String) -> Result<PostgresStore, StoreError> {
    let mut config = schema.config();
    config.url = url;
    PostgresStore::connect(config.with_pool_size(1)).await
}

/// Whether the store's session (found by its application name) is encrypted, and with what.
async fn ssl_of(url: &str, application_name: &str) -> (bool, Option<String>) {
    let client = pg::admin(url).await;
    let row = client
        .query_one(
            "SELECT s.ssl, s.version FROM pg_stat_ssl s \
             JOIN pg_stat_activity a ON a.pid = s.pid WHERE a.application_name = $1",
            &[&application_name],
        )
        .await
        .expect("the store's session is listed");
    (row.get(0), row.get(1))
}

#[tokio::test(flavor = "multi_thread")]
async fn require_encrypts_the_connection() {
    let Some(url) = pg::database_url() else {
        return;
    };
    let schema = pg::TestSchema::new(&url);
    let store = connect(&schema, with_params(&url, "sslmode=require"))
        .await
        .expect("sslmode=require connects to a server with SSL on");
    let (ssl, version) = ssl_of(&url, &schema.name).await;
    assert!(ssl, "pg_stat_ssl says the session is not encrypted");
    assert!(
        version.as_deref().is_some_and(|v| v.starts_with("TLSv1.")),
        "{version:?}"
    );
    store.close();
}

#[tokio::test(flavor = "multi_thread")]
async fn disable_does_not_encrypt_and_prefer_does() {
    let Some(url) = pg::database_url() else {
        return;
    };
    for (mode, encrypted) in [("disable", false), ("prefer", true)] {
        let schema = pg::TestSchema::new(&url);
        let store = connect(&schema, with_params(&url, &format!("sslmode={mode}")))
            .await
            .unwrap_or_else(|e| panic!("sslmode={mode}: {e}"));
        assert_eq!(
            ssl_of(&url, &schema.name).await.0,
            encrypted,
            "sslmode={mode}"
        );
        store.close();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_with_a_wrong_root_certificate_is_refused() {
    let Some(url) = pg::database_url() else {
        return;
    };
    let schema = pg::TestSchema::new(&url);
    let url = with_host(&url, "localhost");
    let error = connect(
        &schema,
        with_params(
            &url,
            &format!("sslmode=verify-full&sslrootcert={WRONG_ROOTS}"),
        ),
    )
    .await
    .expect_err("a certificate no root of the file signed is refused");
    let message = error.to_string();
    assert!(
        message.contains("invalid peer certificate") && message.contains("UnknownIssuer"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_checks_the_host_name_and_verify_ca_does_not() {
    let Some(url) = pg::database_url() else {
        return;
    };
    let root = format!("sslrootcert={SERVER_CERT}");
    // The certificate is issued for localhost: verify-full there succeeds, encrypted.
    let schema = pg::TestSchema::new(&url);
    let store = connect(
        &schema,
        with_params(
            &with_host(&url, "localhost"),
            &format!("sslmode=verify-full&{root}"),
        ),
    )
    .await
    .expect("verify-full against the right root and host name");
    assert!(ssl_of(&url, &schema.name).await.0);
    store.close();

    // …but not for 127.0.0.1.
    let schema = pg::TestSchema::new(&url);
    let error = connect(
        &schema,
        with_params(&url, &format!("sslmode=verify-full&{root}")),
    )
    .await
    .expect_err("verify-full refuses a certificate for another name");
    assert!(
        error
            .to_string()
            .contains("not valid for name \"127.0.0.1\""),
        "{error}"
    );

    // verify-ca (and require with a root file, as in libpq) only check the chain.
    for mode in ["verify-ca", "require"] {
        let schema = pg::TestSchema::new(&url);
        let store = connect(
            &schema,
            with_params(&url, &format!("sslmode={mode}&{root}")),
        )
        .await
        .unwrap_or_else(|e| panic!("sslmode={mode} with the right root: {e}"));
        assert!(ssl_of(&url, &schema.name).await.0);
        store.close();
    }
    // require with a wrong root file is refused, as verify-ca would be.
    let schema = pg::TestSchema::new(&url);
    let error = connect(
        &schema,
        with_params(&url, &format!("sslmode=require&sslrootcert={WRONG_ROOTS}")),
    )
    .await
    .expect_err("require with a root file verifies the chain");
    assert!(error.to_string().contains("UnknownIssuer"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_tls_settings_are_named() {
    let Some(url) = pg::database_url() else {
        return;
    };
    let schema = pg::TestSchema::new(&url);
    let error = connect(&schema, with_params(&url, "sslmode=sometimes"))
        .await
        .expect_err("an unknown sslmode");
    assert!(
        error.to_string().contains("invalid sslmode \"sometimes\""),
        "{error}"
    );
    let error = connect(
        &schema,
        with_params(&url, "sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem"),
    )
    .await
    .expect_err("a missing root file");
    let message = error.to_string();
    assert!(
        message.contains("/nonexistent/ca.pem") && message.contains("verify-ca"),
        "{message}"
    );
}
