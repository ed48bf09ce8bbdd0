// The network wrappers (feature `net`) on loopback: a PUT lands on the
// server as a Buffer with the client's bytes, and a GET brings back what the
// server registered. The server polls on its own thread (each object is used
// from one thread at a time, as hurray_net.h asks).
#![cfg(feature = "net")]
use hurray::net::{Client, Server};
use hurray::{Buffer, Context};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[test]
fn a_put_lands_and_a_get_comes_back() {
    let mut server = Server::loopback().unwrap();
    let port = server.port();
    let mut offered = Buffer::alloc_host(&Context::default(), 4096, 4096, false).unwrap();
    offered.write(0, &[0x77; 4096]).unwrap();
    server.register(9, &offered).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let client_done = done.clone();
    let poller = std::thread::spawn(move || {
        let mut landed = None;
        // Serve until the client is done (the GET too), 20 s at most.
        for _ in 0..400 {
            if let Some(l) = server.poll(50).unwrap() {
                landed = Some(l);
            }
            if done.load(Ordering::SeqCst) {
                break;
            }
        }
        landed
    });
    let mut client = Client::connect("127.0.0.1", port, 20_000).unwrap();
    let mut buf = Buffer::alloc_host(&Context::default(), 8192, 4096, false).unwrap();
    buf.write(0, &[0x3C; 8192]).unwrap();
    client.put(5, &buf).unwrap();
    let got = client.get(9).unwrap();
    client_done.store(true, Ordering::SeqCst);
    assert!(got.as_slice().unwrap().iter().all(|&b| b == 0x77));
    let (id, landed) = poller.join().unwrap().expect("no PUT landed");
    assert_eq!(id, 5);
    assert_eq!(landed.as_slice().unwrap().len(), 8192);
    assert!(landed.as_slice().unwrap().iter().all(|&b| b == 0x3C));
}
