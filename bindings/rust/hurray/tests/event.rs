// Events: recording on the CPU is refused with its rule (BP-SYNC-CPU); an
// Event is freed exactly once, on drop; a handoff released after an event is
// released exactly once (the CPU backend releases at once), then the event it
// took is freed once; on an error both come back whole; an EVENT export the
// CPU refuses frees its event once.
use std::os::raw::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hurray::{Buffer, Context, Event, Handle, Handoff, Status, Stream, DEVICE_CPU};

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

// event_user of an ordered event: how often it was freed, and how many
// owner drops (releases) had happened when it was.
struct Ordered {
    frees: AtomicUsize,
    drops_at_free: AtomicUsize,
    drops: Arc<AtomicUsize>,
}

unsafe extern "C" fn ordered_free(user: *mut c_void, _event: *mut c_void) {
    let o = &*(user as *const Ordered);
    o.drops_at_free.store(o.drops.load(Ordering::SeqCst), Ordering::SeqCst);
    o.frees.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn a_handoff_released_after_an_event_is_released_then_the_event_freed_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let ord = Arc::new(Ordered { frees: AtomicUsize::new(0), drops_at_free: AtomicUsize::new(0), drops: drops.clone() });
    let mut marker = 0u64;
    let ev = unsafe {
        Event::from_raw(&mut marker as *mut u64 as *mut c_void, 7, ordered_free, Arc::as_ptr(&ord) as *mut c_void)
    };
    let ctx = Context::new().unwrap();
    ctx.set_guard(true).unwrap();
    let buf = Buffer::wrap(&ctx, owner(&drops), 64).unwrap();
    let h = buf.export().unwrap();
    drop(buf);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    // The CPU backend's release_after releases at once: the owner goes now,
    // once, then the event libhurray took, once.
    h.release_after_event(&ctx, ev).map_err(|(e, _, _)| e).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(ord.frees.load(Ordering::SeqCst), 1);
    assert_eq!(ord.drops_at_free.load(Ordering::SeqCst), 1, "the event was freed before the release");
    assert_eq!(ctx.guard_count(), 0, "guard mode saw a double release or a leak");
}

#[test]
fn a_refused_release_after_an_event_gives_both_back() {
    let (drops, frees) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut marker = 0u64;
    // A released handoff: BP-REL-ONCE, the event comes back unfreed.
    let dead = unsafe { Handoff::from_raw(hurray::sys::hurray_handoff::default()) };
    let (err, _dead, ev) = dead.release_after_event(&Context::default(), counted_event(&frees, &mut marker)).unwrap_err();
    assert_eq!(err.status(), Status::ALREADY_RELEASED);
    assert_eq!(err.rule_id(), "BP-REL-ONCE");
    assert_eq!(frees.load(Ordering::SeqCst), 0);
    assert_eq!(ev.value(), 7);
    // A live handoff of a device nobody serves (private tag 0xFE): refused,
    // and the handoff comes back live, released once when it drops.
    let buf = Buffer::wrap(&Context::default(), owner(&drops), 64).unwrap();
    let mut raw = buf.export().unwrap().into_raw();
    drop(buf);
    let cpu = raw.handle;
    raw.handle = Handle { device_tag: 0xFE, ..Handle::decode(&cpu).unwrap() }.encode();
    let h = unsafe { Handoff::from_raw(raw) };
    let (err, h, ev) = h.release_after_event(&Context::default(), ev).unwrap_err();
    assert_eq!(err.status(), Status::DEVICE_UNAVAILABLE, "{}", err.message());
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    assert_eq!(frees.load(Ordering::SeqCst), 0);
    let mut raw = h.into_raw();
    assert!(raw.release.is_some(), "the refused handoff came back released");
    raw.handle = cpu;
    drop(unsafe { Handoff::from_raw(raw) });
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(ev);
    assert_eq!(frees.load(Ordering::SeqCst), 1);
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
