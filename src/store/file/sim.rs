//! A simulated disk for crash tests: it records every operation, and can materialise the
//! disk as a power loss after any of them would leave it. Written data survives a crash
//! only once synced, and names (creations, renames, removals) only once the directory is
//! synced (or, when the crash keeps unsynced data, as they were); of the bytes appended since
//! a file's last sync, a crash keeps any prefix (a torn write), possibly as garbage.

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::disk::Disk;

/// One operation, as recorded.
#[derive(Debug, Clone)]
enum Op {
    /// An empty file; `Disk::create` is this, an append and a sync.
    Create(String),
    Append(String, Vec<u8>),
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
}

#[derive(Debug, Clone, Default)]
struct State {
    inodes: Vec<Inode>,
    live: BTreeMap<String, usize>,
    durable: BTreeMap<String, usize>,
    log: Vec<Op>,
}

/// What a crash does to the bytes appended since a file's last sync.
#[derive(Debug, Clone, Copy)]
pub(super) enum Unsynced {
    /// All of them are lost.
    Lost,
    /// The first `n` of them reached the disk.
    Kept(usize),
    /// The first `n` of them reached the disk damaged.
    Garbage(usize),
}

/// A disk in memory; see the module's documentation.
#[derive(Debug, Default)]
pub(super) struct SimDisk {
    state: Mutex<State>,
    fail_next_sync: AtomicBool,
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

    /// Flip the bits of the last byte of `name` as it is now (damage under an open store).
    pub(super) fn corrupt_last_byte(&self, name: &str) {
        let mut state = self.state();
        if let Some(&id) = state.live.get(name)
            && let Some(byte) = state.inodes[id].data.last_mut()
        {
            *byte = !*byte;
        }
    }

    /// Make the next sync fail.
    pub(super) fn fail_next_sync(&self) {
        self.fail_next_sync.store(true, Ordering::SeqCst);
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
            Unsynced::Kept(_) | Unsynced::Garbage(_) => &state.live,
        };
        for (name, &inode) in names {
            let Inode { data, synced } = &state.inodes[inode];
            let mut bytes = synced.clone();
            if data.starts_with(synced) {
                let tail = &data[synced.len()..];
                match unsynced {
                    Unsynced::Lost => {}
                    Unsynced::Kept(n) => bytes.extend_from_slice(&tail[..n.min(tail.len())]),
                    Unsynced::Garbage(n) => {
                        bytes.extend(tail[..n.min(tail.len())].iter().map(|b| b ^ 0x5a));
                    }
                }
            }
            crashed.inodes.push(Inode {
                data: bytes.clone(),
                synced: bytes,
            });
            let id = crashed.inodes.len() - 1;
            crashed.live.insert(name.clone(), id);
            crashed.durable.insert(name.clone(), id);
        }
        SimDisk {
            state: Mutex::new(crashed),
            fail_next_sync: AtomicBool::new(false),
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
            Op::Append(name, bytes) => {
                let id = *state.live.get(name).ok_or_else(|| missing(name))?;
                state.inodes[id].data.extend_from_slice(bytes);
            }
            Op::Sync(name) => {
                let id = *state.live.get(name).ok_or_else(|| missing(name))?;
                let inode = &mut state.inodes[id];
                inode.synced = inode.data.clone();
            }
            Op::Truncate(name, len) => {
                let id = *state.live.get(name).ok_or_else(|| missing(name))?;
                let inode = &mut state.inodes[id];
                inode
                    .data
                    .truncate(usize::try_from(*len).unwrap_or(usize::MAX));
                inode.synced = inode.data.clone();
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
        self.apply(Op::Append(name.to_owned(), bytes.to_vec()))?;
        self.apply(Op::Sync(name.to_owned()))
    }

    fn append(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.apply(Op::Append(name.to_owned(), bytes.to_vec()))
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
