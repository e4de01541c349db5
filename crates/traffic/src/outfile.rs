//! Output files that never destroy what the user has (docs/architecture.md, "Output files").
//!
//! [`Output`] decides how a file is written, once, before anything is written:
//!
//! - a regular file, or nothing: the data goes to a hidden temporary file beside it
//!   (`.NAME.PID-K.partial`), renamed onto it by [`Output::commit`]; dropped uncommitted (an
//!   error, Ctrl-C, SIGTERM), the temporary file is removed, so the target is either the
//!   complete new file or left as it was;
//! - a symbolic link: written *through*, to the file it points at (the link stays a link); a
//!   link to a missing file is refused;
//! - anything else (a device such as `/dev/null`, a FIFO, a socket): opened and written
//!   directly, never renamed onto, never removed;
//! - a folder: refused.
//!
//! [`same_file`] and [`FileId`] compare files by identity (device and inode, through symbolic
//! links), not by name, so `x.pcap`, `./x.pcap` and a link to it are one file; [`escapes`]
//! tells whether an output name climbs out of the folder it is resolved in.
use std::fs::{File, OpenOptions};
use std::path::{Component, Path, PathBuf};

/// How one output file is written. See the module documentation.
#[derive(Debug)]
pub struct Output {
    /// The file the user named (for messages).
    named: PathBuf,
    /// The file that receives the data in the end (symbolic links resolved).
    target: PathBuf,
    /// The temporary file renamed onto `target`, or `None` when `target` is written directly.
    tmp: Option<PathBuf>,
    committed: bool,
}

impl Output {
    /// Decide how `path` is written (nothing is created yet).
    pub fn plan(path: &Path) -> Result<Output, String> {
        let shown = path.display();
        let mut target = path.to_path_buf();
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if m.file_type().is_symlink() {
                target = std::fs::canonicalize(path).map_err(|_| {
                    let to = std::fs::read_link(path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default();
                    format!(
                        "{shown}: is a symbolic link to {to}, which does not exist; pktflow writes through links, never over them"
                    )
                })?;
            }
        }
        let direct = match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => {
                return Err(format!("{shown}: is a directory, expected a file name"))
            }
            Ok(m) => !m.is_file(),
            Err(_) => false,
        };
        let tmp = (!direct).then(|| temp_beside(&target));
        Ok(Output {
            named: path.to_path_buf(),
            target,
            tmp,
            committed: false,
        })
    }

    /// Open the file to write into: the temporary file (created, never an existing one), or the
    /// target itself when it is not a regular file.
    pub fn open(&self) -> std::io::Result<File> {
        match &self.tmp {
            Some(t) => OpenOptions::new().write(true).create_new(true).open(t),
            None => OpenOptions::new().write(true).open(&self.target),
        }
    }

    /// The path written into by [`Output::open`] (for messages).
    pub fn writing(&self) -> &Path {
        self.tmp.as_deref().unwrap_or(&self.target)
    }

    /// The file that receives the data (symbolic links resolved).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the data goes straight to the target (a device, a FIFO): nothing is renamed.
    pub fn is_direct(&self) -> bool {
        self.tmp.is_none()
    }

    /// The data is complete (its writer flushed and closed): rename the temporary file onto the
    /// target. The error names the file the user named.
    pub fn commit(&mut self) -> Result<(), String> {
        if let Some(t) = &self.tmp {
            if let Err(e) = std::fs::rename(t, &self.target) {
                let _ = std::fs::remove_file(t);
                self.committed = true;
                return Err(format!(
                    "{}: cannot put the file in place: {e}",
                    self.named.display()
                ));
            }
        }
        self.committed = true;
        Ok(())
    }

    /// Remove the temporary file, if any (also done when dropped uncommitted).
    pub fn discard(&mut self) {
        if !self.committed {
            if let Some(t) = &self.tmp {
                let _ = std::fs::remove_file(t);
            }
            self.committed = true;
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        self.discard();
    }
}

/// `.NAME.PID-K.partial` beside `path` (K counts the temporary files of this process).
pub fn temp_beside(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}-{k}.partial", std::process::id()))
}

/// A file's identity: device and inode when it exists (through symbolic links), else its
/// folder's canonical path and its name (two names of one file not yet created compare equal).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FileId {
    Inode(u64, u64),
    Path(PathBuf),
}

impl FileId {
    pub fn of(path: &Path) -> FileId {
        #[cfg(unix)]
        if let Ok(m) = std::fs::metadata(path) {
            use std::os::unix::fs::MetadataExt;
            return FileId::Inode(m.dev(), m.ino());
        }
        let name = path.file_name().map(PathBuf::from).unwrap_or_default();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        FileId::Path(dir.join(name))
    }
}

/// Whether `a` and `b` are the same file (by identity, not by name).
pub fn same_file(a: &Path, b: &Path) -> bool {
    FileId::of(a) == FileId::of(b)
}

/// Whether the output name `name` (as written, before it is joined to its folder) leaves that
/// folder: an absolute path, or `..` components that climb above it.
pub fn escapes(name: &Path) -> bool {
    let mut depth: i64 = 0;
    for c in name.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => return true,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            Component::Normal(_) => depth += 1,
        }
    }
    false
}

/// The first pair of files among `outputs` that are one file, or an output that is one of
/// `inputs`: a one-line message naming both (`what` of each names its element or option).
pub fn check_collisions(
    inputs: &[(String, PathBuf)],
    outputs: &[(String, PathBuf)],
) -> Result<(), String> {
    let ins: Vec<FileId> = inputs.iter().map(|(_, p)| FileId::of(p)).collect();
    let outs: Vec<FileId> = outputs.iter().map(|(_, p)| FileId::of(p)).collect();
    for (k, (what, p)) in outputs.iter().enumerate() {
        if let Some(i) = ins.iter().position(|x| *x == outs[k]) {
            return Err(format!(
                "{what} would write {}, which is the input {} of {}: refusing to replace an input",
                p.display(),
                inputs[i].1.display(),
                inputs[i].0
            ));
        }
        if let Some(j) = outs[..k].iter().position(|x| *x == outs[k]) {
            return Err(format!(
                "{what} and {} both write {}: two outputs to one file",
                outputs[j].0,
                p.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pktflow-outfile-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn write_all(path: &Path, data: &[u8]) -> Result<(), String> {
        let mut o = Output::plan(path)?;
        let mut f = o.open().map_err(|e| e.to_string())?;
        f.write_all(data).map_err(|e| e.to_string())?;
        drop(f);
        o.commit()
    }

    fn leftovers(d: &Path) -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".partial"))
            .collect()
    }

    #[test]
    fn regular_files_are_replaced_whole_and_nothing_is_left() {
        let d = tmpdir("regular");
        let p = d.join("out.pcap");
        std::fs::write(&p, b"old").unwrap();
        write_all(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert!(leftovers(&d).is_empty());
        // Dropped without commit: the old file stays, the temporary one goes.
        let o = Output::plan(&p).unwrap();
        drop(o.open().unwrap());
        drop(o);
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert!(leftovers(&d).is_empty());
    }

    #[test]
    fn a_symlink_is_written_through_and_stays_a_link() {
        let d = tmpdir("link");
        let real = d.join("real.pcap");
        std::fs::write(&real, b"old").unwrap();
        let link = d.join("link.pcap");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_all(&link, b"through").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"through");
        // A dangling link is refused, the link left alone.
        let dangling = d.join("dangling.pcap");
        std::os::unix::fs::symlink(d.join("missing"), &dangling).unwrap();
        let e = write_all(&dangling, b"x").unwrap_err();
        assert!(e.contains("symbolic link") && !e.contains('\n'), "{e}");
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(leftovers(&d).is_empty());
    }

    #[test]
    fn devices_and_fifos_are_written_directly_never_renamed_onto() {
        let o = Output::plan(Path::new("/dev/null")).unwrap();
        assert!(o.is_direct());
        write_all(Path::new("/dev/null"), b"discarded").unwrap();
        let m = std::fs::symlink_metadata("/dev/null").unwrap();
        assert!(!m.is_file(), "/dev/null must still be a device");
        let d = tmpdir("fifo");
        let fifo = d.join("pipe");
        let ok = std::process::Command::new("mkfifo").arg(&fifo).status();
        if ok.map(|s| s.success()).unwrap_or(false) {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || std::fs::read(fifo).unwrap())
            };
            write_all(&fifo, b"through the pipe").unwrap();
            assert_eq!(reader.join().unwrap(), b"through the pipe");
            use std::os::unix::fs::FileTypeExt;
            assert!(std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo());
        }
    }

    #[test]
    fn a_folder_is_refused() {
        let d = tmpdir("dir");
        let e = Output::plan(&d).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn identity_sees_through_names_and_links() {
        let d = tmpdir("identity");
        let a = d.join("a.pcap");
        std::fs::write(&a, b"x").unwrap();
        let link = d.join("l.pcap");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        assert!(same_file(&a, &link));
        assert!(same_file(&a, &d.join(".").join("a.pcap")));
        assert!(!same_file(&a, &d.join("b.pcap")));
        // Not yet created: by folder and name.
        assert!(same_file(&d.join("n.pcap"), &d.join(".").join("n.pcap")));
        let ins = vec![("FromDump 'src'".to_string(), a.clone())];
        let outs = vec![("ToDump 'dst'".to_string(), link.clone())];
        let e = check_collisions(&ins, &outs).unwrap_err();
        assert!(
            e.contains("ToDump 'dst'") && e.contains("FromDump 'src'"),
            "{e}"
        );
        let outs = vec![
            ("ToDump 'x'".to_string(), d.join("n.pcap")),
            ("ToDump 'y'".to_string(), d.join("./n.pcap")),
        ];
        let e = check_collisions(&[], &outs).unwrap_err();
        assert!(e.contains("two outputs to one file"), "{e}");
        assert!(check_collisions(&ins, &outs[..1]).is_ok());
    }

    #[test]
    fn escaping_names() {
        for bad in [
            "../x.pcap",
            "/tmp/x.pcap",
            "a/../../x.pcap",
            "../../../../escaped.pcap",
        ] {
            assert!(escapes(Path::new(bad)), "{bad}");
        }
        for ok in ["x.pcap", "a/b/x.pcap", "a/../x.pcap", "./x.pcap"] {
            assert!(!escapes(Path::new(ok)), "{ok}");
        }
    }
}
