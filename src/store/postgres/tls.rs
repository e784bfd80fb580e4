//! TLS to PostgreSQL with rustls, configured as libpq is: by the connection string's
//! `sslmode` and `sslrootcert`.
//!
//! | `sslmode` | encrypted | server certificate checked |
//! |---|---|---|
//! | `disable` | never | — |
//! | `prefer` (the default) | when the server offers it, else plain | no |
//! | `require` | always | no; like `verify-ca` when `sslrootcert` is given (as libpq does) |
//! | `verify-ca` | always | signed by a root of `sslrootcert` |
//! | `verify-full` | always | signed by a root of `sslrootcert` and issued for the host name |
//!
//! `sslrootcert` is a PEM file of root certificates; without one, libpq's default
//! `~/.postgresql/root.crt` is read for `verify-ca` and `verify-full`, and makes `require`
//! verify the chain when it exists. In `key=value` connection strings, the two values cannot
//! contain spaces.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres::config::SslMode as PgSslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::failure::plain;
use crate::store::StoreError;

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<Self, StoreError> {
        Ok(match value {
            "disable" => SslMode::Disable,
            // libpq's `allow` tries plain first; encrypting when offered is the safer reading.
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(plain(format!(
                    "PostgreSQL: invalid sslmode {other:?}: expected disable, prefer, require, \
                     verify-ca or verify-full"
                )));
            }
        })
    }
}

/// The TLS settings taken out of a connection string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TlsSettings {
    pub(super) mode: SslMode,
    pub(super) root_cert: Option<PathBuf>,
}

/// Take `sslmode` and `sslrootcert` out of `url` (a URL or `key=value` pairs), which
/// tokio-postgres does not understand in full; the rest is left for it to parse.
pub(super) fn split_settings(url: &str) -> Result<(String, TlsSettings), StoreError> {
    let mut mode = None;
    let mut root_cert = None;
    let mut take = |key: &str, value: String| -> Result<bool, StoreError> {
        match key {
            "sslmode" => mode = Some(SslMode::parse(&value)?),
            "sslrootcert" => root_cert = Some(PathBuf::from(value)),
            _ => return Ok(false),
        }
        Ok(true)
    };
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        match url.split_once('?') {
            None => url.to_owned(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(key, percent_decode(value)?)? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
        }
    } else {
        let mut kept = Vec::new();
        for pair in url.split_whitespace() {
            let taken = match pair.split_once('=') {
                Some((key, value)) => take(key.trim(), value.trim_matches('\'').to_owned())?,
                None => false,
            };
            if !taken {
                kept.push(pair);
            }
        }
        kept.join(" ")
    };
    let settings = TlsSettings {
        mode: mode.unwrap_or(SslMode::Prefer),
        root_cert,
    };
    Ok((rest, settings))
}

fn percent_decode(value: &str) -> Result<String, StoreError> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    plain(format!(
                        "PostgreSQL: invalid percent-encoding in the connection URL's {value:?}"
                    ))
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| {
        plain(format!(
            "PostgreSQL: {value:?} in the connection URL is not UTF-8"
        ))
    })
}

/// The tokio-postgres mode and the rustls connector for `settings`.
pub(super) fn connector(
    settings: &TlsSettings,
) -> Result<(PgSslMode, MakeRustlsConnect), StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| plain(format!("PostgreSQL: TLS setup: {e}")))?;
    let algorithms = provider.signature_verification_algorithms;
    // libpq: `require` with a root certificate file (given, or at the default place)
    // behaves as `verify-ca`.
    let mut root_cert = settings.root_cert.clone();
    if settings.mode == SslMode::Require && root_cert.is_none() {
        root_cert = default_root_cert().filter(|path| path.is_file());
    }
    let mode = match (settings.mode, &root_cert) {
        (SslMode::Require, Some(_)) => SslMode::VerifyCa,
        (mode, _) => mode,
    };
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        SslMode::Disable | SslMode::Prefer | SslMode::Require => {
            Arc::new(EncryptOnly { algorithms })
        }
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let roots = Arc::new(load_roots(root_cert.as_deref(), mode)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| plain(format!("PostgreSQL: TLS setup: {e}")))?;
            if mode == SslMode::VerifyFull {
                webpki
            } else {
                Arc::new(AnyName { inner: webpki })
            }
        }
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    let pg_mode = match mode {
        SslMode::Disable => PgSslMode::Disable,
        SslMode::Prefer => PgSslMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => PgSslMode::Require,
    };
    Ok((pg_mode, MakeRustlsConnect::new(config)))
}

/// libpq's default root certificate file, `~/.postgresql/root.crt`.
fn default_root_cert() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|home| Path::new(&home).join(".postgresql/root.crt"))
}

fn load_roots(path: Option<&Path>, mode: SslMode) -> Result<RootCertStore, StoreError> {
    let mode_name = if mode == SslMode::VerifyFull {
        "verify-full"
    } else {
        "verify-ca"
    };
    let path = match path {
        Some(path) => path.to_owned(),
        None => default_root_cert().ok_or_else(|| {
            plain(format!(
                "PostgreSQL: sslmode={mode_name} needs root certificates: set sslrootcert=FILE"
            ))
        })?,
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&path)
        .and_then(|certs| certs.collect())
        .map_err(|e| {
            plain(format!(
                "PostgreSQL: sslmode={mode_name}: cannot read root certificates from {}: {e}",
                path.display()
            ))
        })?;
    let mut roots = RootCertStore::empty();
    let (_, ignored) = roots.add_parsable_certificates(certs);
    if roots.is_empty() {
        return Err(plain(format!(
            "PostgreSQL: sslmode={mode_name}: no usable root certificate in {} ({ignored} \
             unparsable)",
            path.display()
        )));
    }
    Ok(roots)
}

/// `prefer` and `require`: the connection is encrypted, the server's certificate is not
/// checked (as libpq does without a root certificate); the handshake's signatures still are.
#[derive(Debug)]
struct EncryptOnly {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; the host name is not compared.
#[derive(Debug)]
struct AnyName {
    inner: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_leave_the_url_and_pairs() {
        let (rest, s) = split_settings(
            "postgres://u@h/db?application_name=x&sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem",
        )
        .unwrap();
        assert_eq!(rest, "postgres://u@h/db?application_name=x");
        assert_eq!(s.mode, SslMode::VerifyFull);
        assert_eq!(s.root_cert.as_deref(), Some(Path::new("/tmp/ca.pem")));
        let (rest, s) = split_settings("host=h sslmode=require user=u").unwrap();
        assert_eq!(rest, "host=h user=u");
        assert_eq!(s.mode, SslMode::Require);
        let (rest, s) = split_settings("postgres://u@h/db").unwrap();
        assert_eq!(rest, "postgres://u@h/db");
        assert_eq!(s.mode, SslMode::Prefer);
        let err = split_settings("postgres://h/db?sslmode=sometimes").unwrap_err();
        assert!(
            err.to_string().contains("invalid sslmode \"sometimes\""),
            "{err}"
        );
    }
}
