//! The network client and server (hurray_net.h, libhurray-net over UCX),
//! behind the `net` feature: PUT a buffer to a server, GET one it offers.
use std::ffi::CString;
use std::ptr::NonNull;

use hurray_sys as sys;

use crate::buffer::Buffer;
use crate::error::{call, Error, Result, Status};

fn transfer(id: u64) -> sys::hurray_net_transfer_desc {
    // HURRAY_NET_TRANSFER_DESC_INIT: to the CPU, STANDARD memory, ordinal 0.
    sys::hurray_net_transfer_desc {
        size: std::mem::size_of::<sys::hurray_net_transfer_desc>() as u32,
        buffer_id: id,
        ..Default::default()
    }
}

/// A server on 127.0.0.1 (this machine only), any free port, no key.
///
/// ```no_run
/// let mut server = hurray::net::Server::loopback()?;
/// println!("listening on port {}", server.port());
/// if let Some((id, buf)) = server.poll(1000)? {
///     println!("PUT {}: {} bytes", id, buf.handle().byte_size);
/// }
/// # Ok::<(), hurray::Error>(())
/// ```
pub struct Server(NonNull<sys::hurray_net_server>);

// hurray_net.h: "Client and server objects are not thread-safe: use each
// from one thread at a time": Send (moved to one thread), not Sync.
unsafe impl Send for Server {}

impl Server {
    pub fn loopback() -> Result<Server> {
        let cfg = sys::hurray_net_server_config {
            size: std::mem::size_of::<sys::hurray_net_server_config>() as u32,
            transport: sys::hurray_transport::HURRAY_TRANSPORT_CROSS_MACHINE.0,
            ..Default::default()
        };
        let mut s = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_net_server_create(&cfg, &mut s, e) })?;
        Ok(Server(NonNull::new(s).expect("hurray_net_server_create returned OK and NULL")))
    }
    pub fn port(&self) -> u16 {
        unsafe { sys::hurray_net_server_port(self.0.as_ptr()) }
    }
    /// Drive the network up to `timeout_ms` (negative: until a PUT lands);
    /// the next landed PUT, `(its id, the buffer)`, which is now the caller's.
    pub fn poll(&mut self, timeout_ms: i32) -> Result<Option<(u64, Buffer)>> {
        let mut r = sys::hurray_net_received {
            size: std::mem::size_of::<sys::hurray_net_received>() as u32,
            ..Default::default()
        };
        call(|e| unsafe { sys::hurray_net_server_poll(self.0.as_ptr(), timeout_ms, &mut r, e) })?;
        Ok(NonNull::new(r.buffer).map(|b| (r.buffer_id, unsafe { Buffer::from_owned(b) })))
    }
    /// Offer `buffer` to GETs under `id` (the server takes its own reference).
    pub fn register(&mut self, id: u64, buffer: &Buffer) -> Result<()> {
        call(|e| unsafe { sys::hurray_net_server_register(self.0.as_ptr(), id, buffer.as_ptr(), e) })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        unsafe { sys::hurray_net_server_destroy(self.0.as_ptr()) }
    }
}

/// A client connected to one server.
pub struct Client(NonNull<sys::hurray_net_client>);

// hurray_net.h: not thread-safe, one thread at a time: Send, not Sync.
unsafe impl Send for Client {}

impl Client {
    /// Connect to a server without a key (`timeout_ms` 0: 60 s).
    pub fn connect(address: &str, port: u16, timeout_ms: i32) -> Result<Client> {
        let addr = CString::new(address)
            .map_err(|_| Error::new(Status::INVALID_ARGUMENT, "an address with a NUL byte"))?;
        let cfg = sys::hurray_net_client_config {
            size: std::mem::size_of::<sys::hurray_net_client_config>() as u32,
            transport: sys::hurray_transport::HURRAY_TRANSPORT_CROSS_MACHINE.0,
            address: addr.as_ptr(),
            port,
            timeout_ms,
            ..Default::default()
        };
        let mut c = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_net_client_connect(&cfg, &mut c, e) })?;
        Ok(Client(NonNull::new(c).expect("hurray_net_client_connect returned OK and NULL")))
    }
    /// PUT `buffer` under `id` into the server's CPU memory; waits for the
    /// server's answer (a refusal carries its status and rule).
    pub fn put(&mut self, id: u64, buffer: &Buffer) -> Result<()> {
        let d = transfer(id);
        call(|e| unsafe { sys::hurray_net_client_put_buffer(self.0.as_ptr(), buffer.as_ptr(), &d, e) })
    }
    /// GET the buffer the server offers under `id`, into CPU memory here.
    pub fn get(&mut self, id: u64) -> Result<Buffer> {
        let d = transfer(id);
        let mut b = std::ptr::null_mut();
        call(|e| unsafe { sys::hurray_net_client_get(self.0.as_ptr(), &d, &mut b, e) })?;
        Ok(unsafe { Buffer::from_owned(NonNull::new(b).expect("hurray_net_client_get returned OK and NULL")) })
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        unsafe { sys::hurray_net_client_destroy(self.0.as_ptr()) }
    }
}
