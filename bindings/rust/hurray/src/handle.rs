//! `Handle`: the 16-byte buffer handle, its codec and its validation.
use hurray_sys as sys;

use crate::context::Policy;
use crate::error::{call, Result};

/// The decoded fields of one 16-byte buffer handle, in wire order. Any
/// byte value survives `decode` and `encode`; `validate` checks the rules.
///
/// ```
/// use hurray::Handle;
/// let h = Handle { byte_size: 4096, alignment: 64, ..Handle::default() };
/// let wire = h.encode();
/// assert_eq!(Handle::decode(&wire)?, h);
/// h.validate(None)?;
/// # Ok::<(), hurray::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Handle {
    pub byte_size: u64,
    pub alignment: u32,
    pub device_tag: u8,
    pub sync_mode: u8,
    pub memory_class: u8,
    pub reserved: u8,
}

impl Handle {
    pub(crate) fn from_c(h: &sys::hurray_buffer_handle) -> Handle {
        Handle {
            byte_size: h.byte_size,
            alignment: h.alignment,
            device_tag: h.device_tag,
            sync_mode: h.sync_mode,
            memory_class: h.memory_class,
            reserved: h.reserved,
        }
    }
    pub(crate) fn to_c(self) -> sys::hurray_buffer_handle {
        sys::hurray_buffer_handle {
            byte_size: self.byte_size,
            alignment: self.alignment,
            device_tag: self.device_tag,
            sync_mode: self.sync_mode,
            memory_class: self.memory_class,
            reserved: self.reserved,
        }
    }
    /// Decode exactly 16 little-endian bytes (BP-SIZE otherwise).
    pub fn decode(bytes: &[u8]) -> Result<Handle> {
        let mut out = sys::hurray_buffer_handle::default();
        call(|e| unsafe { sys::hurray_handle_decode(bytes.as_ptr().cast(), bytes.len(), &mut out, e) })?;
        Ok(Handle::from_c(&out))
    }
    /// The 16 wire bytes.
    pub fn encode(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        let c = self.to_c();
        // Cannot fail: the output is 16 bytes.
        let _ = call(|e| unsafe { sys::hurray_handle_encode(&c, out.as_mut_ptr().cast(), 16, e) });
        out
    }
    /// Check every reject rule under `policy` (None: in-process defaults).
    pub fn validate(&self, policy: Option<&Policy>) -> Result<()> {
        let c = self.to_c();
        let p = policy.map_or(std::ptr::null(), |p| p.as_ptr() as *const _);
        call(|e| unsafe { sys::hurray_handle_validate(&c, p, e) })
    }
    /// Whether the host can address the memory of a buffer with this handle
    /// (CPU memory, pinned or unified memory).
    pub fn host_addressable(&self) -> bool {
        self.device_tag == sys::hurray_device_tag::HURRAY_DEVICE_CPU.0 as u8
            || self.memory_class == sys::hurray_memory_class::HURRAY_MEMORY_HOST_PINNED.0 as u8
            || self.memory_class == sys::hurray_memory_class::HURRAY_MEMORY_UNIFIED.0 as u8
    }
}

/// The transport a handle travels on (it selects the rules that apply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    InProcess,
    Ipc,
    Rdma,
    CrossMachine,
}

impl Transport {
    pub(crate) fn to_c(self) -> sys::hurray_transport {
        match self {
            Transport::InProcess => sys::hurray_transport::HURRAY_TRANSPORT_IN_PROCESS,
            Transport::Ipc => sys::hurray_transport::HURRAY_TRANSPORT_IPC,
            Transport::Rdma => sys::hurray_transport::HURRAY_TRANSPORT_RDMA,
            Transport::CrossMachine => sys::hurray_transport::HURRAY_TRANSPORT_CROSS_MACHINE,
        }
    }
}
