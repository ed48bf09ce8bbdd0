//! Raw bindings to libhurray, the C library of the Hurray buffer protocol:
//! `hurray.h`, `hurray_ipc.h`, `hurray_dlpack.h` (and the device structs of
//! `hurray_backend.h`), plus `hurray_net.h` with the `net` feature.
//!
//! Everything here is `unsafe` and mirrors the C headers one to one; the
//! safe, idiomatic layer is the `hurray` crate. The bindings are generated
//! by Debian's bindgen (`scripts/rust-bindings.sh`) and checked in: building
//! this crate needs neither the headers nor libclang, and a CTest test
//! regenerates them and fails on any difference from the headers. The
//! layout tests bindgen writes (`cargo test`) check every struct's size,
//! alignment and field offsets against the C layout.
//!
//! C enums are `#[repr(transparent)]` newtypes (`hurray_status(pub u32)`,
//! with `hurray_status::HURRAY_OK` and so on), so a value this version does
//! not know is still a valid Rust value.
//!
//! Linking: `HURRAY_LIB_DIR` (a directory holding `libhurray.so`, e.g. a
//! CMake build tree) or else pkg-config's `hurray.pc`; `HURRAY_STATIC=1`
//! links `libhurray.a` instead.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
#![allow(clippy::all)]

include!("bindings.rs");

#[cfg(feature = "net")]
mod net {
    include!("bindings_net.rs");
}
#[cfg(feature = "net")]
pub use net::*;

#[cfg(test)]
mod tests {
    use super::*;

    // The layout checks of hurray.h itself (typedef'd arrays of size -1)
    // and of the handoff, repeated against the Rust types.
    #[test]
    fn frozen_sizes() {
        assert_eq!(core::mem::size_of::<hurray_buffer_handle>(), 16);
        assert_eq!(core::mem::size_of::<hurray_error>(), 320);
        assert_eq!(core::mem::size_of::<hurray_handoff>(), 112);
    }

    #[test]
    fn the_linked_library_is_this_version() {
        let v = unsafe { hurray_version() };
        assert_eq!(v / 10000, HURRAY_VERSION_MAJOR);
    }
}
