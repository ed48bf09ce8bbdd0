//! `Handoff`: one buffer handed to one consumer, released exactly once.
use std::os::raw::c_void;

use hurray_sys as sys;

use crate::context::{Context, Policy};
use crate::error::{call, Error, Result, Status};
use crate::event::Event;
use crate::handle::Handle;

/// A device stream (CUstream, hipStream_t, cl_command_queue, ...) to order a
/// release after; `Stream::DEFAULT` is the device's default stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream(*mut c_void);

// A stream handle is a plain value the vendor runtimes accept from any thread.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    /// The device's default stream (NULL in the C API).
    pub const DEFAULT: Stream = Stream(std::ptr::null_mut());
    /// A stream of the handoff's device runtime.
    ///
    /// # Safety
    /// `raw` must be a live stream of the device the handoff lives on, for
    /// as long as the release is pending.
    pub unsafe fn from_raw(raw: *mut c_void) -> Stream {
        Stream(raw)
    }
    /// The native stream (NULL: the default stream), for hurray-sys calls.
    pub fn as_raw(self) -> *mut c_void {
        self.0
    }
}

/// One buffer handed to one consumer. It is released exactly once
/// (BP-REL-ONCE): by `release`, by `release_after`, or when it is dropped.
///
/// ```
/// let mut buf = hurray::Buffer::alloc_host(&hurray::Context::default(), 4096, 64, false)?;
/// buf.write(0, b"hello")?;
/// let h = buf.export()?;
/// assert_eq!(&h.as_slice().unwrap()[..5], b"hello");
/// h.release()?; // or let it drop
/// # Ok::<(), hurray::Error>(())
/// ```
pub struct Handoff {
    raw: sys::hurray_handoff,
}

// hurray.h: the consumer "calls release(self) exactly once ..., from any
// thread (BP-REL-THREAD)"; the shared methods only read the struct.
unsafe impl Send for Handoff {}
unsafe impl Sync for Handoff {}

impl Handoff {
    /// Take over a C handoff; it is released when the `Handoff` is done.
    ///
    /// # Safety
    /// `raw` must be a live handoff that nobody else will release (moved
    /// here, as `hurray_handoff_move` does: the caller's copy is dead).
    pub unsafe fn from_raw(raw: sys::hurray_handoff) -> Handoff {
        Handoff { raw }
    }
    /// Give the C struct away (to C code, a DLPack export): the receiver
    /// releases it.
    pub fn into_raw(self) -> sys::hurray_handoff {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }
    /// Release now; the status of the C call (an IPC handoff: `Status::IO`
    /// when the release message did not reach the producer; the memory is
    /// unmapped in any case).
    pub fn release(mut self) -> Result<()> {
        let r = self.release_in_place();
        std::mem::forget(self);
        r
    }
    /// Release once the work queued on `stream` completes, without waiting
    /// (BP-REL-AFTER). On error the handoff comes back with the error.
    ///
    /// ```
    /// let buf = hurray::Buffer::alloc_host(&hurray::Context::default(), 4096, 64, false)?;
    /// let h = buf.export()?;
    /// h.release_after(&hurray::Context::default(), hurray::Stream::DEFAULT).map_err(|(e, _)| e)?;
    /// # Ok::<(), hurray::Error>(())
    /// ```
    pub fn release_after(self, ctx: &Context, stream: Stream) -> std::result::Result<(), (Error, Handoff)> {
        self.release_after_raw(ctx, stream.0)
    }
    /// Release once `event` (recorded on the handoff's device) completes,
    /// without waiting (BP-REL-AFTER), handing the event over too
    /// (`hurray_handoff_release_after_event`). hurray.h: on success the
    /// handoff and the event are moved in; once the event completes the
    /// handoff is released, then the event freed, exactly once each, on the
    /// thread the completion arrives on. On error nothing was taken: the
    /// error comes back with the handoff and the event.
    ///
    /// ```
    /// use std::os::raw::c_void;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// static FREED: AtomicUsize = AtomicUsize::new(0);
    /// unsafe extern "C" fn free(_: *mut c_void, _: *mut c_void) {
    ///     FREED.fetch_add(1, Ordering::SeqCst);
    /// }
    /// let mut marker = 0u8;
    /// // On a GPU: hurray::Event::record(&ctx, tag, ordinal, stream)?.
    /// let event = unsafe { hurray::Event::from_raw(&mut marker as *mut u8 as *mut c_void, 0, free, std::ptr::null_mut()) };
    /// let ctx = hurray::Context::default();
    /// let buf = hurray::Buffer::alloc_host(&ctx, 4096, 64, false)?;
    /// let h = buf.export()?;
    /// h.release_after_event(&ctx, event).map_err(|(e, _, _)| e)?;
    /// // The CPU has no events and released at once; then the event went, once.
    /// assert_eq!(FREED.load(Ordering::SeqCst), 1);
    /// # Ok::<(), hurray::Error>(())
    /// ```
    pub fn release_after_event(
        mut self,
        ctx: &Context,
        event: Event,
    ) -> std::result::Result<(), (Error, Handoff, Event)> {
        let (object, value, free, user) = event.parts();
        let r = call(|e| unsafe {
            sys::hurray_handoff_release_after_event(ctx.as_ptr(), &mut self.raw, object, value, Some(free), user, e)
        });
        match r {
            Ok(()) => {
                // Both moved in: libhurray releases the handoff and frees the event.
                std::mem::forget(self);
                std::mem::forget(event);
                Ok(())
            }
            Err(e) => Err((e, self, event)),
        }
    }

    fn release_after_raw(mut self, ctx: &Context, stream: *mut c_void) -> std::result::Result<(), (Error, Handoff)> {
        let r = call(|e| unsafe {
            sys::hurray_handoff_release_after(ctx.as_ptr(), &mut self.raw, stream, std::ptr::null_mut(), 0, e)
        });
        match r {
            Ok(()) => {
                std::mem::forget(self);
                Ok(())
            }
            Err(e) => Err((e, self)),
        }
    }
    /// `hurray_handoff_check` under `policy` (None: in-process).
    pub fn check(&self, policy: Option<&Policy>) -> Result<()> {
        let p = policy.map_or(std::ptr::null(), |p| p.as_ptr() as *const _);
        call(|e| unsafe { sys::hurray_handoff_check(&self.raw, p, e) })
    }
    /// Make the buffer safe to touch from the host (`hurray_handoff_acquire`).
    pub fn acquire(&mut self, ctx: &Context) -> Result<()> {
        call(|e| unsafe { sys::hurray_handoff_acquire(ctx.as_ptr(), &mut self.raw, std::ptr::null_mut(), e) })
    }
    /// The decoded handle.
    pub fn handle(&self) -> Handle {
        Handle::decode(&self.raw.handle).unwrap_or_default()
    }
    /// The data pointer (an opaque handle with OPAQUE_DATA).
    pub fn data_ptr(&self) -> *mut c_void {
        self.raw.data
    }
    /// The bytes, where the host can address them; None for device memory.
    pub fn as_slice(&self) -> Option<&[u8]> {
        let h = self.handle();
        if self.raw.flags & sys::HURRAY_HANDOFF_OPAQUE_DATA != 0 || !h.host_addressable() {
            return None;
        }
        if h.byte_size == 0 || self.raw.data.is_null() {
            return Some(&[]);
        }
        // The producer keeps the memory valid and unchanged until release
        // (BP-ZC-STABLE, BP-ZC-NOMUT), which needs `self`.
        Some(unsafe { std::slice::from_raw_parts(self.raw.data as *const u8, h.byte_size as usize) })
    }
    /// The C struct, for hurray-sys calls that read it.
    pub fn as_raw(&self) -> &sys::hurray_handoff {
        &self.raw
    }

    fn release_in_place(&mut self) -> Result<()> {
        if self.raw.release.is_none() {
            return Err(Error::new(Status::ALREADY_RELEASED, "the handoff was already released"));
        }
        if self.raw.release_event.is_some() {
            let _ = call(|e| unsafe { sys::hurray_handoff_release_event(&mut self.raw, e) });
        }
        call(|e| unsafe { sys::hurray_ipc_release(&mut self.raw, e) })
    }
}

impl Drop for Handoff {
    fn drop(&mut self) {
        let _ = self.release_in_place();
    }
}
