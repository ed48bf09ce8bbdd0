// The IPC wrappers in one process: a listener, a connecting thread, a buffer
// sent and received, the release seen by the producer's closure, and a
// closure's panic resumed by progress() instead of unwinding into C.
use std::sync::{Arc, Mutex};

use hurray::ipc::{Channel, Listener, ReleaseReason};
use hurray::{Buffer, Context, Status};

fn pair(name: &str) -> (Channel, Channel, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("hurray-rs-{}-{}", std::process::id(), name));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("sock");
    let l = Listener::bind(path.to_str().unwrap()).unwrap();
    let p = path.to_str().unwrap().to_string();
    let t = std::thread::spawn(move || Channel::connect(&p).unwrap());
    let producer = l.accept(10_000).unwrap();
    let consumer = t.join().unwrap();
    (producer, consumer, dir)
}

#[test]
fn a_sent_buffer_is_received_and_its_release_seen() {
    let (producer, consumer, dir) = pair("send");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    // Never poisoned by a failing assertion: the closure runs again (reason
    // Closed) when the channel drops during the unwinding.
    producer.on_release(move |id, why| s.lock().unwrap_or_else(|p| p.into_inner()).push((id, why)));
    let mut buf = Buffer::alloc_host(&Context::default(), 8192, 4096, true).unwrap();
    buf.write(0, &[0x42; 8192]).unwrap();
    let id = producer.send(&buf).unwrap();
    let (h, got) = consumer.receive(5000).unwrap();
    assert_eq!(got, id);
    assert!(h.as_slice().unwrap().iter().all(|&b| b == 0x42));
    drop(h);
    for _ in 0..50 {
        if !seen.lock().unwrap().is_empty() {
            break;
        }
        let _ = producer.progress(100);
    }
    assert_eq!(*seen.lock().unwrap(), vec![(id, ReleaseReason::Released)]);
    assert_eq!(producer.stats().outstanding, 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_panic_in_the_release_closure_is_resumed_by_progress() {
    let (producer, consumer, dir) = pair("panic");
    producer.on_release(|_, _| panic!("from the closure"));
    let buf = Buffer::alloc_host(&Context::default(), 4096, 4096, true).unwrap();
    producer.send(&buf).unwrap();
    consumer.receive(5000).unwrap().0.release().unwrap();
    let mut caught = false;
    for _ in 0..50 {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| producer.progress(100)));
        if let Err(p) = r {
            assert_eq!(p.downcast_ref::<&str>(), Some(&"from the closure"));
            caught = true;
            break;
        }
    }
    assert!(caught);
    assert_eq!(producer.stats().released, 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn nothing_to_receive_is_an_io_error() {
    let (_producer, consumer, dir) = pair("empty");
    assert_eq!(consumer.receive(0).err().unwrap().status(), Status::IO);
    let _ = std::fs::remove_dir_all(dir);
}
