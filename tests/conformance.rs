//! The store scenario suite over MemoryStore.

use toggle_admin::store::{MemoryStore, conformance};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_passes_the_conformance_suite() {
    conformance::run_all(|| async { MemoryStore::new() }).await;
}
