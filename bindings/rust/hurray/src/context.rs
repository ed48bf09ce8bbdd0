//! `Context` and `Policy`, the two opaque objects of hurray.h.
use std::ptr::NonNull;

use hurray_sys as sys;

use crate::error::{call, Result};
use crate::handle::Transport;

/// A validation policy (`hurray_policy`): the transport, agreed private
/// device tags, warnings as errors.
///
/// ```
/// use hurray::{Handle, Policy, Status};
/// let h = Handle { byte_size: 64, alignment: 64, device_tag: 0xF3, ..Handle::default() };
/// let mut p = Policy::new()?;
/// assert_eq!(h.validate(Some(&p)).unwrap_err().rule_id(), "BP-DEV-PRIVATE");
/// p.allow_private_tag(0xF3, true)?;
/// h.validate(Some(&p))?;
/// # Ok::<(), hurray::Error>(())
/// ```
pub struct Policy(NonNull<sys::hurray_policy>);

// hurray.h: "Reading it from many threads at once is fine" (validation takes
// &Policy); setters take &mut self, so no setter runs while another thread
// reads. Freeing it from another thread is a plain free.
unsafe impl Send for Policy {}
unsafe impl Sync for Policy {}

impl Policy {
    /// The defaults: in-process, no private tag agreed, SHOULDs are warnings.
    pub fn new() -> Result<Policy> {
        let mut p = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_policy_create(&mut p, e) })?;
        Ok(Policy(NonNull::new(p).expect("hurray_policy_create returned OK and NULL")))
    }
    pub fn set_transport(&mut self, t: Transport) -> Result<()> {
        call(|e| unsafe { sys::hurray_policy_set_transport(self.0.as_ptr(), t.to_c(), e) })
    }
    /// Agree (or withdraw) a private device tag 0xF0-0xFE (BP-DEV-PRIVATE).
    pub fn allow_private_tag(&mut self, tag: u8, allow: bool) -> Result<()> {
        call(|e| unsafe { sys::hurray_policy_allow_private_tag(self.0.as_ptr(), tag, allow as i32, e) })
    }
    pub fn set_warnings_as_errors(&mut self, on: bool) -> Result<()> {
        call(|e| unsafe { sys::hurray_policy_set_warnings_as_errors(self.0.as_ptr(), on as i32, e) })
    }
    /// The C policy, for hurray-sys calls.
    pub fn as_ptr(&self) -> *mut sys::hurray_policy {
        self.0.as_ptr()
    }
}

impl Drop for Policy {
    fn drop(&mut self) {
        unsafe { sys::hurray_policy_destroy(self.0.as_ptr()) }
    }
}

/// A context (`hurray_context`): guard mode and the device registry.
/// `Context::default()` is the process's default context.
///
/// ```
/// let ctx = hurray::Context::new()?;
/// ctx.set_guard(true)?;
/// assert_eq!(ctx.guard_count(), 0);
/// # Ok::<(), hurray::Error>(())
/// ```
pub struct Context(Option<NonNull<sys::hurray_context>>);

// hurray.h: "A context is thread-safe."
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Default for Context {
    fn default() -> Context {
        Context(None)
    }
}

impl Context {
    /// A new context, guard mode off.
    pub fn new() -> Result<Context> {
        let mut c = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_context_create(&mut c, e) })?;
        Ok(Context(NonNull::new(c)))
    }
    /// Turn guard mode (the protocol sanitizer) on or off.
    pub fn set_guard(&self, on: bool) -> Result<()> {
        call(|e| unsafe { sys::hurray_context_set_guard(self.as_ptr(), on as i32, e) })
    }
    /// The guard reports made so far.
    pub fn guard_count(&self) -> u64 {
        unsafe { sys::hurray_context_guard_count(self.as_ptr()) }
    }
    /// The C context (NULL: the default context), for hurray-sys calls.
    pub fn as_ptr(&self) -> *mut sys::hurray_context {
        self.0.map_or(std::ptr::null_mut(), |c| c.as_ptr())
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if let Some(c) = self.0 {
            unsafe { sys::hurray_context_destroy(c.as_ptr()) }
        }
    }
}
