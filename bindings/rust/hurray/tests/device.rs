// Devices: native handles and stable identities. The CPU has neither native
// handles (UNSUPPORTED) nor an identity (kind NONE); an identity round-trips
// through the C struct whatever its kind; device_find refuses NONE and
// names BP-DEV-ID for an identity no device has. Where a Vulkan or OpenCL
// device is present (the build tree's plugins: lavapipe, PoCL), its identity
// finds its own ordinal and its native slots are filled; absent, that part
// says so and checks the refusal instead.
use hurray::{
    device_count, device_find, device_identity, device_native, Context, DeviceIdentity, Status, DEVICE_CPU,
};

const DEVICE_VULKAN: u8 = 0x04;
const DEVICE_OPENCL: u8 = 0x05;

#[test]
fn the_cpu_has_no_native_handles_and_no_identity() {
    let ctx = Context::default();
    let err = device_native(&ctx, DEVICE_CPU, 0).unwrap_err();
    assert_eq!(err.status(), Status::UNSUPPORTED);
    assert_eq!(device_identity(&ctx, DEVICE_CPU, 0).unwrap(), DeviceIdentity::None);
    // Only ordinal 0 exists.
    assert!(device_identity(&ctx, DEVICE_CPU, 1).is_err());
}

#[test]
fn identities_round_trip_through_the_c_struct() {
    let all = [
        DeviceIdentity::None,
        DeviceIdentity::Uuid([0xA5; 16]),
        DeviceIdentity::Luid([1, 2, 3, 4, 5, 6, 7, 8]),
        DeviceIdentity::Pci { domain: 0x0001_0002, bus: 0x3b, device: 0x1f, function: 7 },
        DeviceIdentity::Other { kind: 99, bytes: [9; 16] },
    ];
    for id in all.iter() {
        assert_eq!(DeviceIdentity::from_raw(&id.to_raw()), *id);
    }
    let pci = DeviceIdentity::Pci { domain: 0x0001_0002, bus: 0x3b, device: 0x1f, function: 7 }.to_raw();
    assert_eq!(pci.kind, hurray::sys::HURRAY_BACKEND_ID_PCI);
    assert_eq!(&pci.bytes[..8], &[2, 0, 1, 0, 0x3b, 0x1f, 7, 0]);
    assert_eq!(pci.reserved0, 0);
    let luid = DeviceIdentity::Luid([1, 2, 3, 4, 5, 6, 7, 8]).to_raw();
    assert_eq!(luid.kind, hurray::sys::HURRAY_BACKEND_ID_LUID);
    assert_eq!(&luid.bytes[8..], &[0; 8]);
    // A LUID with bytes past its 8 is not one this crate can name: kept whole.
    let mut odd = luid;
    odd.bytes[15] = 1;
    assert!(matches!(DeviceIdentity::from_raw(&odd), DeviceIdentity::Other { kind: 2, .. }));
}

#[test]
fn device_find_refuses_none_and_names_bp_dev_id() {
    let ctx = Context::default();
    let err = device_find(&ctx, DEVICE_CPU, &DeviceIdentity::None).unwrap_err();
    assert_eq!(err.status(), Status::INVALID_ARGUMENT);
    assert!(err.message().contains("BP-DEV-ID"), "{}", err.message());
    let err = device_find(&ctx, DEVICE_CPU, &DeviceIdentity::Uuid([7; 16])).unwrap_err();
    assert_eq!(err.status(), Status::DEVICE_UNAVAILABLE);
    assert!(err.message().starts_with("BP-DEV-ID"), "{}", err.message());
}

fn check_device(tag: u8, name: &str, filled: &[usize]) {
    let ctx = Context::default();
    let n = match device_count(&ctx, tag) {
        Ok(n) if n > 0 => n,
        other => {
            println!("{name}: no device ({other:?}): checking the refusals only");
            assert!(device_native(&ctx, tag, 0).is_err());
            assert!(device_identity(&ctx, tag, 0).is_err());
            return;
        }
    };
    let native = device_native(&ctx, tag, 0).unwrap();
    for &slot in filled {
        assert!(!native.get(slot).is_null(), "{name}: native slot {slot} is null");
    }
    assert!(native.get(8).is_null());
    assert_eq!(native.as_slice().len(), 8);
    assert!(device_native(&ctx, tag, n).is_err());
    match device_identity(&ctx, tag, 0).unwrap() {
        DeviceIdentity::None => {
            println!("{name}: device 0 has no identity");
            assert_eq!(device_find(&ctx, tag, &DeviceIdentity::None).unwrap_err().status(), Status::INVALID_ARGUMENT);
        }
        id => {
            let ordinal = device_find(&ctx, tag, &id).unwrap();
            assert_eq!(device_identity(&ctx, tag, ordinal).unwrap(), id, "{name}: found the wrong device");
        }
    }
}

#[test]
fn a_vulkan_device_has_its_handles_and_finds_itself() {
    // instance, physical device, device, queue
    check_device(DEVICE_VULKAN, "vulkan", &[0, 1, 2, 3]);
}

#[test]
fn an_opencl_device_has_its_handles_and_finds_itself() {
    // platform, device, context, command queue
    check_device(DEVICE_OPENCL, "opencl", &[0, 1, 2, 3]);
}

#[test]
fn identities_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<DeviceIdentity>();
}
