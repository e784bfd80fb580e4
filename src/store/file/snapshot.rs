//! The snapshot: the whole [`StoreState`] as of one revision, replaced only by rename.
//!
//! ```text
//! header (36 bytes): magic "TGLSNAP\0" | version u32 | revision u64 | payload length u64
//!                    | crc32 of payload | crc32 of the 32 bytes before
//! payload: the StoreState as JSON
//! ```
//!
//! All integers are little-endian. A snapshot is never written in place: it is written to
//! [`TEMP_NAME`], synced, and renamed over [`FILE_NAME`], so the file in place is always
//! whole; any damage to it is corruption, never a torn write.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::Path;

use super::io_error;
use super::journal::remove_if_exists;
use crate::store::{Revision, StoreError, StoreState};

/// The snapshot's file name in the store directory.
pub(super) const FILE_NAME: &str = "snapshot";
/// Where a new snapshot is written before it is renamed into place.
pub(super) const TEMP_NAME: &str = "snapshot.tmp";
const MAGIC: [u8; 8] = *b"TGLSNAP\0";
/// The snapshot format this build writes and reads.
pub(super) const VERSION: u32 = 1;
const HEADER_LEN: usize = 36;

/// Encode `state` as a snapshot file's bytes.
pub(super) fn encode(state: &StoreState) -> Result<Vec<u8>, StoreError> {
    let payload = serde_json::to_vec(state).map_err(|source| StoreError::Encoding {
        what: "the store state for a snapshot".to_owned(),
        source,
    })?;
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&state.revision().0.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    let header_crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&header_crc.to_le_bytes());
    bytes.extend_from_slice(&payload);
    Ok(bytes)
}

/// Write an encoded snapshot to [`TEMP_NAME`] and make it durable. The caller renames it
/// over [`FILE_NAME`].
pub(super) fn write_temp(dir: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let path = dir.join(TEMP_NAME);
    remove_if_exists(&path)?;
    let context = || format!("could not write the snapshot {}", path.display());
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| io_error(context(), e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error(context(), e))
}

/// Read the snapshot in `dir`, or an empty state if there is none yet.
pub(super) fn read(dir: &Path) -> Result<StoreState, StoreError> {
    let path = dir.join(FILE_NAME);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(StoreState::new()),
        Err(e) => {
            return Err(io_error(
                format!("could not read the snapshot {}", path.display()),
                e,
            ));
        }
    };
    decode(&bytes, &path)
}

fn decode(bytes: &[u8], path: &Path) -> Result<StoreState, StoreError> {
    let corrupt = |offset: u64, reason: String| StoreError::Corrupt {
        file: path.display().to_string(),
        offset,
        reason,
    };
    if bytes.len() < HEADER_LEN || bytes[..8] != MAGIC {
        return Err(corrupt(0, "not a toggle-admin snapshot".to_owned()));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != VERSION {
        return Err(StoreError::UnsupportedFormat {
            file: path.display().to_string(),
            found: version,
            supported: VERSION,
        });
    }
    let word = |at: usize| {
        let mut buf = [0; 8];
        buf.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(buf)
    };
    let crc =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    if crc32fast::hash(&bytes[..32]) != crc(32) {
        return Err(corrupt(
            0,
            "the snapshot header fails its checksum".to_owned(),
        ));
    }
    let revision = Revision(word(12));
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != word(20) {
        return Err(corrupt(
            HEADER_LEN as u64,
            format!(
                "the header announces {} bytes of state, the file holds {}",
                word(20),
                payload.len()
            ),
        ));
    }
    if crc32fast::hash(payload) != crc(28) {
        return Err(corrupt(
            HEADER_LEN as u64,
            "the state fails its checksum".to_owned(),
        ));
    }
    let state: StoreState = serde_json::from_slice(payload).map_err(|e| {
        corrupt(
            HEADER_LEN as u64,
            format!("the state is intact but does not decode: {e}"),
        )
    })?;
    if state.revision() != revision {
        return Err(corrupt(
            12,
            format!(
                "the header says {revision}, the state is at {}",
                state.revision()
            ),
        ));
    }
    Ok(state)
}
