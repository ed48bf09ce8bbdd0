// Finds libhurray for the link: HURRAY_LIB_DIR (a build tree, or any
// directory holding libhurray.so) first, else pkg-config's hurray.pc. With
// the `net` feature libhurray-net, which lies beside libhurray, is linked
// too. The raw bindings are checked in (src/bindings*.rs), so no header and
// no libclang are needed here.
use std::env;
use std::path::PathBuf;

fn main() {
    for var in ["HURRAY_LIB_DIR", "HURRAY_INCLUDE_DIR", "HURRAY_STATIC"] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    let kind = if env::var_os("HURRAY_STATIC").is_some() { "static" } else { "dylib" };
    let (lib_dirs, include_dirs): (Vec<PathBuf>, Vec<PathBuf>) =
        if let Some(dir) = env::var_os("HURRAY_LIB_DIR") {
            let dir = PathBuf::from(dir);
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib={}=hurray", kind);
            let include = env::var_os("HURRAY_INCLUDE_DIR").map(PathBuf::from);
            (vec![dir], include.into_iter().collect())
        } else {
            match pkg_config::Config::new().atleast_version("1.0").probe("hurray") {
                Ok(lib) => (lib.link_paths, lib.include_paths),
                Err(e) => {
                    eprintln!(
                        "hurray-sys: libhurray not found: set HURRAY_LIB_DIR to the directory \
                         of libhurray.so (a build tree), or PKG_CONFIG_PATH to where hurray.pc \
                         lies\n{}",
                        e
                    );
                    std::process::exit(1);
                }
            }
        };
    if env::var_os("CARGO_FEATURE_NET").is_some() {
        println!("cargo:rustc-link-lib={}=hurray-net", kind);
    }
    // For crates that build C against libhurray: DEP_HURRAY_LIB_DIR and
    // DEP_HURRAY_INCLUDE.
    if let Some(dir) = lib_dirs.first() {
        println!("cargo:lib_dir={}", dir.display());
    }
    if let Some(dir) = include_dirs.first() {
        println!("cargo:include={}", dir.display());
    }
}
