use hurray::{Buffer, Context, Handle};

fn main() -> Result<(), hurray::Error> {
    // A handle from the wire: 1 MiB of CUDA memory declared 32-byte aligned.
    let wire = Handle { byte_size: 1 << 20, alignment: 32, device_tag: 0x01, ..Handle::default() }
        .encode();
    let err = Handle::decode(&wire)?.validate(None).unwrap_err();
    println!("refused: {} (rule {})", err.message(), err.rule_id());

    // A buffer handed to one consumer: released exactly once, when it drops.
    let mut buf = Buffer::alloc_host(&Context::default(), 4096, 64, false)?;
    buf.write(0, b"hello")?;
    let handoff = buf.export()?;
    let bytes = handoff.as_slice().expect("CPU memory is host-addressable");
    println!("the consumer sees {:?}", String::from_utf8_lossy(&bytes[..5]));
    Ok(())
}
