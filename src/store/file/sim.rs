//! A simulated disk for crash tests: it records every operation, and can materialise the
//! disk as a power loss after any of them would leave it. Written data survives a crash
//! only once synced, and names (creations, renames, removals) only once the directory is
//! synced (or, when the crash keeps unsynced data, as they were); of the bytes written since
//! a file's last sync, a crash keeps any prefix (a torn write), possibly as garbage, or any
//! scattered pieces of them (write-back in no particular order).

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::disk::Disk;

/// One operation, as recorded.
#[derive(Debug, Clone)]
enum Op {
    /// An empty file; `Disk::create` is this, a write and a sync.
    Create(String),
    Write(String, u64, Vec<u8>),
    Sync(String),
    Truncate(String, u64),
    Rename(String, String),
    Remove(String),
    SyncDir,
}

#[derive(Debug, Clone, Default)]
struct Inode {
    data: Vec<u8>,
    synced: Vec<u8>,
    /// The writes since the last sync, in order: where, and what.
    pending: Vec<(usize, Vec<u8>)>,
}

/// `bytes` written into `data` at `offset`, over what is there and past its end.
fn write_into(data: &mut Vec<u8>, offset: usize, bytes: &[u8]) {
    let end = offset + bytes.len();
    if data.len() < end {
        data.resize(end, 0);
    }
    data[offset..end].copy_from_slice(bytes);
}

#[derive(Debug, Clone, Default)]
struct State {
    inodes: Vec<Inode>,
    live: BTreeMap<String, usize>,
    durable: BTreeMap<String, usize>,
    log: Vec<Op>,
}

/// What a crash does to the bytes written since a file's last sync.
#[derive(Debug, Clone, Copy)]
pub(super) enum Unsynced {
    /// All of them are lost.
    Lost,
    /// The first `n` of them reached the disk.
    Kept(usize),
    /// The first `n` of them reached the disk damaged.
    Garbage(usize),
    /// Some pieces of them reached the disk, others not, in no order: of the written bytes cut
    /// into pieces of [`PIECE`] bytes, piece `i` reached it if bit `i % 64` of the mask is
    /// set (a page written back before the one before it).
    Scattered(u64),
}

/// The size of the pieces [`Unsynced::Scattered`] keeps or loses: small, so that a test's
/// short records span several.
pub(super) const PIECE: usize = 16;

/// A disk in memory; see the module's documentation.
#[derive(Debug, Default)]
pub(super) struct SimDisk {
    state: Mutex<State>,
    fail_next_sync: AtomicBool,
    fail_next_write: AtomicBool,
    /// The most bytes the live files may hold together (`None`: no limit).
    capacity: Mutex<Option<usize>>,
}

impl SimDisk {
    pub(super) fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many operations were recorded.
    pub(super) fn ops(&self) -> usize {
        self.state().log.len()
    }

    /// Flip the bits of the byte `from_end` bytes before the end of `name` as it is now
    /// (damage under an open store).
    pub(super) fn corrupt_byte_before_end(&self, name: &str, from_end: usize) {
        let mut state = self.state();
        if let Some(&id) = state.live.get(name) {
            let data = &mut state.inodes[id].data;
            if let Some(at) = data.len().checked_sub(from_end + 1) {
                data[at] = !data[at];
            }
        }
    }

    /// Make the next sync fail.
    pub(super) fn fail_next_sync(&self) {
        self.fail_next_sync.store(true, Ordering::SeqCst);
    }

    /// Make the next `write_at` of data (not zeros: the room a journal makes ready) fail
    /// after writing the first half of its bytes.
    pub(super) fn fail_next_write(&self) {
        self.fail_next_write.store(true, Ordering::SeqCst);
    }

    /// How many bytes the live files hold together.
    pub(super) fn used(&self) -> usize {
        let state = self.state();
        state
            .live
            .values()
            .map(|&id| state.inodes[id].data.len())
            .sum()
    }

    /// Let the live files hold at most `capacity` bytes together: a write that would grow
    /// them past it writes what fits and fails with `ErrorKind::StorageFull`, as a full disk
    /// does.
    pub(super) fn set_capacity(&self, capacity: Option<usize>) {
        *self.capacity.lock().unwrap_or_else(PoisonError::into_inner) = capacity;
    }

    /// How many of `len` bytes written into `name` at `offset` fit under the capacity.
    fn fitting(&self, name: &str, offset: u64, len: usize) -> usize {
        let Some(capacity) = *self.capacity.lock().unwrap_or_else(PoisonError::into_inner) else {
            return len;
        };
        let state = self.state();
        let used: usize = state
            .live
            .values()
            .map(|&id| state.inodes[id].data.len())
            .sum();
        let file_len = state
            .live
            .get(name)
            .map_or(0, |&id| state.inodes[id].data.len());
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        let free = capacity.saturating_sub(used);
        // Bytes up to the file's length (plus what is free) overwrite or fit.
        (file_len + free).saturating_sub(offset).min(len)
    }

    /// The disk as a power loss right after the first `ops` operations leaves it.
    pub(super) fn crash_after(&self, ops: usize, unsynced: Unsynced) -> SimDisk {
        let log: Vec<Op> = self.state().log.iter().take(ops).cloned().collect();
        let replayed = SimDisk::new();
        for op in log {
            // Replaying operations that succeeded once cannot fail.
            let _ = replayed.apply(op);
        }
        let state = replayed.state();
        let mut crashed = State::default();
        // A file system may also have written directory changes nobody synced yet: with
        // unsynced data kept, so are they.
        let names = match unsynced {
            Unsynced::Lost => &state.durable,
            Unsynced::Kept(_) | Unsynced::Garbage(_) | Unsynced::Scattered(_) => &state.live,
        };
        for (name, &inode) in names {
            let Inode {
                synced, pending, ..
            } = &state.inodes[inode];
            let mut bytes = synced.clone();
            // Each pending byte: where it goes, and its index among all pending bytes.
            let mut index = 0;
            for (offset, written) in pending {
                for (at, &byte) in written.iter().enumerate() {
                    let kept = match unsynced {
                        Unsynced::Lost => None,
                        Unsynced::Kept(n) => (index < n).then_some(byte),
                        Unsynced::Garbage(n) => (index < n).then_some(byte ^ 0x5a),
                        Unsynced::Scattered(mask) => {
                            (mask >> ((index / PIECE) % 64) & 1 == 1).then_some(byte)
                        }
                    };
                    if let Some(byte) = kept {
                        write_into(&mut bytes, offset + at, &[byte]);
                    }
                    index += 1;
                }
            }
            crashed.inodes.push(Inode {
                data: bytes.clone(),
                synced: bytes,
                pending: Vec::new(),
            });
            let id = crashed.inodes.len() - 1;
            crashed.live.insert(name.clone(), id);
            crashed.durable.insert(name.clone(), id);
        }
        SimDisk {
            state: Mutex::new(crashed),
            ..SimDisk::default()
        }
    }

    fn apply(&self, op: Op) -> io::Result<()> {
        let mut state = self.state();
        let missing = |name: &str| io::Error::new(io::ErrorKind::NotFound, name.to_owned());
        match &op {
            Op::Create(name) => {
                if state.live.contains_key(name) {
                    return Err(io::Error::new(io::ErrorKind::AlreadyExists, name.clone()));
                }
                state.inodes.push(Inode::default());
                let id = state.inodes.len() - 1;
                state.live.insert(name.clone(), id);
            }
            Op::Write(name, offset, bytes) => {
                let id = *state.live.get(name).ok_or_else(|| missing(name))?;
                let offset = usize::try_from(*offset)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, name.clone()))?;
                let inode = &mut state.inodes[id];
                write_into(&mut inode.data, offset, bytes);
                inode.pending.push((offset, bytes.clone()));
            }
            Op::Sync(name) => {
                let id = *state.live.get(name).ok_or_else(|| missing(name))?;
                let inode = &mut state.inodes[id];
                inode.synced = inode.data.clone();
                inode.pending.clear();
            }
            Op::Truncate(name, len) => {
                let id = *state.live.get(name).ok_or_else(|| missing(name))?;
                let inode = &mut state.inodes[id];
                inode
                    .data
                    .truncate(usize::try_from(*len).unwrap_or(usize::MAX));
                inode.synced = inode.data.clone();
                inode.pending.clear();
            }
            Op::Rename(from, to) => {
                let id = state.live.remove(from).ok_or_else(|| missing(from))?;
                state.live.insert(to.clone(), id);
            }
            Op::Remove(name) => {
                state.live.remove(name);
            }
            Op::SyncDir => state.durable = state.live.clone(),
        }
        state.log.push(op);
        Ok(())
    }
}

impl Disk for SimDisk {
    fn list(&self) -> io::Result<Vec<String>> {
        Ok(self.state().live.keys().cloned().collect())
    }

    fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        let state = self.state();
        Ok(state
            .live
            .get(name)
            .map(|&id| state.inodes[id].data.clone()))
    }

    fn read_at(&self, name: &str, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let state = self.state();
        let id = *state
            .live
            .get(name)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, name.to_owned()))?;
        let data = &state.inodes[id].data;
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        data.get(start..start.saturating_add(len))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, name.to_owned()))
    }

    fn create(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        // Three steps, as on a real disk: a crash between them leaves a short file.
        self.apply(Op::Create(name.to_owned()))?;
        self.write_at(name, 0, bytes)?;
        self.apply(Op::Sync(name.to_owned()))
    }

    fn write_at(&self, name: &str, offset: u64, bytes: &[u8]) -> io::Result<()> {
        if bytes.iter().any(|&b| b != 0) && self.fail_next_write.swap(false, Ordering::SeqCst) {
            let half = &bytes[..bytes.len() / 2];
            self.apply(Op::Write(name.to_owned(), offset, half.to_vec()))?;
            return Err(io::Error::other("injected write failure"));
        }
        let fitting = self.fitting(name, offset, bytes.len());
        if fitting < bytes.len() {
            if fitting > 0 {
                let fits = &bytes[..fitting];
                self.apply(Op::Write(name.to_owned(), offset, fits.to_vec()))?;
            }
            return Err(io::Error::from(io::ErrorKind::StorageFull));
        }
        self.apply(Op::Write(name.to_owned(), offset, bytes.to_vec()))
    }

    fn sync(&self, name: &str) -> io::Result<()> {
        if self.fail_next_sync.swap(false, Ordering::SeqCst) {
            return Err(io::Error::other("injected sync failure"));
        }
        self.apply(Op::Sync(name.to_owned()))
    }

    fn truncate(&self, name: &str, len: u64) -> io::Result<()> {
        self.apply(Op::Truncate(name.to_owned(), len))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.apply(Op::Rename(from.to_owned(), to.to_owned()))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        self.apply(Op::Remove(name.to_owned()))
    }

    fn sync_dir(&self) -> io::Result<()> {
        self.apply(Op::SyncDir)
    }

    fn describe(&self, name: &str) -> String {
        format!("sim/{name}")
    }
}
