//! `Buffer`: a producer's reference-counted buffer.
use std::os::raw::c_void;
use std::ptr::NonNull;

use hurray_sys as sys;

use crate::context::Context;
use crate::error::{call, Result};
use crate::event::Event;
use crate::handle::Handle;
use crate::handoff::Handoff;

/// A producer's buffer, holding the owner's reference: the memory is freed
/// when the `Buffer` and every handoff of it are gone (BP-REFCOUNT).
///
/// ```
/// use hurray::{Buffer, Context};
/// let mut buf = Buffer::alloc_host(&Context::default(), 4096, 4096, true)?;
/// buf.write(0, &[1, 2, 3])?;
/// let view = buf.view(0, 64)?;
/// assert_eq!(&view.as_slice().unwrap()[..3], &[1, 2, 3]);
/// # Ok::<(), hurray::Error>(())
/// ```
pub struct Buffer(NonNull<sys::hurray_buffer>);

// hurray.h: export and view are "Thread-safe"; the memory is freed "when the
// last one goes (BP-REFCOUNT), on whichever thread".
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

unsafe extern "C" fn drop_owner<O>(user: *mut c_void, _data: *mut c_void) {
    // Called exactly once by libhurray (hurray_free_fn); a panic must not
    // unwind into C.
    let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(user as *mut O) }));
}

impl Buffer {
    /// `size` bytes of CPU memory, `alignment`-aligned (0: 64); `shareable`
    /// memory (a memfd) can be sent over IPC.
    pub fn alloc_host(ctx: &Context, size: u64, alignment: u32, shareable: bool) -> Result<Buffer> {
        let desc = sys::hurray_alloc_desc {
            size: std::mem::size_of::<sys::hurray_alloc_desc>() as u32,
            flags: if shareable { sys::HURRAY_ALLOC_SHAREABLE } else { 0 },
            byte_size: size,
            alignment,
            ..Default::default()
        };
        Buffer::alloc(ctx, &desc)
    }
    /// Allocate through a device's backend (any `hurray_alloc_desc`).
    pub fn alloc(ctx: &Context, desc: &sys::hurray_alloc_desc) -> Result<Buffer> {
        let mut b = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_buffer_alloc(ctx.as_ptr(), desc, &mut b, e) })?;
        Ok(Buffer(NonNull::new(b).expect("hurray_buffer_alloc returned OK and NULL")))
    }
    /// Wrap host memory owned by `owner`, which is dropped exactly once, on
    /// whichever thread the last reference goes (also when wrapping fails).
    /// Its address must be `alignment`-aligned (BP-ALIGN-ADDR, >= 64).
    pub fn wrap<O>(ctx: &Context, owner: O, alignment: u32) -> Result<Buffer>
    where
        O: AsRef<[u8]> + Send + 'static,
    {
        let owner = Box::new(owner);
        let bytes = (*owner).as_ref();
        let (data, len) = (bytes.as_ptr() as *mut c_void, bytes.len() as u64);
        let user = Box::into_raw(owner);
        let desc = sys::hurray_buffer_desc {
            size: std::mem::size_of::<sys::hurray_buffer_desc>() as u32,
            handle: Handle { byte_size: len, alignment, ..Handle::default() }.to_c(),
            data,
            free_fn: Some(drop_owner::<O>),
            free_user: user as *mut c_void,
            ..Default::default()
        };
        let mut b = std::ptr::null_mut();
        match call(|e| unsafe { sys::hurray_buffer_wrap(ctx.as_ptr(), &desc, &mut b, e) }) {
            Ok(()) => Ok(Buffer(NonNull::new(b).expect("hurray_buffer_wrap returned OK and NULL"))),
            Err(e) => {
                // Not called on failure: the owner is still ours.
                drop(unsafe { Box::from_raw(user) });
                Err(e)
            }
        }
    }
    /// `length` bytes at `offset`, as a buffer of its own (BP-VIEW-BOUNDS).
    pub fn view(&self, offset: u64, length: u64) -> Result<Buffer> {
        let mut b = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_buffer_view(self.0.as_ptr(), offset, length, &mut b, e) })?;
        Ok(Buffer(NonNull::new(b).expect("hurray_buffer_view returned OK and NULL")))
    }
    /// A handoff of its own for one more consumer (producer-synced, writable).
    pub fn export(&self) -> Result<Handoff> {
        let mut raw = sys::hurray_handoff::default();
        call(|e| unsafe { sys::hurray_buffer_export(self.0.as_ptr(), std::ptr::null(), &mut raw, e) })?;
        Ok(unsafe { Handoff::from_raw(raw) })
    }
    /// A handoff of its own whose consumer waits on `event` first (sync mode
    /// EVENT, writable). The handoff takes the event: hurray.h's
    /// `event_free_fn` "is called exactly once when the consumer releases
    /// it". If the export fails the event is freed here, once ("If the
    /// export then fails, free the event"). CPU buffers have no events:
    ///
    /// ```
    /// # use std::os::raw::c_void;
    /// # unsafe extern "C" fn free(_: *mut c_void, _: *mut c_void) {}
    /// # let mut marker = 0u8;
    /// # let event = unsafe { hurray::Event::from_raw(&mut marker as *mut u8 as *mut c_void, 0, free, std::ptr::null_mut()) };
    /// // `event` from hurray::Event::record on the buffer's device.
    /// let buf = hurray::Buffer::alloc_host(&hurray::Context::default(), 4096, 64, false)?;
    /// let err = buf.export_after_event(event).err().unwrap();
    /// assert_eq!(err.rule_id(), "BP-SYNC-CPU");
    /// # Ok::<(), hurray::Error>(())
    /// ```
    pub fn export_after_event(&self, event: Event) -> Result<Handoff> {
        let desc = event.export_desc();
        let mut raw = sys::hurray_handoff::default();
        // On error `event` is dropped, which frees it.
        call(|e| unsafe { sys::hurray_buffer_export(self.0.as_ptr(), &desc, &mut raw, e) })?;
        std::mem::forget(event); // the handoff's release_event frees it now
        Ok(unsafe { Handoff::from_raw(raw) })
    }
    /// Copy `src` into the buffer at `offset`, through its backend (device
    /// memory too). `&mut self`: no slice of this `Buffer` is alive. Write
    /// before exporting: the producer keeps the bytes unchanged while a
    /// handoff or view of them is out (BP-ZC-NOMUT).
    pub fn write(&mut self, offset: u64, src: &[u8]) -> Result<()> {
        call(|e| unsafe {
            sys::hurray_buffer_copy_from_host(self.0.as_ptr(), offset, src.as_ptr().cast(), src.len() as u64, e)
        })
    }
    /// Copy bytes of the buffer at `offset` into `dst`.
    pub fn read(&self, offset: u64, dst: &mut [u8]) -> Result<()> {
        call(|e| unsafe {
            sys::hurray_buffer_copy_to_host(self.0.as_ptr(), offset, dst.as_mut_ptr().cast(), dst.len() as u64, e)
        })
    }
    pub fn handle(&self) -> Handle {
        let mut h = sys::hurray_buffer_handle::default();
        let _ = call(|e| unsafe { sys::hurray_buffer_get_handle(self.0.as_ptr(), &mut h, e) });
        Handle::from_c(&h)
    }
    /// The bytes, where the host can address them; None for device memory.
    /// Consumers given a writable handoff may write them meanwhile: read
    /// them once they have released.
    pub fn as_slice(&self) -> Option<&[u8]> {
        let h = self.handle();
        let p = unsafe { sys::hurray_buffer_data(self.0.as_ptr()) };
        if !h.host_addressable() {
            return None;
        }
        if p.is_null() || h.byte_size == 0 {
            return Some(&[]);
        }
        Some(unsafe { std::slice::from_raw_parts(p as *const u8, h.byte_size as usize) })
    }
    /// Take over an owner's reference libhurray handed out.
    #[cfg(feature = "net")]
    pub(crate) unsafe fn from_owned(b: NonNull<sys::hurray_buffer>) -> Buffer {
        Buffer(b)
    }
    /// The C buffer, for hurray-sys calls (the reference stays here).
    pub fn as_ptr(&self) -> *mut sys::hurray_buffer {
        self.0.as_ptr()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe { sys::hurray_buffer_unref(self.0.as_ptr()) }
    }
}
