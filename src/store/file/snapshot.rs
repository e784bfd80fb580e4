//! The snapshot: every record as of one revision (not the events: those stay in the journal
//! segments), replaced only by rename.
//!
//! ```text
//! header (36 bytes): magic "TGLSNAP\0" | version u32 | revision u64 | payload length u64
//!                    | crc32 of payload | crc32 of the 32 bytes before
//! payload: the Records as JSON (version 2); version 1 held the whole StoreState, events too
//! ```
//!
//! All integers are little-endian. A snapshot is never written in place: it is written to
//! [`TEMP_NAME`], synced, and renamed over [`FILE_NAME`], so the file in place is always
//! whole; any damage to it is corruption, never a torn write.

use crate::store::{Event, Records, Revision, StoreError, StoreState};

/// The snapshot's file name in the store directory.
pub(super) const FILE_NAME: &str = "snapshot";
/// Where a new snapshot is written before it is renamed into place.
pub(super) const TEMP_NAME: &str = "snapshot.tmp";
const MAGIC: [u8; 8] = *b"TGLSNAP\0";
/// The snapshot format this build writes and reads.
pub(super) const VERSION: u32 = 2;
/// The format of earlier versions, whose payload also held the event log.
const VERSION_WITH_EVENTS: u32 = 1;
const HEADER_LEN: usize = 36;

/// Encode `records` as a snapshot file's bytes.
pub(super) fn encode(records: &Records) -> Result<Vec<u8>, StoreError> {
    let payload = serde_json::to_vec(records).map_err(|source| StoreError::Encoding {
        what: "the records for a snapshot".to_owned(),
        source,
    })?;
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&records.revision().0.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    let header_crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&header_crc.to_le_bytes());
    bytes.extend_from_slice(&payload);
    Ok(bytes)
}

/// What a snapshot file holds: the records, and for the earlier format the event log too.
pub(super) struct Decoded {
    pub(super) records: Records,
    pub(super) events: Option<Vec<Event>>,
}

/// Decode the snapshot file `file` (named for messages).
pub(super) fn decode(bytes: &[u8], file: &str) -> Result<Decoded, StoreError> {
    let corrupt = |offset: u64, reason: String| StoreError::Corrupt {
        file: file.to_owned(),
        offset,
        reason,
    };
    if bytes.len() < HEADER_LEN || bytes[..8] != MAGIC {
        return Err(corrupt(0, "not a toggle-admin snapshot".to_owned()));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != VERSION && version != VERSION_WITH_EVENTS {
        return Err(StoreError::UnsupportedFormat {
            file: file.to_owned(),
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
    let decoded = if version == VERSION {
        let records: Records = serde_json::from_slice(payload).map_err(|e| {
            corrupt(
                HEADER_LEN as u64,
                format!("the records are intact but do not decode: {e}"),
            )
        })?;
        Decoded {
            records,
            events: None,
        }
    } else {
        let state: StoreState = serde_json::from_slice(payload).map_err(|e| {
            corrupt(
                HEADER_LEN as u64,
                format!("the state is intact but does not decode: {e}"),
            )
        })?;
        let (records, events) = state.into_parts();
        Decoded {
            records,
            events: Some(events),
        }
    };
    if decoded.records.revision() != revision {
        return Err(corrupt(
            12,
            format!(
                "the header says {revision}, the records are at {}",
                decoded.records.revision()
            ),
        ));
    }
    Ok(decoded)
}
