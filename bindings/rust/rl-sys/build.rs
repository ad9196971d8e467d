//! Links librl, one of three ways:
//! - by default, the bundled static librl of this platform (linux x86-64 or
//!   aarch64): one relocatable object holding librl, hiredis, OpenSSL and
//!   libstdc++ with every symbol but rl_* local, so only the C library (libc,
//!   libm, libgcc) remains to link. The packaged crate carries it in
//!   native/linux_ARCH/librl.a (bindings/rust/package copies it there); in
//!   rl's repository it is the Go module's copy, made by scripts/build-static;
//! - with the `dynamic-linking` feature, the system librl (librl.so.1, the
//!   librl-dev package or `cmake --install`) found through pkg-config's rl.pc;
//! - with RL_SYS_LIB_DIR set to a directory holding librl.so (rl's
//!   repository: build/capi, from scripts/build), that library, so the crate
//!   is tested against the C++ code of the same checkout. Programs then find
//!   it at run time through LD_LIBRARY_PATH (bindings/rust/run-tests sets it).
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=RL_SYS_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());

    if let Some(dir) = env::var_os("RL_SYS_LIB_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if !dir.join("librl.so").exists() {
            panic!("rl-sys: RL_SYS_LIB_DIR={} holds no librl.so (run scripts/build)", dir.display());
        }
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=dylib=rl");
        return;
    }

    if env::var_os("CARGO_FEATURE_DYNAMIC_LINKING").is_some() {
        match pkg_config::Config::new().atleast_version("1.7").probe("rl") {
            Ok(_) => return,
            Err(e) => panic!("rl-sys: feature dynamic-linking: no rl.pc found by pkg-config (install librl-dev): {e}"),
        }
    }

    let os = env::var("CARGO_CFG_TARGET_OS").unwrap();
    let arch = match env::var("CARGO_CFG_TARGET_ARCH").unwrap().as_str() {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => panic!("rl-sys: no bundled librl for {other}: enable the dynamic-linking feature"),
    };
    if os != "linux" {
        panic!("rl-sys: no bundled librl for {os}: enable the dynamic-linking feature");
    }
    // In rl's repository the Go module's copy (what scripts/build-static
    // last made); in the packaged crate the copy bindings/rust/package put in.
    let candidates = [
        manifest.join("../../go/internal/native").join(format!("linux_{arch}")),
        manifest.join("native").join(format!("linux_{arch}")),
    ];
    let dir = candidates
        .iter()
        .find(|d| d.join("librl.a").exists())
        .unwrap_or_else(|| panic!("rl-sys: no bundled librl.a for linux_{arch} (scripts/build-static makes it)"));
    println!("cargo:rerun-if-changed={}", dir.join("librl.a").display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=rl");
    for lib in ["m", "dl", "pthread"] {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
}
