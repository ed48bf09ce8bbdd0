//! `Event`: a device event recorded through libhurray, freed exactly once.
use std::os::raw::c_void;

use hurray_sys as sys;

use crate::context::Context;
use crate::error::{call, Result};
use crate::handoff::Stream;

/// Frees an event: `free(user, object)`, the `event_free_fn` of
/// `hurray_export_desc`.
pub type EventFreeFn = unsafe extern "C" fn(user: *mut c_void, event: *mut c_void);

/// A device event (`hurray_event_record`): marks the work queued on a stream
/// so far. It is freed exactly once, through the `event_free_fn` libhurray
/// set (hurray.h: "free the event with desc->event_free_fn(desc->event_user,
/// desc->sync_object)"): when the `Event` is dropped, or by libhurray once
/// it is handed over ([`crate::Buffer::export_after_event`],
/// [`crate::Handoff::release_after_event`]).
///
/// The CPU has no events (BP-SYNC-CPU: CPU buffers are PRODUCER_SYNCED):
///
/// ```
/// use hurray::{Context, Event, Status, Stream, DEVICE_CPU};
/// let err = Event::record(&Context::default(), DEVICE_CPU, 0, Stream::DEFAULT).err().unwrap();
/// assert_eq!(err.status(), Status::UNSUPPORTED);
/// assert_eq!(err.rule_id(), "BP-SYNC-CPU");
/// ```
pub struct Event {
    object: *mut c_void,
    value: u64,
    free: EventFreeFn,
    user: *mut c_void,
}

// hurray.h: the event is freed "exactly once when the consumer releases it",
// and a consumer releases "from any thread (BP-REL-THREAD)": libhurray's
// event_free_fn runs on whichever thread, so an Event may move between
// threads. The shared methods only read the fields.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    /// Record an event after the work queued on `stream` of the device
    /// (`device_tag`, `ordinal`).
    pub fn record(ctx: &Context, device_tag: u8, ordinal: i32, stream: Stream) -> Result<Event> {
        let mut desc = sys::hurray_export_desc {
            size: std::mem::size_of::<sys::hurray_export_desc>() as u32,
            ..Default::default()
        };
        call(|e| unsafe {
            sys::hurray_event_record(ctx.as_ptr(), device_tag, ordinal, stream.as_raw(), &mut desc, e)
        })?;
        let free = desc.event_free_fn.expect("hurray_event_record returned OK and no event_free_fn");
        Ok(Event { object: desc.sync_object, value: desc.sync_value, free, user: desc.event_user })
    }
    /// Take over an event: `free(user, object)` is called once, on drop.
    ///
    /// ```
    /// use std::os::raw::c_void;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// static FREED: AtomicUsize = AtomicUsize::new(0);
    /// unsafe extern "C" fn free(_user: *mut c_void, _event: *mut c_void) {
    ///     FREED.fetch_add(1, Ordering::SeqCst);
    /// }
    /// let mut marker = 0u8;
    /// let ev = unsafe {
    ///     hurray::Event::from_raw(&mut marker as *mut u8 as *mut c_void, 0, free, std::ptr::null_mut())
    /// };
    /// drop(ev);
    /// assert_eq!(FREED.load(Ordering::SeqCst), 1);
    /// ```
    ///
    /// # Safety
    /// `object` must be a live event of the device it is used with (value
    /// `value` on timeline-style events), nobody else may free it, and
    /// `free(user, object)` must free it from any thread.
    pub unsafe fn from_raw(object: *mut c_void, value: u64, free: EventFreeFn, user: *mut c_void) -> Event {
        Event { object, value, free, user }
    }
    /// The native event (`sync_object`), for hurray-sys calls.
    pub fn as_raw(&self) -> *mut c_void {
        self.object
    }
    /// The value to wait for on timeline-style events; else 0.
    pub fn value(&self) -> u64 {
        self.value
    }
    /// (object, value, free, user), for a C call that takes the event over.
    pub(crate) fn parts(&self) -> (*mut c_void, u64, EventFreeFn, *mut c_void) {
        (self.object, self.value, self.free, self.user)
    }
    /// An EVENT export carrying the event; whoever gets it frees the event.
    pub(crate) fn export_desc(&self) -> sys::hurray_export_desc {
        sys::hurray_export_desc {
            size: std::mem::size_of::<sys::hurray_export_desc>() as u32,
            sync_mode: sys::hurray_sync_mode::HURRAY_SYNC_EVENT.0 as u32,
            sync_object: self.object,
            sync_value: self.value,
            event_free_fn: Some(self.free),
            event_user: self.user,
            ..Default::default()
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        unsafe { (self.free)(self.user, self.object) }
    }
}
