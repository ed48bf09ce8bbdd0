//! Devices: how many a backend sees, what each is, the backends' report.
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
