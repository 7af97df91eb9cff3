//! The removal of every unpacked FMU directory when the process must end at once (a
//! second Ctrl-C). A test binary of its own: the removal is process-wide, so no other
//! test's directory may be alive in this process meanwhile.

use drivelink_fmu_import::archive::{remove_unpacked, TempDir};

/// A second Ctrl-C ends the CLI without dropping its models: the directories they
/// unpacked (the FMU's library among their files) are removed first instead of staying in
/// the temporary directory; dropping a model afterwards is harmless.
#[test]
fn unpacked_directories_are_removed_when_the_process_must_end_at_once() {
    let a = TempDir::new("ends_at_once").unwrap();
    let b = TempDir::new("ends_at_once").unwrap();
    std::fs::create_dir_all(a.path().join("binaries/x86_64-linux")).unwrap();
    std::fs::write(a.path().join("binaries/x86_64-linux/m.so"), b"x").unwrap();
    let kept = TempDir::new("dropped_before").unwrap();
    let gone = kept.path().to_path_buf();
    drop(kept);
    assert!(!gone.exists());
    let paths = [a.path().to_path_buf(), b.path().to_path_buf()];
    remove_unpacked();
    for p in &paths {
        assert!(!p.exists(), "{} is removed", p.display());
    }
    drop(a);
    drop(b);
    // Nothing left to remove: a second call is harmless.
    remove_unpacked();
}
