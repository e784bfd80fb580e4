//! The stores: the scenario suite over the MemoryStore, the FileStore (its files, recovery,
//! other processes, the facade over it), and the differential test of the three stores.

mod differential;
mod file;
mod file_facade;
mod file_process;
mod file_recovery;
#[cfg(feature = "conformance")]
mod memory_conformance;
