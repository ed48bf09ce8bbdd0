// The safe crate's ownership promises: a wrapped owner dropped exactly once,
// each handoff released exactly once (drop, release, into_raw/from_raw),
// errors carrying status and rule, Send/Sync where the C headers promise.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hurray::{Buffer, Context, Handoff, Status};

mod common;
use common::owner;

#[test]
fn a_wrapped_owner_is_dropped_once_after_the_last_handoff() {
    let drops = Arc::new(AtomicUsize::new(0));
    let buf = Buffer::wrap(&Context::default(), owner(&drops), 64).unwrap();
    let a = buf.export().unwrap();
    let b = buf.export().unwrap();
    drop(buf);
    assert_eq!(a.as_slice().unwrap()[255], 0x5A);
    a.release().unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    // The last handoff goes on another thread (BP-REL-THREAD).
    std::thread::spawn(move || drop(b)).join().unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn a_failed_wrap_drops_the_owner_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    // 32 is below the protocol's minimum alignment (BP-ALIGN-MIN).
    let err = Buffer::wrap(&Context::default(), owner(&drops), 32).err().unwrap();
    assert_eq!(err.status(), Status::ALIGNMENT);
    assert_eq!(err.rule_id(), "BP-ALIGN-MIN");
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn into_raw_and_from_raw_move_the_release() {
    let drops = Arc::new(AtomicUsize::new(0));
    let buf = Buffer::wrap(&Context::default(), owner(&drops), 64).unwrap();
    let raw = buf.export().unwrap().into_raw();
    drop(buf);
    assert!(raw.release.is_some());
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    let back = unsafe { Handoff::from_raw(raw) };
    drop(back);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn guard_mode_sees_no_leak_when_handoffs_drop() {
    let ctx = Context::new().unwrap();
    ctx.set_guard(true).unwrap();
    {
        let buf = Buffer::alloc_host(&ctx, 4096, 64, false).unwrap();
        let _h = buf.export().unwrap();
    }
    assert_eq!(ctx.guard_count(), 0);
}

#[test]
fn views_and_out_of_bounds_errors() {
    let mut buf = Buffer::alloc_host(&Context::default(), 4096, 4096, false).unwrap();
    let bytes: Vec<u8> = (0..4096u32).map(|i| i as u8).collect();
    buf.write(0, &bytes).unwrap();
    let v = buf.view(128, 64).unwrap();
    assert_eq!(v.as_slice().unwrap()[0], 128);
    assert_eq!(v.handle().alignment, 128);
    let err = buf.view(4000, 200).err().unwrap();
    assert_eq!(err.status(), Status::INVALID_ARGUMENT);
    assert!(err.message().contains("BP-VIEW-BOUNDS"));
    let mut back = [0u8; 4];
    buf.read(4092, &mut back).unwrap();
    assert_eq!(back, [252, 253, 254, 255]);
}

#[test]
fn send_and_sync_as_the_headers_promise() {
    fn both<T: Send + Sync>() {}
    both::<Context>();
    both::<hurray::Policy>();
    both::<Buffer>();
    both::<Handoff>();
    both::<hurray::ipc::Channel>();
    both::<hurray::ipc::Listener>();
    both::<hurray::Error>();
}
