//! libhurray from Rust: zero-copy buffer handoff between libraries,
//! processes and machines (the Hurray buffer protocol), safely.
//!
//! - [`Buffer`]: a producer's buffer (allocated, or wrapping memory whose
//!   owner is dropped exactly once); [`Buffer::export`] gives a [`Handoff`].
//! - [`Handoff`]: one buffer for one consumer, released exactly once
//!   (BP-REL-ONCE): on drop, by [`Handoff::release`] or
//!   [`Handoff::release_after`]. [`Handoff::into_raw`] / [`Handoff::from_raw`]
//!   pass it to and from C.
//! - [`Event`]: a device event ([`Event::record`]), freed exactly once (on
//!   drop, or by the consumer of [`Buffer::export_after_event`]);
//!   [`Handoff::release_after_event`] releases after it.
//! - [`Handle`], [`Policy`], [`Context`]: the 16-byte handle, its rules.
//! - Devices: [`device_count`], [`device_info`], [`device_native`]
//!   ([`NativeHandles`]), [`device_identity`] ([`DeviceIdentity`]) and
//!   [`device_find`], [`backend_report`].
//! - [`ipc`]: [`ipc::Listener`] and [`ipc::Channel`] between processes;
//!   with the `net` feature, `net::Server` and `net::Client` (UCX) between
//!   machines.
//! - Every fallible call returns [`Result`]; an [`Error`] carries the
//!   status, the rule ID and the message.
//!
//! `Send` and `Sync` follow the C headers' promises, cited at each type.
//! The raw C API is `hurray_sys` (re-exported as [`sys`]).
//!
//! ```
//! use hurray::{Buffer, Context};
//! let mut buf = Buffer::alloc_host(&Context::default(), 1024, 64, false)?;
//! buf.write(0, &[7; 1024])?;
//! let consumer = buf.export()?;              // one consumer's handoff
//! assert!(consumer.as_slice().unwrap().iter().all(|&b| b == 7));
//! drop(consumer);                            // released, exactly once
//! # Ok::<(), hurray::Error>(())
//! ```
#![deny(unsafe_op_in_unsafe_fn)]

mod buffer;
mod context;
mod device;
mod error;
mod event;
mod handle;
mod handoff;
pub mod ipc;
#[cfg(feature = "net")]
pub mod net;

pub use buffer::Buffer;
pub use context::{Context, Policy};
pub use device::{
    backend_report, device_count, device_find, device_identity, device_info, device_native, DeviceIdentity, DeviceInfo,
    NativeHandles,
};
pub use error::{Error, Result, Status};
pub use event::{Event, EventFreeFn};
pub use handle::{Handle, Transport};
pub use handoff::{Handoff, Stream};
pub use hurray_sys as sys;

/// The CPU's device tag (0x00).
pub const DEVICE_CPU: u8 = 0x00;
