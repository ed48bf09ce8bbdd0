//! `Error`: a failed libhurray call, with its status, rule ID and message.
use std::ffi::CStr;
use std::fmt;

use hurray_sys as sys;

/// A libhurray status code (`hurray_status`): `Status::OK` or one of the
/// errors. The number is the C ABI's and never changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Status(pub u32);

impl Status {
    pub const OK: Status = Status(sys::hurray_status::HURRAY_OK.0);
    pub const INVALID_ARGUMENT: Status = Status(sys::hurray_status::HURRAY_E_INVALID_ARGUMENT.0);
    pub const SIZE: Status = Status(sys::hurray_status::HURRAY_E_SIZE.0);
    pub const ALIGNMENT: Status = Status(sys::hurray_status::HURRAY_E_ALIGNMENT.0);
    pub const DEVICE_TAG: Status = Status(sys::hurray_status::HURRAY_E_DEVICE_TAG.0);
    pub const MEMORY_CLASS: Status = Status(sys::hurray_status::HURRAY_E_MEMORY_CLASS.0);
    pub const SYNC: Status = Status(sys::hurray_status::HURRAY_E_SYNC.0);
    pub const ALREADY_RELEASED: Status = Status(sys::hurray_status::HURRAY_E_ALREADY_RELEASED.0);
    pub const DEVICE_UNAVAILABLE: Status =
        Status(sys::hurray_status::HURRAY_E_DEVICE_UNAVAILABLE.0);
    pub const OUT_OF_MEMORY: Status = Status(sys::hurray_status::HURRAY_E_OUT_OF_MEMORY.0);
    pub const UNSUPPORTED: Status = Status(sys::hurray_status::HURRAY_E_UNSUPPORTED.0);
    pub const IO: Status = Status(sys::hurray_status::HURRAY_E_IO.0);
    pub const PROTOCOL: Status = Status(sys::hurray_status::HURRAY_E_PROTOCOL.0);

    /// "HURRAY_E_SIZE" and so on (`hurray_status_name`).
    pub fn name(self) -> &'static str {
        static_str(unsafe { sys::hurray_status_name(sys::hurray_status(self.0)) })
    }
}

pub(crate) fn static_str(p: *const std::os::raw::c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // libhurray's names are static, NUL-terminated ASCII.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// The text of a NUL-terminated C array (a struct field), lossily as UTF-8.
pub(crate) fn c_text(b: &[std::os::raw::c_char]) -> String {
    let bytes: Vec<u8> = b.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A failed libhurray call: the status, the protocol rule that was broken
/// (its ID, e.g. `"BP-SIZE"`, empty when no rule applies) and the library's
/// message, which names the rule.
///
/// ```
/// let err = hurray::Handle::decode(&[0u8; 15]).unwrap_err();
/// assert_eq!(err.status(), hurray::Status::SIZE);
/// assert_eq!(err.rule_id(), "BP-SIZE");
/// assert!(err.to_string().contains("BP-SIZE"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    status: Status,
    rule_id: String,
    message: String,
}

impl Error {
    pub(crate) fn from_c(status: sys::hurray_status, e: &sys::hurray_error) -> Error {
        let mut message = c_text(&e.message);
        if message.is_empty() {
            message = static_str(unsafe { sys::hurray_status_message(status) }).to_string();
        }
        Error { status: Status(status.0), rule_id: c_text(&e.rule_id), message }
    }
    pub(crate) fn new(status: Status, message: &str) -> Error {
        Error { status, rule_id: String::new(), message: message.to_string() }
    }
    /// The status of the failed call.
    pub fn status(&self) -> Status {
        self.status
    }
    /// The rule ID (RULES.md), e.g. `"BP-ALIGN-MIN"`; empty if none applies.
    pub fn rule_id(&self) -> &str {
        &self.rule_id
    }
    /// The library's message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// `Result<T, hurray::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

/// Runs a C call with a zeroed `hurray_error` and turns its status into a
/// `Result`.
pub(crate) fn call<F>(f: F) -> Result<()>
where
    F: FnOnce(*mut sys::hurray_error) -> sys::hurray_status,
{
    let mut e = sys::hurray_error::default();
    let s = f(&mut e);
    if s == sys::hurray_status::HURRAY_OK {
        Ok(())
    } else {
        Err(Error::from_c(s, &e))
    }
}
