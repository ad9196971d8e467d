//! The committed bindings are rl.h's: the generator finds nothing stale, and
//! the C compiler's sizes, field offsets and constant values (tests/layout/layout.c)
//! are exactly rl-sys's (tests/rust_layout.rs).
use std::path::PathBuf;
use std::process::Command;

#[path = "layout/rust_layout.rs"]
#[rustfmt::skip]
mod rust_layout;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn include_dir() -> PathBuf {
    let packaged = manifest().join("include");
    if packaged.join("rl/rl.h").exists() {
        packaged
    } else {
        manifest().join("../../../capi/include")
    }
}

#[test]
fn bindings_are_generated_from_the_header() {
    let generator = manifest().join("generate");
    if !manifest().join("../../../capi/include/rl/rl.h").exists() {
        return; // a packaged crate: the repository's header is not there
    }
    let out = Command::new("python3").arg(&generator).arg("--check").output().expect("python3 runs the generator");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn layout_and_values_match_the_c_compiler() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let exe = dir.join("rl_sys_layout");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .arg("-std=c11")
        .arg("-I")
        .arg(include_dir())
        .arg(manifest().join("tests/layout/layout.c"))
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("the C compiler runs");
    assert!(status.success(), "tests/layout/layout.c did not compile");
    let out = Command::new(&exe).output().expect("the layout program runs");
    let c: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect();
    let rust = rust_layout::rust_layout();
    assert_eq!(c.len(), rust.len());
    for (c_line, rust_line) in c.iter().zip(&rust) {
        assert_eq!(c_line, rust_line);
    }
}

#[test]
fn the_linked_library_is_the_headers_version() {
    let v = unsafe { std::ffi::CStr::from_ptr(rl_sys::rl_version()) };
    assert_eq!(v.to_str().unwrap(), rl_sys::RL_VERSION_STRING);
}
