// A Rust consumer of the installed libhurray: extern "C" declarations of the
// part of hurray.h and hurray_dlpack.h it uses, linked with `-l hurray`, no
// crates. Built and run by tests/consumers/run_consumer.sh (mode rust):
//   rustc --edition 2021 main.rs -L <libdir> -l hurray -o app
// It checks a handle under the IPC rules, hands a Rust-owned buffer over as a
// handoff (released exactly once, a stale copy refused), and exports it as a
// DLPack tensor whose deleter frees the memory once.
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct BufferHandle {
    byte_size: u64,
    alignment: u32,
    device_tag: u8,
    sync_mode: u8,
    memory_class: u8,
    reserved: u8,
}

#[repr(C)]
struct HurrayError {
    status: i32,
    rule: u32,
    severity: i32,
    reserved0: i32,
    buffer_index: i64,
    byte_offset: i64,
    rule_id: [c_char; 32],
    message: [c_char; 256],
}

impl HurrayError {
    fn new() -> Self {
        unsafe { std::mem::zeroed() }
    }
    fn rule_id(&self) -> String {
        unsafe { CStr::from_ptr(self.rule_id.as_ptr()) }.to_string_lossy().into_owned()
    }
    fn message(&self) -> String {
        unsafe { CStr::from_ptr(self.message.as_ptr()) }.to_string_lossy().into_owned()
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Handoff {
    version: u32,
    flags: u32,
    handle: [u8; 16],
    device_ordinal: i32,
    reserved0: u32,
    data: *mut c_void,
    sync_object: *mut c_void,
    sync_value: u64,
    release_event: Option<unsafe extern "C" fn(*mut Handoff)>,
    release: Option<unsafe extern "C" fn(*mut Handoff)>,
    private_data: *mut c_void,
    reserved: [u64; 4],
}

type FreeFn = unsafe extern "C" fn(user: *mut c_void, data: *mut c_void);

#[repr(C)]
struct BufferDesc {
    size: u32,
    flags: u32,
    handle: BufferHandle,
    data: *mut c_void,
    device_ordinal: i32,
    reserved0: u32,
    free_fn: Option<FreeFn>,
    free_user: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

const HURRAY_OK: i32 = 0;
const HURRAY_E_ALIGNMENT: i32 = 4;
const HURRAY_E_ALREADY_RELEASED: i32 = 9;
const HURRAY_DEVICE_CUDA: u8 = 0x01;
const HURRAY_TRANSPORT_IPC: c_int = 1;
const DL_FLOAT: u8 = 2;
const KDL_CPU: i32 = 1;
const KDL_CUDA_HOST: i32 = 3;

#[link(name = "hurray")]
extern "C" {
    fn hurray_version_string() -> *const c_char;
    fn hurray_version() -> c_uint;
    fn hurray_handle_encode(h: *const BufferHandle, out: *mut c_void, n: usize, err: *mut HurrayError) -> i32;
    fn hurray_handle_decode(bytes: *const c_void, n: usize, out: *mut BufferHandle, err: *mut HurrayError) -> i32;
    fn hurray_policy_create(out: *mut *mut c_void, err: *mut HurrayError) -> i32;
    fn hurray_policy_destroy(p: *mut c_void);
    fn hurray_policy_set_transport(p: *mut c_void, t: c_int, err: *mut HurrayError) -> i32;
    fn hurray_table_validate(bytes: *const c_void, n: usize, policy: *const c_void, err: *mut HurrayError) -> i32;
    fn hurray_handoff_wrap(ctx: *mut c_void, desc: *const BufferDesc, exp: *const c_void, out: *mut Handoff, err: *mut HurrayError) -> i32;
    fn hurray_handoff_check(h: *const Handoff, policy: *const c_void, err: *mut HurrayError) -> i32;
    fn hurray_handoff_release(h: *mut Handoff, err: *mut HurrayError) -> i32;
    fn hurray_dlpack_export_versioned(h: *mut Handoff, dtype: DLDataType, ndim: i32, shape: *const i64, strides: *const i64, byte_offset: u64, out: *mut *mut DLManagedTensorVersioned, err: *mut HurrayError) -> i32;
    fn hurray_dlpack_device_from_dl(t: i32, tag: *mut u8, mc: *mut u8, err: *mut HurrayError) -> i32;
}

static FREES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn free_boxed(_user: *mut c_void, data: *mut c_void) {
    // The memory is a Box<Aligned> leaked below: take it back and drop it.
    drop(Box::from_raw(data as *mut Aligned));
    FREES.fetch_add(1, Ordering::SeqCst);
}

#[repr(C, align(64))]
struct Aligned([f32; 256]);

fn check(cond: bool, what: &str) {
    if !cond {
        eprintln!("rust consumer: FAILED: {}", what);
        std::process::exit(1);
    }
}

fn main() {
    unsafe {
        let v = CStr::from_ptr(hurray_version_string()).to_string_lossy();
        check(hurray_version() == 10000, "hurray_version() is 1.0.0");
        println!("rust consumer: libhurray {}", v);

        // A CUDA handle, 64-byte aligned: fine in-process, refused over IPC.
        let h = BufferHandle { byte_size: 1 << 20, alignment: 64, device_tag: HURRAY_DEVICE_CUDA, ..Default::default() };
        let mut wire = [0u8; 16];
        let mut err = HurrayError::new();
        check(hurray_handle_encode(&h, wire.as_mut_ptr() as *mut c_void, 16, &mut err) == HURRAY_OK, "encode");
        let mut back = BufferHandle::default();
        check(hurray_handle_decode(wire.as_ptr() as *const c_void, 16, &mut back, &mut err) == HURRAY_OK, "decode");
        check(back.byte_size == 1 << 20 && back.device_tag == HURRAY_DEVICE_CUDA, "decode gives the fields back");
        check(hurray_table_validate(wire.as_ptr() as *const c_void, 16, std::ptr::null(), &mut err) == HURRAY_OK, "valid in-process");
        let mut ipc: *mut c_void = std::ptr::null_mut();
        check(hurray_policy_create(&mut ipc, &mut err) == HURRAY_OK, "policy");
        check(hurray_policy_set_transport(ipc, HURRAY_TRANSPORT_IPC, &mut err) == HURRAY_OK, "transport");
        check(hurray_table_validate(wire.as_ptr() as *const c_void, 16, ipc, &mut err) == HURRAY_E_ALIGNMENT, "IPC refuses 64-byte alignment");
        check(err.rule_id() == "BP-ALIGN-IPC", "the refusal names BP-ALIGN-IPC");
        println!("rust consumer: over IPC: {}", err.message());
        hurray_policy_destroy(ipc);

        // Rust-owned memory handed over: released exactly once.
        let mut mem = Box::new(Aligned([0.0; 256]));
        for (i, x) in mem.0.iter_mut().enumerate() {
            *x = i as f32;
        }
        let data = Box::into_raw(mem) as *mut c_void;
        let desc = BufferDesc {
            size: std::mem::size_of::<BufferDesc>() as u32,
            flags: 0,
            handle: BufferHandle { byte_size: 1024, alignment: 64, ..Default::default() },
            data,
            device_ordinal: 0,
            reserved0: 0,
            free_fn: Some(free_boxed),
            free_user: std::ptr::null_mut(),
        };
        let mut ho: Handoff = std::mem::zeroed();
        check(hurray_handoff_wrap(std::ptr::null_mut(), &desc, std::ptr::null(), &mut ho, &mut err) == HURRAY_OK, "wrap");
        check(hurray_handoff_check(&ho, std::ptr::null(), &mut err) == HURRAY_OK, "check");

        // As a DLPack 1.x tensor (float32 [16, 16]), zero-copy.
        let shape = [16i64, 16];
        let mut t: *mut DLManagedTensorVersioned = std::ptr::null_mut();
        check(hurray_dlpack_export_versioned(&mut ho, DLDataType { code: DL_FLOAT, bits: 32, lanes: 1 }, 2, shape.as_ptr(), std::ptr::null(), 0, &mut t, &mut err) == HURRAY_OK, "DLPack export");
        check(ho.release.is_none(), "the handoff moved into the tensor");
        let tensor = &(*t).dl_tensor;
        check(tensor.data == data && tensor.device.device_type == KDL_CPU, "zero-copy CPU tensor");
        let strides = std::slice::from_raw_parts(tensor.strides, 2);
        check(strides == [16, 1], "row-major strides");
        let x = std::slice::from_raw_parts(tensor.data as *const f32, 256);
        let sum: f32 = x.iter().sum();
        check(sum == 32640.0, "the consumer reads the producer's floats");
        check(FREES.load(Ordering::SeqCst) == 0, "nothing freed yet");
        ((*t).deleter.unwrap())(t);
        check(FREES.load(Ordering::SeqCst) == 1, "the deleter freed the memory once");

        // A stale copy of a released handoff never reaches the producer.
        let mut ho2: Handoff = std::mem::zeroed();
        let mem2 = Box::into_raw(Box::new(Aligned([1.0; 256]))) as *mut c_void;
        let desc2 = BufferDesc { data: mem2, ..desc };
        check(hurray_handoff_wrap(std::ptr::null_mut(), &desc2, std::ptr::null(), &mut ho2, &mut err) == HURRAY_OK, "wrap 2");
        let mut stale = ho2;
        check(hurray_handoff_release(&mut ho2, &mut err) == HURRAY_OK, "release");
        check(hurray_handoff_release(&mut stale, &mut err) == HURRAY_E_ALREADY_RELEASED, "stale copy refused");
        check(err.rule_id() == "BP-REL-ONCE", "BP-REL-ONCE named");
        check(FREES.load(Ordering::SeqCst) == 2, "freed exactly once");

        let (mut tag, mut mc) = (0u8, 0u8);
        check(hurray_dlpack_device_from_dl(KDL_CUDA_HOST, &mut tag, &mut mc, &mut err) == HURRAY_OK && tag == 1 && mc == 1, "kDLCUDAHost is (CUDA, HOST_PINNED)");
        println!("rust consumer: OK (DLPack sum {}, {} frees)", sum, FREES.load(Ordering::SeqCst));
    }
}
