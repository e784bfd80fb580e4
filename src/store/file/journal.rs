//! The journal: a sequence of segment files, each a header naming the format and the
//! revision it starts after, then one framed record per commit, appended in revision order.
//! Only the last segment is appended to; a segment is closed when it grows past the
//! rotation threshold and never written again. The segments together are the store's whole
//! history, and so its event log.
//!
//! Segment files are named `journal-<base revision, 20 digits>`; a store written by an
//! earlier version has one segment named `journal`.
//!
//! ```text
//! header  (24 bytes): magic "TGLJRNL\0" | version u32 | base revision u64 | crc32 of the 20 bytes before
//! record  (20 bytes + payload):
//!         payload length u32 | revision u64 | crc32 of payload | crc32 of the 16 bytes before
//!         payload: the commit's ChangeSet as JSON
//! batch end (20 bytes, version 2): a record with no payload, of the batch's last revision
//! zeros: space made ready for the records to come
//! ```
//!
//! All integers are little-endian. The record header has its own checksum so that a damaged
//! length is detected before it is trusted, and so that recovery can look for intact records
//! after a damaged one cheaply (see [`read`]).
//!
//! Version 2 writes records over zeros instead of appending them. A segment's space is
//! written with zeros and synced ahead of the records (as PostgreSQL's `wal_init_zero` does),
//! so that syncing a batch writes its data blocks only, not the file's length and block map
//! as well: on the machines measured, a sync of an overwrite takes about half as long as a
//! sync of an append. Each batch (the commits one sync makes durable) ends with a batch-end
//! record. A crash can leave any pages of the one unsynced batch on disk and lose others, in
//! no order; the batch ends are what lets recovery tell such a torn batch from damage to
//! records that had been synced (see [`read`]). Version 1 segments (appended, no batch ends)
//! are still read.

use super::{TruncatedTail, io_error};
use crate::store::{Revision, StoreError};

/// The name of the single journal of stores written by earlier versions.
pub(super) const LEGACY_NAME: &str = "journal";
const PREFIX: &str = "journal-";
const MAGIC: [u8; 8] = *b"TGLJRNL\0";
/// The journal format this build writes; it reads this one and [`APPENDED`].
pub(super) const VERSION: u32 = 2;
/// The format of earlier versions: records appended, no batch ends, no zeros.
pub(super) const APPENDED: u32 = 1;
/// Length of the file header; the first record starts here.
pub(super) const HEADER_LEN: u64 = 24;
pub(super) const RECORD_HEADER_LEN: usize = 20;

/// Frame `payload` (an encoded change set) as the record of commit `revision`.
pub(super) fn frame(revision: Revision, payload: &[u8]) -> Result<Vec<u8>, StoreError> {
    let len = u32::try_from(payload.len()).map_err(|_| {
        io_error(
            "could not journal a change set",
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "its encoding is {} bytes, over the 4 GiB record limit",
                    payload.len()
                ),
            ),
        )
    })?;
    let mut record = Vec::with_capacity(RECORD_HEADER_LEN + payload.len());
    record.extend_from_slice(&len.to_le_bytes());
    record.extend_from_slice(&revision.0.to_le_bytes());
    record.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let header_crc = crc32fast::hash(&record);
    record.extend_from_slice(&header_crc.to_le_bytes());
    record.extend_from_slice(payload);
    Ok(record)
}

/// The record that ends a batch whose last commit is `revision`: a record with no payload.
pub(super) fn batch_end(revision: Revision) -> [u8; RECORD_HEADER_LEN] {
    let mut record = [0; RECORD_HEADER_LEN];
    // Payload length 0, and the crc32 of no bytes, which is 0.
    record[4..12].copy_from_slice(&revision.0.to_le_bytes());
    let header_crc = crc32fast::hash(&record[..16]);
    record[16..].copy_from_slice(&header_crc.to_le_bytes());
    record
}

/// The file name of the segment whose records follow `base`.
pub(super) fn segment_name(base: Revision) -> String {
    format!("{PREFIX}{:020}", base.0)
}

/// Whether `name` is a journal segment (of this version or an earlier one).
pub(super) fn is_segment(name: &str) -> bool {
    name == LEGACY_NAME
        || name
            .strip_prefix(PREFIX)
            .is_some_and(|digits| digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Create the empty segment whose records follow `base`, crash-safely: its header is
/// written and synced under a temporary name (removed on open) and renamed into place, so a
/// segment file is never seen without its whole header. Returns the segment's name.
pub(super) fn create_segment(
    disk: &dyn super::disk::Disk,
    base: Revision,
) -> Result<String, StoreError> {
    let name = segment_name(base);
    let temp = format!("{name}.tmp");
    disk.remove(&temp)
        .and_then(|()| disk.create(&temp, &header(base)))
        .and_then(|()| disk.rename(&temp, &name))
        .and_then(|()| disk.sync_dir())
        .map_err(|e| io_error(format!("could not create {}", disk.describe(&name)), e))?;
    Ok(name)
}

/// The header of a segment whose records follow `base`.
pub(super) fn header(base: Revision) -> Vec<u8> {
    header_of_version(base, VERSION)
}

/// The header of a segment of an earlier version (records appended, no batch ends).
#[cfg(test)]
pub(super) fn appended_header(base: Revision) -> Vec<u8> {
    header_of_version(base, APPENDED)
}

fn header_of_version(base: Revision, version: u32) -> Vec<u8> {
    let mut header = Vec::with_capacity(HEADER_LEN as usize);
    header.extend_from_slice(&MAGIC);
    header.extend_from_slice(&version.to_le_bytes());
    header.extend_from_slice(&base.0.to_le_bytes());
    let crc = crc32fast::hash(&header);
    header.extend_from_slice(&crc.to_le_bytes());
    header
}

/// What [`read`] found in a journal.
#[derive(Debug)]
pub(super) struct Contents {
    /// The revision the journal starts after.
    pub base: Revision,
    /// The segment's format: [`VERSION`] or [`APPENDED`].
    pub version: u32,
    /// The intact records in order, where they are in the file (the caller decodes their
    /// payloads: a segment's change sets decoded all at once would take many times its size).
    pub records: Vec<Frame>,
    /// Where the intact records end: the length the file must have.
    pub valid_len: u64,
    /// The damaged tail that follows them, if any.
    pub torn_tail: Option<TruncatedTail>,
}

impl Contents {
    /// Whether records can be written after the last one: the segment is of the format this
    /// build writes.
    pub(super) fn is_current(&self) -> bool {
        self.version == VERSION
    }
}

/// Where one intact record is in its segment.
#[derive(Debug, Clone, Copy)]
pub(super) struct Frame {
    /// The commit's revision.
    pub revision: Revision,
    /// Where the record (its header) starts.
    pub start: u64,
    /// Where it ends: the next record's start.
    pub end: u64,
}

impl Frame {
    /// The record's payload (the change set as JSON) in `bytes`, the whole segment.
    pub(super) fn payload<'a>(&self, bytes: &'a [u8]) -> &'a [u8] {
        let start = usize::try_from(self.start).unwrap_or(usize::MAX);
        let end = usize::try_from(self.end).unwrap_or(usize::MAX);
        bytes
            .get(start.saturating_add(RECORD_HEADER_LEN)..end)
            .unwrap_or_default()
    }
}

/// The records of `bytes`, a run of whole records read back from a segment (the records of
/// an event block), each with its revision and payload. Any damage is corruption here: the
/// run was intact when the store indexed it.
pub(super) fn records_in<'a>(
    bytes: &'a [u8],
    file: &str,
    offset: u64,
) -> Result<Vec<(Revision, &'a [u8])>, StoreError> {
    let mut records = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        match record_at(bytes, pos) {
            Ok((revision, payload, end)) => {
                // A batch end has no payload, and no commit.
                if !payload.is_empty() {
                    records.push((revision, payload));
                }
                pos = end;
            }
            Err(damage) => {
                return Err(StoreError::Corrupt {
                    file: file.to_owned(),
                    offset: offset + pos as u64,
                    reason: format!("{damage}, in a record that was intact when the store opened"),
                });
            }
        }
    }
    Ok(records)
}

/// The revision a segment starts after, from its header (the first [`HEADER_LEN`] bytes of
/// `bytes`; more may follow).
pub(super) fn base_of(bytes: &[u8], file: &str) -> Result<Revision, StoreError> {
    header_of(bytes, file).map(|(base, _)| base)
}

/// The revision a segment starts after and its format, from its header.
fn header_of(bytes: &[u8], file: &str) -> Result<(Revision, u32), StoreError> {
    let corrupt = |reason: &str| StoreError::Corrupt {
        file: file.to_owned(),
        offset: 0,
        reason: reason.to_owned(),
    };
    if bytes.len() < HEADER_LEN as usize || bytes[..8] != MAGIC {
        return Err(corrupt("not a toggle-admin journal"));
    }
    let version = u32_at(bytes, 8);
    if version != VERSION && version != APPENDED {
        return Err(StoreError::UnsupportedFormat {
            file: file.to_owned(),
            found: version,
            supported: VERSION,
        });
    }
    if crc32fast::hash(&bytes[..20]) != u32_at(bytes, 20) {
        return Err(corrupt("the journal header fails its checksum"));
    }
    Ok((Revision(u64_at(bytes, 12)), version))
}

/// Parse a whole journal.
///
/// A record that is cut short or fails a checksum is either what a crash left of the last
/// batch, which was never synced and so never acknowledged, or damage to records that were.
/// A crash can only spoil the one batch being written, while bit rot or a bad edit in the
/// middle leaves whole batches after it, so:
///
/// * zeros from there to the end are no damage: the space made ready for records;
/// * in a segment with batch ends, the damage is a torn batch exactly when no intact batch
///   end follows it, or the first that does is followed by nothing but zeros (the torn
///   batch's own end, its pages written back before earlier ones); in an appended segment
///   (version 1), exactly when no intact record follows it anywhere in the file;
/// * otherwise the journal is corrupt at the damaged record's offset.
///
/// A torn batch is cut at the damaged record: the intact records before it stay (they were
/// accepted in order; their callers were not answered, so either outcome is allowed).
pub(super) fn read(bytes: &[u8], file: &str) -> Result<Contents, StoreError> {
    let corrupt = |offset: u64, reason: String| StoreError::Corrupt {
        file: file.to_owned(),
        offset,
        reason,
    };
    let header_len = HEADER_LEN as usize;
    let (base, version) = header_of(bytes, file)?;
    let contents = |records, valid_len: usize, torn_tail| Contents {
        base,
        version,
        records,
        valid_len: valid_len as u64,
        torn_tail,
    };

    let mut records = Vec::new();
    let mut previous = base;
    let mut pos = header_len;
    while pos < bytes.len() {
        let (revision, payload, end) = match record_at(bytes, pos) {
            Ok(record) => record,
            Err(damage) => {
                if bytes[pos..].iter().all(|&b| b == 0) {
                    return Ok(contents(records, pos, None));
                }
                let why = damage.to_string();
                if version == APPENDED {
                    if let Some(next) =
                        (pos + 1..bytes.len()).find(|&p| record_at(bytes, p).is_ok())
                    {
                        return Err(corrupt(
                            pos as u64,
                            format!("{why}, yet an intact record follows at byte {next}"),
                        ));
                    }
                } else if let Some(later) = (pos + 1..bytes.len())
                    .filter_map(|p| match record_at(bytes, p) {
                        Ok((_, [], end)) => Some(end),
                        _ => None,
                    })
                    .next()
                    && bytes[later..].iter().any(|&b| b != 0)
                {
                    return Err(corrupt(
                        pos as u64,
                        format!(
                            "{why}, yet a whole batch ends at byte {later} and more follows it"
                        ),
                    ));
                }
                return Ok(contents(
                    records,
                    pos,
                    Some(TruncatedTail {
                        offset: pos as u64,
                        bytes: (bytes.len() - pos) as u64,
                        reason: why,
                    }),
                ));
            }
        };
        if payload.is_empty() && version != APPENDED {
            // A batch end: of the batch's last commit, which is the record before it.
            if revision != previous || previous == base {
                return Err(corrupt(
                    pos as u64,
                    format!("the end of a batch of {revision} follows the record of {previous}"),
                ));
            }
            pos = end;
            continue;
        }
        if revision != previous.next() {
            return Err(corrupt(
                pos as u64,
                format!("record of {revision} follows {previous}"),
            ));
        }
        records.push(Frame {
            revision,
            start: pos as u64,
            end: end as u64,
        });
        previous = revision;
        pos = end;
    }
    Ok(contents(records, bytes.len(), None))
}

/// Why the bytes at some offset are not an intact record. Cheap to make: recovery probes
/// every offset of a damaged tail.
#[derive(Debug, Clone, Copy)]
enum Damage {
    HeaderCutShort,
    HeaderChecksum,
    PayloadCutShort(usize),
    PayloadChecksum,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Damage::HeaderCutShort => f.write_str("record header cut short"),
            Damage::HeaderChecksum => f.write_str("record header fails its checksum"),
            Damage::PayloadCutShort(len) => write!(f, "record of {len} bytes cut short"),
            Damage::PayloadChecksum => f.write_str("record fails its checksum"),
        }
    }
}

/// The intact record starting at `pos`: its revision, payload and end, or what is wrong.
fn record_at(bytes: &[u8], pos: usize) -> Result<(Revision, &[u8], usize), Damage> {
    let Some(header) = bytes.get(pos..pos.saturating_add(RECORD_HEADER_LEN)) else {
        return Err(Damage::HeaderCutShort);
    };
    if crc32fast::hash(&header[..16]) != u32_at(header, 16) {
        return Err(Damage::HeaderChecksum);
    }
    let len = u32_at(header, 0) as usize;
    let start = pos + RECORD_HEADER_LEN;
    let Some(payload) = bytes.get(start..start.saturating_add(len)) else {
        return Err(Damage::PayloadCutShort(len));
    };
    if crc32fast::hash(payload) != u32_at(header, 12) {
        return Err(Damage::PayloadChecksum);
    }
    Ok((Revision(u64_at(header, 4)), payload, start + len))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut buf = [0; 4];
    buf.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(buf)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut buf = [0; 8];
    buf.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(buf)
}
