//! Devices: how many a backend sees, what each is, their native handles
//! and stable identities, the backends' report.
use std::os::raw::c_void;

use hurray_sys as sys;

use crate::context::Context;
use crate::error::{c_text as text, call, Result};

/// What `hurray_device_info` tells of one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    /// Bit n set: memory class n can be allocated.
    pub memory_classes: u32,
    /// HURRAY_BACKEND_IPC_* bits.
    pub ipc: u32,
    pub min_alignment: u32,
    pub detail: String,
}

/// The number of devices with this tag (loads its backend if needed).
///
/// ```
/// let ctx = hurray::Context::default();
/// assert_eq!(hurray::device_count(&ctx, hurray::DEVICE_CPU)?, 1);
/// let cpu = hurray::device_info(&ctx, hurray::DEVICE_CPU, 0)?;
/// assert!(!cpu.name.is_empty());
/// # Ok::<(), hurray::Error>(())
/// ```
pub fn device_count(ctx: &Context, device_tag: u8) -> Result<i32> {
    let mut n = 0;
    call(|e| unsafe { sys::hurray_device_count(ctx.as_ptr(), device_tag, &mut n, e) })?;
    Ok(n)
}

/// Describe one device.
pub fn device_info(ctx: &Context, device_tag: u8, ordinal: i32) -> Result<DeviceInfo> {
    let mut d = sys::hurray_backend_device_info::default();
    call(|e| unsafe { sys::hurray_device_info(ctx.as_ptr(), device_tag, ordinal, &mut d, e) })?;
    Ok(DeviceInfo {
        name: text(&d.name),
        memory_classes: d.memory_classes,
        ipc: d.ipc,
        min_alignment: d.min_alignment,
        detail: text(&d.detail),
    })
}

/// The backends' human-readable report (plugins found, devices, reasons).
pub fn backend_report(ctx: &Context) -> String {
    let n = unsafe { sys::hurray_backend_report(ctx.as_ptr(), std::ptr::null_mut(), 0) };
    let mut buf = vec![0u8; n + 1];
    unsafe { sys::hurray_backend_report(ctx.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    buf.truncate(n);
    String::from_utf8_lossy(&buf).into_owned()
}

/// The backend's native handles of a device (`hurray_device_native`), for
/// callers that submit their own work on it. What each of the 8 slots holds
/// is the backend's (its page of docs/backends/: Vulkan: instance, physical
/// device, device, queue, queue family index, vkGetInstanceProcAddr; OpenCL:
/// platform, device, context, command queue, the ICD library); unused slots
/// are null.
///
/// Neither `Send` nor `Sync`: the handles are the vendor runtime's objects,
/// and hurray_backend.h promises nothing of their use from other threads
/// (a Vulkan queue needs external synchronisation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeHandles {
    handles: [*mut c_void; 8],
}

impl NativeHandles {
    /// The handle in `slot` (0..8); null for an unused slot or one past 8.
    pub fn get(&self, slot: usize) -> *mut c_void {
        self.handles.get(slot).copied().unwrap_or(std::ptr::null_mut())
    }
    /// All 8 slots.
    pub fn as_slice(&self) -> &[*mut c_void] {
        &self.handles
    }
}

/// The native handles of a device. The CPU has none (`Status::UNSUPPORTED`):
///
/// ```
/// let ctx = hurray::Context::default();
/// let err = hurray::device_native(&ctx, hurray::DEVICE_CPU, 0).unwrap_err();
/// assert_eq!(err.status(), hurray::Status::UNSUPPORTED);
/// // A Vulkan device, where there is one: slot 3 is its queue.
/// if let Ok(vk) = hurray::device_native(&ctx, 0x04, 0) {
///     assert!(!vk.get(3).is_null());
/// }
/// ```
pub fn device_native(ctx: &Context, device_tag: u8, ordinal: i32) -> Result<NativeHandles> {
    let mut n = sys::hurray_backend_native::default();
    call(|e| unsafe { sys::hurray_device_native(ctx.as_ptr(), device_tag, ordinal, &mut n, e) })?;
    Ok(NativeHandles { handles: n.handles })
}

/// A device's stable identity (`hurray_device_identity`,
/// docs/spec/identity.md): the same in every process whatever the device
/// order there. Two devices are the same when their identities are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceIdentity {
    /// The backend knows none (CPU, WebGPU, PoCL).
    None,
    /// The vendor's 16-byte device UUID.
    Uuid([u8; 16]),
    /// An 8-byte LUID.
    Luid([u8; 8]),
    /// A PCI address.
    Pci { domain: u32, bus: u8, device: u8, function: u8 },
    /// A kind this crate does not know (a newer libhurray), kept whole.
    Other { kind: u32, bytes: [u8; 16] },
}

impl DeviceIdentity {
    /// From the C struct.
    pub fn from_raw(raw: &sys::hurray_backend_device_identity) -> DeviceIdentity {
        let b = raw.bytes;
        match raw.kind {
            sys::HURRAY_BACKEND_ID_NONE => DeviceIdentity::None,
            sys::HURRAY_BACKEND_ID_UUID => DeviceIdentity::Uuid(b),
            sys::HURRAY_BACKEND_ID_LUID if b[8..].iter().all(|&x| x == 0) => {
                let mut l = [0u8; 8];
                l.copy_from_slice(&b[..8]);
                DeviceIdentity::Luid(l)
            }
            sys::HURRAY_BACKEND_ID_PCI if b[7..].iter().all(|&x| x == 0) => DeviceIdentity::Pci {
                domain: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                bus: b[4],
                device: b[5],
                function: b[6],
            },
            kind => DeviceIdentity::Other { kind, bytes: b },
        }
    }
    /// The C struct (`hurray_device_find` compares kind and all 16 bytes).
    pub fn to_raw(&self) -> sys::hurray_backend_device_identity {
        let (kind, bytes) = match *self {
            DeviceIdentity::None => (sys::HURRAY_BACKEND_ID_NONE, [0u8; 16]),
            DeviceIdentity::Uuid(u) => (sys::HURRAY_BACKEND_ID_UUID, u),
            DeviceIdentity::Luid(l) => {
                let mut b = [0u8; 16];
                b[..8].copy_from_slice(&l);
                (sys::HURRAY_BACKEND_ID_LUID, b)
            }
            DeviceIdentity::Pci { domain, bus, device, function } => {
                let mut b = [0u8; 16];
                b[..4].copy_from_slice(&domain.to_le_bytes());
                b[4] = bus;
                b[5] = device;
                b[6] = function;
                (sys::HURRAY_BACKEND_ID_PCI, b)
            }
            DeviceIdentity::Other { kind, bytes } => (kind, bytes),
        };
        sys::hurray_backend_device_identity { kind, reserved0: 0, bytes }
    }
}

/// The stable identity of a device. The CPU has none:
///
/// ```
/// use hurray::{device_identity, Context, DeviceIdentity, DEVICE_CPU};
/// assert_eq!(device_identity(&Context::default(), DEVICE_CPU, 0)?, DeviceIdentity::None);
/// # Ok::<(), hurray::Error>(())
/// ```
pub fn device_identity(ctx: &Context, device_tag: u8, ordinal: i32) -> Result<DeviceIdentity> {
    let mut id = sys::hurray_backend_device_identity::default();
    call(|e| unsafe { sys::hurray_device_identity(ctx.as_ptr(), device_tag, ordinal, &mut id, e) })?;
    Ok(DeviceIdentity::from_raw(&id))
}

/// This process's ordinal of the device with `identity` (`hurray_device_find`),
/// e.g. one another process named. None has it: `Status::DEVICE_UNAVAILABLE`
/// (BP-DEV-ID); `DeviceIdentity::None` names no device
/// (`Status::INVALID_ARGUMENT`).
///
/// ```
/// use hurray::{device_find, Context, DeviceIdentity, Status, DEVICE_CPU};
/// let ctx = Context::default();
/// let err = device_find(&ctx, DEVICE_CPU, &DeviceIdentity::Uuid([7; 16])).unwrap_err();
/// assert_eq!(err.status(), Status::DEVICE_UNAVAILABLE);
/// assert!(err.message().starts_with("BP-DEV-ID"));
/// ```
pub fn device_find(ctx: &Context, device_tag: u8, identity: &DeviceIdentity) -> Result<i32> {
    let raw = identity.to_raw();
    let mut ordinal = -1;
    call(|e| unsafe { sys::hurray_device_find(ctx.as_ptr(), device_tag, &raw, &mut ordinal, e) })?;
    Ok(ordinal)
}
