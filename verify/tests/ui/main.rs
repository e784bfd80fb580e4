//! The admin page through its router without a socket (`tower::ServiceExt::oneshot`): sign-in
//! required, the session cookie's flags, CSRF refusals, the CSP, escaping and page weight over
//! every page, a Viewer's refusal, and each form: what it changes (read back through the
//! admin API), what a refusal shows (the reason next to its field) and that it changes
//! nothing.

mod access;
mod context;
mod feature_archive;
mod feature_edits;
mod features;
mod import;
mod pages;
mod playground;
mod security;
mod segments;
mod strategies;
mod support;
mod variants;
mod viewer;
