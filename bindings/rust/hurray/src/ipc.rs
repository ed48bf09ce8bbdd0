//! IPC: `Listener` and `Channel` (hurray_ipc.h), handing buffers to another
//! process without copying them.
use std::any::Any;
use std::ffi::CString;
use std::os::raw::c_void;
use std::ptr::NonNull;
use std::sync::Mutex;

use hurray_sys as sys;

use crate::buffer::Buffer;
use crate::error::{call, Error, Result, Status};
use crate::handoff::Handoff;

/// Why a sent buffer came back (the release callback's argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseReason {
    /// The consumer released it.
    Released,
    /// The consumer died or hung up without releasing.
    PeerGone,
    /// This side closed the channel.
    Closed,
}

/// The channel's counters (`hurray_ipc_stats`).
pub type Stats = sys::hurray_ipc_stats;

type Callback = Box<dyn FnMut(u64, ReleaseReason) + Send>;

struct CallbackState {
    f: Mutex<Callback>,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

unsafe extern "C" fn trampoline(user: *mut c_void, id: u64, reason: sys::hurray_ipc_release_reason) {
    let st = unsafe { &*(user as *const CallbackState) };
    let reason = match reason {
        sys::hurray_ipc_release_reason::HURRAY_IPC_RELEASED => ReleaseReason::Released,
        sys::hurray_ipc_release_reason::HURRAY_IPC_PEER_GONE => ReleaseReason::PeerGone,
        _ => ReleaseReason::Closed,
    };
    // No panic unwinds into C: it is kept and resumed by the channel call
    // (send, receive, progress) that ran the callback.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut f = st.f.lock().unwrap_or_else(|p| p.into_inner());
        (f)(id, reason)
    }));
    if let Err(p) = r {
        let mut slot = st.panic.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(p);
        }
    }
}

fn c_path(path: &str) -> Result<CString> {
    CString::new(path).map_err(|_| Error::new(Status::INVALID_ARGUMENT, "a path with a NUL byte"))
}

/// A connected channel. Closed on drop: buffers it sent and that are still
/// out are taken back (`ReleaseReason::Closed`).
///
/// ```no_run
/// use hurray::{ipc::Channel, Buffer, Context};
/// let ch = Channel::connect("/tmp/hurray.sock")?;
/// ch.on_release(|id, why| println!("buffer {} back: {:?}", id, why));
/// let mut buf = Buffer::alloc_host(&Context::default(), 1 << 20, 4096, true)?;
/// buf.write(0, b"from Rust")?;
/// let id = ch.send(&buf)?;
/// while ch.stats().released == 0 {
///     ch.progress(100)?;
/// }
/// # let _ = id;
/// # Ok::<(), hurray::Error>(())
/// ```
pub struct Channel {
    raw: NonNull<sys::hurray_ipc_channel>,
    callback: Mutex<Option<Box<CallbackState>>>,
}

// hurray_ipc.h, "Thread safety": "every function may be called from any
// thread, on the same channel too".
unsafe impl Send for Channel {}
unsafe impl Sync for Channel {}

impl Channel {
    fn from_c(c: *mut sys::hurray_ipc_channel) -> Channel {
        Channel {
            raw: NonNull::new(c).expect("libhurray returned OK and a NULL channel"),
            callback: Mutex::new(None),
        }
    }
    /// Connect to a listener at `path` (its credentials are checked).
    pub fn connect(path: &str) -> Result<Channel> {
        let p = c_path(path)?;
        let mut c = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_ipc_connect(p.as_ptr(), std::ptr::null(), &mut c, e) })?;
        Ok(Channel::from_c(c))
    }
    /// Hand `buffer` to the peer without copying it (shareable memory, see
    /// `Buffer::alloc_host`); returns the ID the release callback names.
    pub fn send(&self, buffer: &Buffer) -> Result<u64> {
        let mut id = 0;
        let r = call(|e| unsafe { sys::hurray_ipc_send(self.raw.as_ptr(), buffer.as_ptr(), std::ptr::null(), &mut id, e) });
        self.resume_callback_panic();
        r.map(|()| id)
    }
    /// The next buffer, waiting up to `timeout_ms` (negative: forever):
    /// `(handoff, producer's ID)`. Nothing in time is `Status::IO`.
    pub fn receive(&self, timeout_ms: i32) -> Result<(Handoff, u64)> {
        let mut raw = sys::hurray_handoff::default();
        let mut id = 0;
        let r = call(|e| unsafe { sys::hurray_ipc_receive(self.raw.as_ptr(), timeout_ms, &mut raw, &mut id, e) });
        self.resume_callback_panic();
        r?;
        Ok((unsafe { Handoff::from_raw(raw) }, id))
    }
    /// Read what the peer sent (releases run the callback); the number of
    /// messages handled.
    pub fn progress(&self, timeout_ms: i32) -> Result<u32> {
        let mut n = 0;
        let r = call(|e| unsafe { sys::hurray_ipc_progress(self.raw.as_ptr(), timeout_ms, &mut n, e) });
        self.resume_callback_panic();
        r.map(|()| n)
    }
    /// Call `f(id, reason)` once for each sent buffer when it comes back,
    /// on the thread that read the release. A panic in `f` is caught there
    /// and resumed by the `send`, `receive` or `progress` that ran it.
    pub fn on_release<F>(&self, f: F)
    where
        F: FnMut(u64, ReleaseReason) + Send + 'static,
    {
        let mut slot = self.callback.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            Some(st) => *st.f.lock().unwrap_or_else(|p| p.into_inner()) = Box::new(f),
            None => {
                let st = Box::new(CallbackState { f: Mutex::new(Box::new(f)), panic: Mutex::new(None) });
                let user = &*st as *const CallbackState as *mut c_void;
                // Cannot fail for a live channel and a non-NULL function.
                let _ = call(|e| unsafe {
                    sys::hurray_ipc_set_release_callback(self.raw.as_ptr(), Some(trampoline), user, e)
                });
                *slot = Some(st);
            }
        }
    }
    /// The channel's counters.
    pub fn stats(&self) -> Stats {
        let mut s = Stats { size: std::mem::size_of::<Stats>() as u32, ..Default::default() };
        let _ = call(|e| unsafe { sys::hurray_ipc_get_stats(self.raw.as_ptr(), &mut s, e) });
        s
    }
    /// The socket, to poll for POLLIN (owned by the channel).
    pub fn fd(&self) -> i32 {
        unsafe { sys::hurray_ipc_fd(self.raw.as_ptr()) }
    }
    pub fn as_ptr(&self) -> *mut sys::hurray_ipc_channel {
        self.raw.as_ptr()
    }
    fn resume_callback_panic(&self) {
        let slot = self.callback.lock().unwrap_or_else(|p| p.into_inner());
        let payload = slot.as_ref().and_then(|st| st.panic.lock().unwrap_or_else(|p| p.into_inner()).take());
        drop(slot);
        if let Some(p) = payload {
            std::panic::resume_unwind(p);
        }
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // Close first: the callback may run (reason Closed) until then.
        unsafe { sys::hurray_ipc_close(self.raw.as_ptr()) };
    }
}

/// A listening socket; dropped, it is closed and its file removed.
///
/// ```no_run
/// let l = hurray::ipc::Listener::bind("/tmp/hurray.sock")?;
/// let ch = l.accept(-1)?;
/// let (handoff, _id) = ch.receive(-1)?;
/// println!("{} bytes", handoff.handle().byte_size);
/// # Ok::<(), hurray::Error>(())
/// ```
pub struct Listener(NonNull<sys::hurray_ipc_listener>);

// hurray_ipc.h: every function may be called from any thread.
unsafe impl Send for Listener {}
unsafe impl Sync for Listener {}

impl Listener {
    pub fn bind(path: &str) -> Result<Listener> {
        let p = c_path(path)?;
        let mut l = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_ipc_listen(p.as_ptr(), std::ptr::null(), &mut l, e) })?;
        Ok(Listener(NonNull::new(l).expect("hurray_ipc_listen returned OK and NULL")))
    }
    /// Wait up to `timeout_ms` (negative: forever) for a peer; a timeout is
    /// `Status::IO`.
    pub fn accept(&self, timeout_ms: i32) -> Result<Channel> {
        let mut c = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_ipc_accept(self.0.as_ptr(), timeout_ms, &mut c, e) })?;
        Ok(Channel::from_c(c))
    }
    pub fn fd(&self) -> i32 {
        unsafe { sys::hurray_ipc_listener_fd(self.0.as_ptr()) }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        unsafe { sys::hurray_ipc_listener_destroy(self.0.as_ptr()) }
    }
}
