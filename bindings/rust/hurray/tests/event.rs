// Events: recording on the CPU is refused with its rule (BP-SYNC-CPU); an
// Event is freed exactly once, on drop; a handoff released after an event is
// released exactly once (the CPU backend releases at once) and the event
// stays the caller's; an EVENT export the CPU refuses frees its event once.
use std::os::raw::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hurray::{Buffer, Context, Event, Status, Stream, DEVICE_CPU};

mod common;
use common::owner;

// event_user: an Arc<AtomicUsize> counting the frees of the event.
unsafe extern "C" fn count_free(user: *mut c_void, _event: *mut c_void) {
    let frees = &*(user as *const AtomicUsize);
    frees.fetch_add(1, Ordering::SeqCst);
}

fn counted_event(frees: &Arc<AtomicUsize>, marker: &mut u64) -> Event {
    let user = Arc::as_ptr(frees) as *mut c_void;
    unsafe { Event::from_raw(marker as *mut u64 as *mut c_void, 7, count_free, user) }
}

#[test]
fn recording_an_event_on_the_cpu_names_bp_sync_cpu() {
    let err = Event::record(&Context::default(), DEVICE_CPU, 0, Stream::DEFAULT).err().unwrap();
    assert_eq!(err.status(), Status::UNSUPPORTED);
    assert_eq!(err.rule_id(), "BP-SYNC-CPU");
}

#[test]
fn an_event_is_freed_once_on_drop_on_any_thread() {
    let frees = Arc::new(AtomicUsize::new(0));
    let mut marker = 0u64;
    let ev = counted_event(&frees, &mut marker);
    assert_eq!(ev.value(), 7);
    assert_eq!(ev.as_raw(), &mut marker as *mut u64 as *mut c_void);
    assert_eq!(frees.load(Ordering::SeqCst), 0);
    std::thread::spawn(move || drop(ev)).join().unwrap();
    assert_eq!(frees.load(Ordering::SeqCst), 1);
}

#[test]
fn a_handoff_released_after_an_event_is_released_exactly_once() {
    let (drops, frees) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut marker = 0u64;
    let ev = counted_event(&frees, &mut marker);
    let ctx = Context::new().unwrap();
    ctx.set_guard(true).unwrap();
    let buf = Buffer::wrap(&ctx, owner(&drops), 64).unwrap();
    let h = buf.export().unwrap();
    drop(buf);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    // The CPU backend's release_after releases at once: the owner goes now,
    // once, and the event is still the caller's.
    unsafe { h.release_after_event(&ctx, &ev) }.map_err(|(e, _)| e).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(frees.load(Ordering::SeqCst), 0);
    drop(ev);
    assert_eq!(frees.load(Ordering::SeqCst), 1);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(ctx.guard_count(), 0, "guard mode saw a double release or a leak");
}

#[test]
fn a_refused_event_export_frees_the_event_once() {
    let (drops, frees) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut marker = 0u64;
    let buf = Buffer::wrap(&Context::default(), owner(&drops), 64).unwrap();
    // A CPU buffer is PRODUCER_SYNCED: the EVENT export is refused, and the
    // event it would have carried is freed here, once.
    let err = buf.export_after_event(counted_event(&frees, &mut marker)).err().unwrap();
    assert_eq!(err.rule_id(), "BP-SYNC-CPU");
    assert_eq!(frees.load(Ordering::SeqCst), 1);
    drop(buf);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(frees.load(Ordering::SeqCst), 1);
}

#[test]
fn events_are_send_and_sync_as_the_header_promises() {
    fn both<T: Send + Sync>() {}
    both::<Event>();
}
