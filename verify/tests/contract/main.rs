//! Contracts against external references: ICU's root collation (the name order), Unleash's
//! client specification (feature `http`) and the OpenAPI 3.1 schema (feature `openapi`).

#[cfg(feature = "http")]
mod client_spec;
mod name_order_icu;
#[cfg(feature = "http")]
mod ofrep_agreement;
#[cfg(feature = "openapi")]
mod openapi;
#[cfg(feature = "http")]
mod playground_agreement;
