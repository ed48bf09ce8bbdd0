// One buffer, four languages (tests/rust/four_languages.py drives it):
//   four_languages produce PATH N  listen at PATH, send one buffer to the N
//                                  consumers that connect (C++ and Python),
//                                  and see each release it exactly once
//   four_languages consume PATH    receive a buffer from a C++ producer,
//                                  check its bytes and release it
// HURRAY_FOUR_SKIP_RELEASE=rust makes the consumer exit without releasing
// (the test's proof that a missing release is caught).
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hurray::ipc::{Listener, ReleaseReason};
use hurray::{Buffer, Context};

const SIZE: usize = 1 << 16;

fn pattern(i: usize) -> u8 {
    (i * 7 + 3) as u8
}

fn produce(path: &str, consumers: usize) -> Result<(), String> {
    let ctx = Context::new().map_err(|e| e.to_string())?;
    ctx.set_guard(true).map_err(|e| e.to_string())?;
    let listener = Listener::bind(path).map_err(|e| e.to_string())?;
    let mut buf = Buffer::alloc_host(&ctx, SIZE as u64, 4096, true).map_err(|e| e.to_string())?;
    let bytes: Vec<u8> = (0..SIZE).map(pattern).collect();
    buf.write(0, &bytes).map_err(|e| e.to_string())?;
    let seen: Arc<Mutex<Vec<(usize, u64, ReleaseReason)>>> = Arc::default();
    let mut channels = Vec::new();
    for n in 0..consumers {
        let ch = listener.accept(20_000).map_err(|e| format!("accept: {}", e))?;
        let s = seen.clone();
        ch.on_release(move |id, why| s.lock().unwrap().push((n, id, why)));
        let id = ch.send(&buf).map_err(|e| format!("send: {}", e))?;
        println!("rust producer: sent buffer {} to consumer {}", id, n);
        channels.push(ch);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.lock().unwrap().len() < consumers && Instant::now() < deadline {
        for ch in &channels {
            let _ = ch.progress(50);
        }
    }
    let seen = seen.lock().unwrap().clone();
    for n in 0..consumers {
        let mine: Vec<_> = seen.iter().filter(|s| s.0 == n).collect();
        match mine.as_slice() {
            [(_, _, ReleaseReason::Released)] => {}
            [(_, _, why)] => return Err(format!("consumer {} did not release ({:?})", n, why)),
            [] => return Err(format!("consumer {} did not release (nothing came back)", n)),
            _ => return Err(format!("consumer {}: {} releases of one send", n, mine.len())),
        }
        let st = channels[n].stats();
        if st.released != 1 || st.reclaimed != 0 || st.outstanding != 0 {
            return Err(format!("consumer {}: stats {:?}", n, st));
        }
    }
    drop(channels);
    drop(buf);
    if ctx.guard_count() != 0 {
        return Err(format!("{} guard reports", ctx.guard_count()));
    }
    println!("rust producer: {} releases, one each; buffer dropped, no guard report", consumers);
    Ok(())
}

fn consume(path: &str) -> Result<(), String> {
    let ch = hurray::ipc::Channel::connect(path).map_err(|e| e.to_string())?;
    let (h, id) = ch.receive(20_000).map_err(|e| format!("receive: {}", e))?;
    let data = h.as_slice().ok_or("not host memory")?;
    if data.len() != SIZE || data.iter().enumerate().any(|(i, &b)| b != pattern(i)) {
        return Err("the bytes differ".into());
    }
    if std::env::var("HURRAY_FOUR_SKIP_RELEASE").as_deref() == Ok("rust") {
        std::mem::forget(h);
        std::process::exit(0);
    }
    h.release().map_err(|e| format!("release: {}", e))?;
    println!("rust consumer: buffer {} checked and released", id);
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let r = match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("produce"), Some(path)) => produce(path, args.get(3).and_then(|n| n.parse().ok()).unwrap_or(2)),
        (Some("consume"), Some(path)) => consume(path),
        _ => Err("usage: four_languages produce PATH [N] | consume PATH".into()),
    };
    if let Err(e) = r {
        eprintln!("four_languages: {}", e);
        std::process::exit(1);
    }
}
