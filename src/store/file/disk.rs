//! The file operations a [`FileStore`](super::FileStore) needs, behind one small trait, so
//! that tests can run the store over a simulated disk that forgets what was not synced (see
//! `sim.rs`) while the real store runs over [`OsDisk`].
//!
//! Every name is a file in the store's directory. The operations are the few a crash-safe
//! layout needs: write into and sync one file, create a whole file durably, rename, remove,
//! and sync the directory so that creations, renames and removals survive a crash.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// A directory of files, as the store uses it.
pub(super) trait Disk: fmt::Debug + Send + Sync + 'static {
    /// The names of the directory's files.
    fn list(&self) -> io::Result<Vec<String>>;
    /// The whole contents of `name`, or `None` if there is no such file.
    fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>>;
    /// The `len` bytes of `name` from byte `offset` (the event log reads its blocks so, on
    /// demand); a file shorter than that is an error.
    fn read_at(&self, name: &str, offset: u64, len: usize) -> io::Result<Vec<u8>>;
    /// Create `name` (which must not exist) holding `bytes`, and sync it. The name itself is
    /// durable only after [`sync_dir`](Disk::sync_dir).
    fn create(&self, name: &str, bytes: &[u8]) -> io::Result<()>;
    /// Write `bytes` into `name` at byte `offset`, over what is there and past its end if
    /// they reach it; durable only after [`sync`](Disk::sync).
    fn write_at(&self, name: &str, offset: u64, bytes: &[u8]) -> io::Result<()>;
    /// Make everything written to `name` durable, its length included.
    fn sync(&self, name: &str) -> io::Result<()>;
    /// Cut `name` to `len` bytes, durably.
    fn truncate(&self, name: &str, len: u64) -> io::Result<()>;
    /// Rename `from` to `to`, replacing `to`; durable after [`sync_dir`](Disk::sync_dir).
    fn rename(&self, from: &str, to: &str) -> io::Result<()>;
    /// Remove `name` if it exists; durable after [`sync_dir`](Disk::sync_dir).
    fn remove(&self, name: &str) -> io::Result<()>;
    /// Make the directory's creations, renames and removals durable.
    fn sync_dir(&self) -> io::Result<()>;
    /// Where the files are, for messages.
    fn describe(&self, name: &str) -> String;
}

/// The operating system's file system: a directory on disk.
pub(super) struct OsDisk {
    dir: PathBuf,
    /// The file written to last, kept open: writes go to the active journal segment only.
    writing: Mutex<Option<(String, File)>>,
}

impl OsDisk {
    /// The files of `dir`.
    pub(super) fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            writing: Mutex::new(None),
        }
    }

    fn with_write_handle<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut File) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        if writing.as_ref().is_none_or(|(open, _)| open != name) {
            let file = OpenOptions::new().write(true).open(self.dir.join(name))?;
            *writing = Some((name.to_owned(), file));
        }
        match writing.as_mut() {
            Some((_, file)) => f(file),
            None => Err(io::Error::other("no open file to write to")),
        }
    }

    fn forget_handle(&self, name: &str) {
        let mut writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        if writing.as_ref().is_some_and(|(open, _)| open == name) {
            *writing = None;
        }
    }
}

impl fmt::Debug for OsDisk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OsDisk").field("dir", &self.dir).finish()
    }
}

impl Disk for OsDisk {
    fn list(&self) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            if let Some(name) = entry?.file_name().to_str() {
                names.push(name.to_owned());
            }
        }
        Ok(names)
    }

    fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        match std::fs::read(self.dir.join(name)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_at(&self, name: &str, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        use std::io::{Read as _, Seek as _, SeekFrom};
        // A fresh handle per read: reads come from many threads at once, and a handle's
        // position is shared state; opening a file costs microseconds next to decoding.
        let mut file = File::open(self.dir.join(name))?;
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = vec![0; len];
        file.read_exact(&mut bytes)?;
        Ok(bytes)
    }

    fn create(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.dir.join(name))?;
        file.write_all(bytes)?;
        file.sync_all()
    }

    fn write_at(&self, name: &str, offset: u64, bytes: &[u8]) -> io::Result<()> {
        self.with_write_handle(name, |file| {
            // One positioned write (`pwrite`) where the platform has it: a commit's write is
            // on the path of every answer, so a seek's extra system call counts.
            #[cfg(unix)]
            {
                use std::os::unix::fs::FileExt as _;
                file.write_all_at(bytes, offset)
            }
            #[cfg(not(unix))]
            {
                use std::io::{Seek as _, SeekFrom};
                file.seek(SeekFrom::Start(offset))?;
                file.write_all(bytes)
            }
        })
    }

    fn sync(&self, name: &str) -> io::Result<()> {
        self.with_write_handle(name, |file| file.sync_data())
    }

    fn truncate(&self, name: &str, len: u64) -> io::Result<()> {
        self.forget_handle(name);
        let file = OpenOptions::new().write(true).open(self.dir.join(name))?;
        file.set_len(len)?;
        file.sync_all()
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.forget_handle(from);
        self.forget_handle(to);
        std::fs::rename(self.dir.join(from), self.dir.join(to))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        self.forget_handle(name);
        match std::fs::remove_file(self.dir.join(name)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    fn sync_dir(&self) -> io::Result<()> {
        #[cfg(unix)]
        {
            File::open(&self.dir)?.sync_all()
        }
        // Elsewhere a directory cannot be opened to be synced; renames are made durable by
        // the file system's own journal.
        #[cfg(not(unix))]
        {
            Ok(())
        }
    }

    fn describe(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}
