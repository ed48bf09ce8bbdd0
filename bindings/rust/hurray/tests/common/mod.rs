// Test helpers shared by the integration tests: an owner of aligned host
// memory that counts its drops.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[repr(C, align(64))]
pub struct Aligned([u8; 256]);

pub struct Owner {
    mem: Box<Aligned>,
    drops: Arc<AtomicUsize>,
}

impl AsRef<[u8]> for Owner {
    fn as_ref(&self) -> &[u8] {
        &self.mem.0
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

pub fn owner(drops: &Arc<AtomicUsize>) -> Owner {
    Owner { mem: Box::new(Aligned([0x5A; 256])), drops: drops.clone() }
}
