//! Reading an FMU's zip archive and unpacking it into a temporary directory.
//!
//! A small reader of the zip format (APPNOTE.TXT): the end-of-central-directory record,
//! the central directory, then each entry's local header and data, stored (method 0) or
//! deflated (method 8, inflated with `flate2`), checked against its CRC-32. Zip64 archives,
//! encryption and other compression methods are refused with a message. Entry names are
//! checked before anything is written: absolute names and `..` components are refused, so
//! an archive cannot write outside its directory. [`write_zip`] writes the same format
//! (tests build small FMUs with it).

use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// One entry of the central directory.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Name inside the archive (`/`-separated).
    pub name: String,
    method: u16,
    crc: u32,
    compressed: usize,
    size: usize,
    local_offset: usize,
}

/// A zip archive held in memory.
#[derive(Debug)]
pub struct Archive {
    bytes: Vec<u8>,
    /// The entries, in central-directory order.
    pub entries: Vec<Entry>,
}

/// The most an FMU may unpack to, all entries together (2 GiB): far above any real FMU's
/// binaries and resources, far below what would fill a machine's temporary directory.
pub const MAX_UNPACKED: u64 = 2 << 30;

/// Deflate's largest possible inflation ratio (about 1032:1), rounded up: no honest entry
/// inflates to more than this many times its compressed size.
const MAX_RATIO: usize = 1100;

const EOCD_SIG: u32 = 0x0605_4b50;
const CDIR_SIG: u32 = 0x0201_4b50;
const LOCAL_SIG: u32 = 0x0403_4b50;

fn u16_at(b: &[u8], i: usize) -> Result<u16, String> {
    b.get(i..i + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| format!("truncated at byte {i}"))
}

fn u32_at(b: &[u8], i: usize) -> Result<u32, String> {
    b.get(i..i + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| format!("truncated at byte {i}"))
}

impl Archive {
    /// Parse the central directory of `bytes`. `Err` says why it is not a readable zip.
    pub fn parse(bytes: Vec<u8>) -> Result<Archive, String> {
        if bytes.len() < 22 {
            return Err(format!(
                "{} bytes is too short for a zip archive",
                bytes.len()
            ));
        }
        // The record is 22 bytes plus a comment of at most 65535 bytes, at the very end.
        let lowest = bytes.len().saturating_sub(22 + 0xffff);
        let eocd = (lowest..=bytes.len() - 22)
            .rev()
            .find(|&i| u32_at(&bytes, i) == Ok(EOCD_SIG))
            .ok_or("no end-of-central-directory record (not a zip archive)")?;
        let n = u16_at(&bytes, eocd + 10)? as usize;
        let cdir_size = u32_at(&bytes, eocd + 12)?;
        let cdir = u32_at(&bytes, eocd + 16)?;
        if n == 0xffff || cdir == u32::MAX || cdir_size == u32::MAX {
            return Err("zip64 archives are not supported".into());
        }
        let mut p = cdir as usize;
        let mut entries = Vec::with_capacity(n);
        for k in 0..n {
            if u32_at(&bytes, p)? != CDIR_SIG {
                return Err(format!("central directory entry {k} is damaged"));
            }
            let flags = u16_at(&bytes, p + 8)?;
            let name_len = u16_at(&bytes, p + 28)? as usize;
            let extra = u16_at(&bytes, p + 30)? as usize + u16_at(&bytes, p + 32)? as usize;
            let name = bytes
                .get(p + 46..p + 46 + name_len)
                .ok_or_else(|| format!("central directory entry {k} is truncated"))?;
            let name = String::from_utf8_lossy(name).into_owned();
            if flags & 1 != 0 {
                return Err(format!("entry '{name}' is encrypted"));
            }
            entries.push(Entry {
                name,
                method: u16_at(&bytes, p + 10)?,
                crc: u32_at(&bytes, p + 16)?,
                compressed: u32_at(&bytes, p + 20)? as usize,
                size: u32_at(&bytes, p + 24)? as usize,
                local_offset: u32_at(&bytes, p + 42)? as usize,
            });
            p += 46 + name_len + extra;
        }
        Ok(Archive { bytes, entries })
    }

    /// The entry named `name`, if any.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The uncompressed bytes of `e`, checked against its size and CRC-32.
    pub fn read(&self, e: &Entry) -> Result<Vec<u8>, String> {
        let b = &self.bytes;
        let p = e.local_offset;
        if u32_at(b, p)? != LOCAL_SIG {
            return Err(format!("the local header of '{}' is damaged", e.name));
        }
        let start = p + 30 + u16_at(b, p + 26)? as usize + u16_at(b, p + 28)? as usize;
        let data = b
            .get(start..start + e.compressed)
            .ok_or_else(|| format!("the data of '{}' is truncated", e.name))?;
        let out = match e.method {
            0 => data.to_vec(),
            8 => {
                // Inflate no further than one byte past the declared size: an entry whose
                // directory understates its size (a zip bomb) is refused after that byte,
                // not after gigabytes. The declared size reserves no more than the data
                // could honestly inflate to.
                let mut out = Vec::with_capacity(e.size.min(data.len().saturating_mul(MAX_RATIO)));
                flate2::read::DeflateDecoder::new(data)
                    .take(e.size as u64 + 1)
                    .read_to_end(&mut out)
                    .map_err(|err| format!("'{}' does not inflate: {err}", e.name))?;
                if out.len() > e.size {
                    return Err(format!(
                        "'{}' inflates to more than the {} bytes its directory entry declares",
                        e.name, e.size
                    ));
                }
                out
            }
            m => {
                return Err(format!(
                "'{}' uses compression method {m}; only stored (0) and deflate (8) are supported",
                e.name
            ))
            }
        };
        if out.len() != e.size || crc32fast::hash(&out) != e.crc {
            return Err(format!(
                "'{}' is corrupt (its size or CRC-32 does not match the directory)",
                e.name
            ));
        }
        Ok(out)
    }

    /// Write every file entry under `dir` (directories are created as needed). An archive
    /// whose entries declare more than [`MAX_UNPACKED`] bytes in all is refused before
    /// anything is written.
    pub fn extract_to(&self, dir: &Path) -> Result<(), String> {
        let total: u64 = self.entries.iter().map(|e| e.size as u64).sum();
        if total > MAX_UNPACKED {
            return Err(format!(
                "its entries unpack to {total} bytes, more than the {MAX_UNPACKED} bytes an FMU \
                 may unpack to"
            ));
        }
        for e in &self.entries {
            let rel = safe_relative(&e.name)?;
            let target = dir.join(&rel);
            if e.name.ends_with('/') {
                std::fs::create_dir_all(&target)
                    .map_err(|err| format!("cannot create {}: {err}", target.display()))?;
                continue;
            }
            let data = self.read(e)?;
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|err| format!("cannot create {}: {err}", parent.display()))?;
            }
            std::fs::write(&target, data)
                .map_err(|err| format!("cannot write {}: {err}", target.display()))?;
        }
        Ok(())
    }
}

/// `name` as a relative path that stays inside the extraction directory.
fn safe_relative(name: &str) -> Result<PathBuf, String> {
    let p = Path::new(name);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            _ => return Err(format!("entry name '{name}' points outside the archive")),
        }
    }
    if out.as_os_str().is_empty() && !name.ends_with('/') {
        return Err(format!("entry name '{name}' is empty"));
    }
    Ok(out)
}

/// A directory removed with everything in it when dropped.
#[derive(Debug)]
pub struct TempDir(tempfile::TempDir);

/// The directories of the [`TempDir`]s alive in this process: what
/// [`remove_unpacked`] removes when the process must end at once.
static UNPACKED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Remove every FMU's unpacked directory still alive in this process, for a process
/// about to end without dropping its models (a second Ctrl-C): otherwise they would stay
/// in the temporary directory. The models must not be used afterwards.
pub fn remove_unpacked() {
    let dirs = std::mem::take(&mut *UNPACKED.lock().unwrap_or_else(|e| e.into_inner()));
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

impl TempDir {
    /// A new empty directory under the system's temporary directory: a fresh name with a
    /// random part, created by this call and readable by this user only. An FMU's shared
    /// library is extracted there and then loaded, so the directory must not be one that
    /// somebody else could have made (or could write to) beforehand.
    pub fn new(tag: &str) -> std::io::Result<TempDir> {
        let clean: String = tag
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(40)
            .collect();
        let prefix = format!("drivelink_fmu_{clean}_");
        let mut b = tempfile::Builder::new();
        b.prefix(&prefix);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            b.permissions(std::fs::Permissions::from_mode(0o700));
        }
        let dir = b.tempdir()?;
        UNPACKED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(dir.path().to_path_buf());
        Ok(TempDir(dir))
    }
    /// Its path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let mut live = UNPACKED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = live.iter().position(|d| d == self.0.path()) {
            live.swap_remove(k);
        }
    }
}

/// A zip archive of `(name, data, deflate)` entries (deflated or stored), as [`Archive`]
/// reads it: tests and tools build small FMUs with it.
pub fn write_zip(files: &[(&str, &[u8], bool)]) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    let mut cdir = Vec::new();
    for &(name, data, deflate) in files {
        let (method, body) = if deflate {
            let mut enc =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            let _ = enc.write_all(data);
            (8u16, enc.finish().unwrap_or_default())
        } else {
            (0u16, data.to_vec())
        };
        let crc = crc32fast::hash(data);
        let offset = out.len() as u32;
        let head = |sig: u32, central: bool| {
            let mut h = Vec::new();
            h.extend(sig.to_le_bytes());
            if central {
                h.extend(20u16.to_le_bytes());
            }
            h.extend(20u16.to_le_bytes());
            h.extend(0u16.to_le_bytes());
            h.extend(method.to_le_bytes());
            h.extend([0u8; 4]);
            h.extend(crc.to_le_bytes());
            h.extend((body.len() as u32).to_le_bytes());
            h.extend((data.len() as u32).to_le_bytes());
            h.extend((name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes());
            if central {
                h.extend([0u8; 6]); // comment length, disk, internal attributes
                h.extend([0u8; 4]);
                h.extend(offset.to_le_bytes());
            }
            h.extend(name.as_bytes());
            h
        };
        out.extend(head(LOCAL_SIG, false));
        out.extend(&body);
        cdir.extend(head(CDIR_SIG, true));
    }
    let at = out.len() as u32;
    out.extend(&cdir);
    out.extend(EOCD_SIG.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((cdir.len() as u32).to_le_bytes());
    out.extend(at.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_and_deflated_entries_read_back_exactly() {
        let text = b"hello hello hello hello, deflate me".repeat(20);
        let a = Archive::parse(write_zip(&[
            ("a.txt", b"stored", false),
            ("d/b.txt", &text, true),
        ]))
        .unwrap();
        assert_eq!(a.entries.len(), 2);
        assert_eq!(a.read(a.entry("a.txt").unwrap()).unwrap(), b"stored");
        assert_eq!(a.read(a.entry("d/b.txt").unwrap()).unwrap(), text);
        let dir = TempDir::new("archive_test").unwrap();
        a.extract_to(dir.path()).unwrap();
        assert_eq!(std::fs::read(dir.path().join("d/b.txt")).unwrap(), text);
        let p = dir.path().to_path_buf();
        drop(dir);
        assert!(!p.exists(), "the temporary directory is removed");
    }

    /// An FMU's library is loaded from its extraction directory: a directory of a name
    /// known in advance (tag, process id, counter) could be made by another user first and
    /// its library swapped before loading. Each is now a fresh, private directory.
    #[test]
    fn an_extraction_directory_is_fresh_and_private_to_its_user() {
        let a = TempDir::new("same tag").unwrap();
        let b = TempDir::new("same tag").unwrap();
        assert_ne!(a.path(), b.path());
        for d in [&a, &b] {
            let name = d.path().file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with("drivelink_fmu_same_tag_"), "{name}");
            assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(d.path()).unwrap().permissions().mode();
                assert_eq!(mode & 0o077, 0, "group or others may use it: {mode:o}");
            }
        }
    }

    /// A zip bomb: the directory declares 10 bytes, the data inflates to 64 MiB of
    /// zeros. Reading stops one byte past the declared size instead of inflating it all.
    #[test]
    fn an_entry_that_inflates_past_its_declared_size_is_refused_at_that_size() {
        let zeros = vec![0u8; 64 << 20];
        let mut bytes = write_zip(&[("bomb.bin", &zeros, true)]);
        let cdir = bytes.len() - 22 - (46 + "bomb.bin".len());
        for at in [22, cdir + 24] {
            bytes[at..at + 4].copy_from_slice(&10u32.to_le_bytes());
        }
        let a = Archive::parse(bytes).unwrap();
        let e = a.entry("bomb.bin").unwrap();
        assert_eq!(e.size, 10);
        let err = a.read(e).unwrap_err();
        assert!(err.contains("inflates to more than the 10 bytes"), "{err}");
    }

    /// Declared sizes are checked before anything is written: an archive declaring more
    /// than the limit in all writes nothing and says how much it declares.
    #[test]
    fn an_archive_declaring_more_than_the_unpack_limit_writes_nothing() {
        let files: Vec<(String, Vec<u8>)> = (0..3)
            .map(|k| (format!("resources/big{k}.bin"), vec![7u8; 100]))
            .collect();
        let list: Vec<(&str, &[u8], bool)> = files
            .iter()
            .map(|(n, d)| (n.as_str(), d.as_slice(), false))
            .collect();
        let mut bytes = write_zip(&list);
        // Each central entry's uncompressed size (offset 24) set to 1 GiB: 3 GiB in all.
        let mut p = u32_at(&bytes, bytes.len() - 22 + 16).unwrap() as usize;
        for (n, _) in &files {
            bytes[p + 24..p + 28].copy_from_slice(&(1u32 << 30).to_le_bytes());
            p += 46 + n.len();
        }
        let a = Archive::parse(bytes).unwrap();
        let dir = TempDir::new("archive_limit").unwrap();
        let err = a.extract_to(dir.path()).unwrap_err();
        assert!(
            err.contains(&format!("unpack to {} bytes", 3u64 << 30)),
            "{err}"
        );
        assert!(err.contains(&MAX_UNPACKED.to_string()), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_flipped_byte_is_reported_as_corrupt() {
        let mut bytes = write_zip(&[("a.txt", b"some stored data", false)]);
        bytes[35] ^= 0xff; // inside the stored data (30-byte header + 5-byte name)
        let a = Archive::parse(bytes).unwrap();
        let e = a.read(a.entry("a.txt").unwrap()).unwrap_err();
        assert!(e.contains("corrupt"), "{e}");
    }

    #[test]
    fn text_is_not_a_zip_and_escaping_names_are_refused() {
        let e = Archive::parse(b"{\"not\": \"a zip\"} padding padding".to_vec()).unwrap_err();
        assert!(e.contains("not a zip"), "{e}");
        let a = Archive::parse(write_zip(&[("../evil", b"x", false)])).unwrap();
        let dir = TempDir::new("archive_evil").unwrap();
        let e = a.extract_to(dir.path()).unwrap_err();
        assert!(e.contains("outside"), "{e}");
    }
}
