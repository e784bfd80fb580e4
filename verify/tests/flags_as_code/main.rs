//! Flags as code through the real `toggle-admin` program: `export`, `plan` (Terraform's exit
//! codes) and `apply` against a served store, and `serve --import-file` seeding at start-up,
//! over the memory, file and PostgreSQL stores.

mod cli;
mod seeding;
mod support;
